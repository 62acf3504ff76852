"""``sql_database`` and ``sql_table`` take their arguments from configuration, as dlt's do.

dlt 1.31 resolves every argument with a plain default the caller did not pass (``backend``,
``chunk_size``, ``reflection_level``, ``table_names``, ``schema`` ...) under the source's
keys, most specific first: ``sources.sql_database.<table>.<arg>`` (``sql_table`` only: its
resource is named after the table), ``sources.sql_database.<arg>``, ``sources.<arg>``,
``<arg>``. So ``backend = "pyarrow"`` in ``[sources.sql_database]`` of config.toml makes
every table read through Arrow, and ``SOURCES__SQL_DATABASE__ORDERS__CHUNK_SIZE=1000`` sizes
the pages of ``orders`` alone. A value passed in code wins. The credentials keep their own
lookup (``sources.sql_database.credentials``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from loadstone import config
from loadstone.extract.injection import inject

F = TypeVar("F", bound=Callable[..., Any])


def configured(resource_name: Callable[[dict[str, Any]], str]) -> Callable[[F], F]:
    """The function called with its unpassed arguments taken from configuration;
    ``resource_name(passed)`` names the source or resource whose keys are looked up."""

    def wrap(func: F) -> F:
        signature = inspect.signature(func)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            given = dict(signature.bind_partial(*args, **kwargs).arguments)
            given.setdefault("credentials", config.value)  # resolved by the source itself
            return func(**inject(func, resource_name(given), (), given))

        return call  # type: ignore[return-value]  # functools.wraps keeps func's signature

    return wrap
