"""The normalizer contract (:mod:`loadstone.normalizers.contract`): what a normalizer plugin
(entry-point group ``loadstone.normalizers``) is given and returns.

It lies below the steps, beside :mod:`loadstone.destinations` (the destination contract), so
that the run's bookkeeping (:mod:`loadstone.runtime`) can record a normalizer's progress
without importing the normalize step.
"""
