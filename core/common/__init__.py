"""``loadstone.common``: the paths a dlt program imports as ``dlt.common`` (issue 36).

A program ports by ``import loadstone as dlt`` and ``from dlt.common...`` ->
``from loadstone.common...``. Each module of this package only re-exports loadstone's own
objects under dlt's names (``docs/migrating.md``, "Import paths", lists them and says where a
name is an alias of a loadstone class of another name):

``pendulum``
    the pendulum library itself, as ``from dlt.common import pendulum`` gives it
``typing``, ``schema``, ``schema.typing``, ``pipeline``, ``destination``,
``configuration``, ``configuration.specs``, ``exceptions``
    dlt's type names, the ``Schema``, ``LoadInfo``, ``Destination``, configuration specs and
    errors

This package sits in the top layer, beside ``loadstone/__init__``: it imports from every
layer and nothing of loadstone imports it.
"""

from __future__ import annotations

import pendulum

__all__ = ["pendulum"]
