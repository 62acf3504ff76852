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


class PackageDataError(LoadstoneError):
    """A package failed because of its own data or schema, not because of its surroundings.

    A value the destination cannot convert, a primary key the data lacks, a column that
    collides with another, a contract the data breaks: running the same package again fails
    the same way, so keeping it pending would fail every later run of the pipeline (issue 22).
    The pipeline sets such a package aside (``failed_packages/``, listed by ``info``) and
    says why; the next run goes on. Failures outside the data (disk, network, a server that
    is down) are not this class: their package stays pending and is retried.
    """
