"""The root of every error, the root of errors caused by a package's own data, and the
wording helpers the messages share."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


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


def os_error_text(error: OSError) -> str:
    """A one-line reason for an OSError; disk full said in plain words."""
    if error.errno == errno.ENOSPC:
        return "no space left on the device (disk full)"
    return error.strerror or str(error)


def one_line(error: BaseException) -> str:
    """The first line of an error's text; OS errors in plain words (disk full)."""
    if isinstance(error, OSError) and error.errno is not None:
        name = f"{error.filename}: " if error.filename else ""
        return f"{name}{os_error_text(error)}"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
