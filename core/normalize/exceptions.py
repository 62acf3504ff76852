"""``loadstone.normalize.exceptions``: dlt's ``dlt.normalize.exceptions`` names, loadstone's
errors (:mod:`loadstone.exceptions`): ``NormalizeException`` is ``NormalizeError``."""

from __future__ import annotations

from loadstone.exceptions import NormalizeError, NormalizeJobFailed

NormalizeException = NormalizeError

__all__ = ["NormalizeException", "NormalizeJobFailed"]
