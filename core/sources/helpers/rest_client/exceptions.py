"""``loadstone.sources.helpers.rest_client.exceptions``: the names dlt 1.31's module has, so
``from dlt.sources.helpers.rest_client.exceptions import IgnoreResponseException`` ports.

A response hook raises ``IgnoreResponseException`` to end the endpoint without records;
``PaginatorSetupError`` is a paginator configured wrongly (a ``ValueError``, as dlt's). An
unknown paginator name is refused when the source's config is read (a ``TypeError``; dlt's
config check raises there too), so ``PaginatorNotFound`` is the paginators' error here.
"""

from __future__ import annotations

from loadstone.exceptions import IgnoreResponseException, PaginatorError

#: dlt's name of :class:`loadstone.exceptions.PaginatorError`
PaginatorSetupError = PaginatorError
#: dlt's name; loadstone refuses an unknown paginator as a ``TypeError`` (see the module)
PaginatorNotFound = PaginatorError

__all__ = ["IgnoreResponseException", "PaginatorNotFound", "PaginatorSetupError"]
