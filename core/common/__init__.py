"""``loadstone.common``: the paths a dlt program imports as ``dlt.common`` (issue 36).

A program ports by ``import loadstone as dlt`` and ``from dlt.common...`` ->
``from loadstone.common...``. Each module of this package only re-exports loadstone's own
objects under dlt's names (``docs/migrating.md``, "Import paths", lists them and says where a
name is an alias of a loadstone class of another name):

``pendulum``
    the pendulum library itself, as ``from dlt.common import pendulum`` gives it; as in dlt
    1.31, its local timezone is UTC from then on (``pendulum.now()``, ``pendulum.today()``),
    whatever the machine's zone, so that a day a source counts from is a UTC day
``json``, ``logger``, ``utils``
    dlt's JSON functions (orjson, dlt's encoding of values), logging to the ``loadstone``
    logger, ids and digests
``libs.pydantic``, ``storages.fsspec_filesystem``
    ``DltConfig`` (a pydantic model's ``dlt_config``), ``FileItemDict``
``typing``, ``schema``, ``schema.typing``, ``pipeline``, ``destination``,
``configuration``, ``configuration.specs``, ``exceptions``
    dlt's type names, the ``Schema``, ``LoadInfo``, ``Destination``, configuration specs and
    errors

This package sits in the top layer, beside ``loadstone/__init__``: it imports from every
layer and nothing of loadstone imports it.
"""

from __future__ import annotations

import pendulum

from loadstone.common import json, logger

pendulum.set_local_timezone(pendulum.UTC)

__all__ = ["json", "logger", "pendulum"]
