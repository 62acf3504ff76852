"""``loadstone.pipeline``: the package behind dlt's ``from dlt.pipeline.exceptions import ...``.

``loadstone.pipeline`` the attribute stays the function that makes a pipeline:
``loadstone/__init__`` imports this (empty) package first and lets its own lazy table answer
the name, so a later ``import loadstone.pipeline.exceptions`` does not replace the function
by this package. The pipeline itself lives in :mod:`loadstone.pipelines`.
"""
