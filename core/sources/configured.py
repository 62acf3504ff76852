"""The built-in sources take their arguments from configuration, as dlt's do.

dlt 1.31 resolves every argument with a plain default the caller did not pass under the
source's keys, most specific first: ``sources.<section>.<name>.<arg>``,
``sources.<section>.<arg>``, ``sources.<arg>``, ``<arg>`` (the rule of
:mod:`loadstone.extract.injection`). So ``backend = "pyarrow"`` in ``[sources.sql_database]``
of config.toml makes every table read through Arrow, ``SOURCES__SQL_DATABASE__ORDERS__CHUNK_SIZE``
sizes the pages of ``sql_table(table="orders")`` alone (its resource is named after the
table), and ``file_glob = "*.csv"`` in ``[sources.filesystem]`` is ``filesystem()``'s glob. A
value passed in code wins. The arguments a source looks up itself (credentials, a bucket
URL) keep their own lookup.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from loadstone.extract.injection import inject

F = TypeVar("F", bound=Callable[..., Any])


def configured(
    resource_name: Callable[[dict[str, Any]], str], own: tuple[str, ...] = ("credentials",)
) -> Callable[[F], F]:
    """The function called with its unpassed arguments taken from configuration;
    ``resource_name(passed)`` names the source or resource whose keys are looked up, the
    arguments in ``own`` are left to the function's own lookup."""

    def wrap(func: F) -> F:
        signature = inspect.signature(func)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            given = dict(signature.bind_partial(*args, **kwargs).arguments)
            for name in own:  # passed as they are: the function resolves them itself
                given.setdefault(name, signature.parameters[name].default)
            return func(**inject(func, resource_name(given), (), given))

        return call  # type: ignore[return-value]  # functools.wraps keeps func's signature

    return wrap
