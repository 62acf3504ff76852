"""Step two: normalize. The contract a normalizer plugin implements (:mod:`.contract`).

The normalizer itself is a plugin (``loadstone.plugins.normalizers.relational``); the core
only says what a normalizer is handed and what it returns.
"""
