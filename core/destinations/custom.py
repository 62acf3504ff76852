"""A destination made of a function (dlt's ``@dlt.destination``): the contract half.

A sink function receives the normalized rows of each table in batches::

    @loadstone.destination(batch_size=10)
    def my_sink(items, table) -> None: ...

    pipeline = loadstone.pipeline("p", destination=my_sink)

The decorator only records the function and its options on a :class:`SinkDestination`: the
loader that reads the package's files, cuts them into batches, remembers which batches the
function accepted and injects its configured arguments is the plugin registered as the
destination ``destination`` (``plugins/destinations/sink``), found through the plugin manager
like every other destination. The options are those of dlt 1.31's decorator, stored in the
destination's ``config`` under dlt's names (``destination_callable``, ``batch_size`` ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast, overload

import attrs

from loadstone.destinations.contract import Destination

__all__ = ["SINK_DESTINATION_TYPE", "SinkDestination", "destination", "sink_destination"]

#: the name the sink plugin registers its destination under (dlt's destination type)
SINK_DESTINATION_TYPE = "destination"
#: the loader file formats a sink receives (dlt's): dicts of typed values, or Arrow batches
SINK_FILE_FORMATS = ("typed-jsonl", "parquet")

SinkFunction = Callable[..., Any]


@attrs.frozen
class SinkDestination(Destination):
    """A destination that calls a function; calling it gives a configured copy, as dlt's
    decorated function gives a destination (``my_sink(api_key="...")``)."""

    def __call__(self, *, destination_name: str | None = None, **config: object) -> SinkDestination:
        merged = {**self.config, **{k: v for k, v in config.items() if v is not None}}
        return attrs.evolve(self, config=merged, name=destination_name or self.name)


def _base() -> Destination:
    from loadstone.plugin_manager import get_destination

    # the plugin manager checks a destination as far as its name (named by protocol)
    return cast(Destination, get_destination(SINK_DESTINATION_TYPE))


def sink_destination(
    func: SinkFunction,
    *,
    name: str | None = None,
    batch_size: int = 10,
    loader_file_format: str | None = None,
    naming_convention: str = "direct",
    skip_dlt_columns_and_tables: bool = True,
    max_table_nesting: int = 0,
    **config: object,
) -> SinkDestination:
    """The destination that hands ``func`` the rows of each table, ``batch_size`` at a time
    (``0``: the path of each of the table's load files, as dlt 1.31).

    Arguments and their defaults are dlt 1.31's; ``config`` holds values of the function's
    own extra arguments (else read from ``destination.<name>.<argument>``) and dlt's options
    that change nothing here (``max_parallel_load_jobs``, ``loader_parallelism_strategy``:
    tables are sent one after the other, one of the orders dlt's threads may take).
    """
    if not callable(func):
        raise TypeError(f"a custom destination needs a function, got {func!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 0:
        raise ValueError(
            f"batch_size must be a whole number of rows (0: the function receives each load "
            f"file's path instead), got {batch_size!r}"
        )
    file_format = loader_file_format or SINK_FILE_FORMATS[0]
    if file_format not in SINK_FILE_FORMATS:
        raise ValueError(
            f"loader_file_format {file_format!r}: a custom destination receives "
            f"{' or '.join(SINK_FILE_FORMATS)}"
        )
    base = _base()
    options: dict[str, object] = {
        "destination_callable": func,
        "batch_size": batch_size,
        "loader_file_format": file_format,
        "skip_dlt_columns_and_tables": bool(skip_dlt_columns_and_tables),
        "max_table_nesting": max_table_nesting,
        **{key: value for key, value in config.items() if value is not None},
    }
    return SinkDestination(
        name=name or str(getattr(func, "__name__", SINK_DESTINATION_TYPE)),
        capabilities=attrs.evolve(
            base.capabilities,
            preferred_loader_file_format=file_format,
            max_table_nesting=max_table_nesting,
        ),
        client_class=base.client_class,
        config=options,
        naming_convention=naming_convention,
        description=base.description,
    )


@overload
def destination(func_or_name: SinkFunction, /, **options: Any) -> SinkDestination: ...


@overload
def destination(
    func_or_name: None = None, /, **options: Any
) -> Callable[[SinkFunction], SinkDestination]: ...


def destination(
    func_or_name: SinkFunction | None = None,
    /,
    *,
    loader_file_format: str | None = None,
    batch_size: int = 10,
    name: str | None = None,
    naming_convention: str = "direct",
    skip_dlt_columns_and_tables: bool = True,
    max_table_nesting: int = 0,
    spec: type | None = None,
    max_parallel_load_jobs: int | None = None,
    loader_parallelism_strategy: str | None = None,
    **kwargs: Any,
) -> SinkDestination | Callable[[SinkFunction], SinkDestination]:
    """dlt's ``@dlt.destination``: ``@destination`` / ``@destination(batch_size=...)`` over a
    sink function, or ``destination(func, ...)`` called as a function.

    ``spec``: a class whose attributes are defaults of the function's configured arguments
    (the loader reads it, as it reads the other arguments).
    """
    if isinstance(func_or_name, str):
        raise TypeError(
            f"destination({func_or_name!r}): give the sink function (a destination by name is "
            f"passed to pipeline(destination=...) as a string)"
        )

    def wrap(func: SinkFunction) -> SinkDestination:
        return sink_destination(
            func,
            name=name,
            batch_size=batch_size,
            loader_file_format=loader_file_format,
            naming_convention=naming_convention,
            skip_dlt_columns_and_tables=skip_dlt_columns_and_tables,
            max_table_nesting=max_table_nesting,
            max_parallel_load_jobs=max_parallel_load_jobs,
            loader_parallelism_strategy=loader_parallelism_strategy,
            spec=spec,
            **kwargs,
        )

    return wrap(func_or_name) if func_or_name is not None else wrap
