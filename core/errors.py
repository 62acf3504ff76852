"""The root of loadstone's exceptions.

Every error a user can meet derives from :class:`LoadstoneError`, so ``except
loadstone.LoadstoneError`` catches all of them. Each module defines the errors of its own idea
next to the code that raises them (naming errors in ``loadstone.naming``, schema errors in
``loadstone.schema``, ...) and carries the context a user needs: the table, column, value,
file or line involved.
"""

from __future__ import annotations


class LoadstoneError(Exception):
    """Base class of every loadstone error."""
