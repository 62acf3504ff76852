"""The ``connectorx`` backend: the query read by connectorx (Rust) straight into Arrow.

connectorx opens its own connection from a URL (``postgresql://``, ``mysql://``: the
engine's URL without the SQLAlchemy driver) and takes the query as text: it has no
parameters, so the SELECT is compiled with its values written by SQLAlchemy's dialect as
typed literals (``'2024-01-01 00:14:00+00:00'`` for a cursor on a ``timestamptz``), the one
backend where that is so. Pages are slices of connectorx's Arrow table, ``chunk_size``
rows each: connectorx reads the whole result first, as dlt has it do (its Arrow stream would
type a PostgreSQL ``int`` as int64, the whole read as int32). As in dlt, a column's hint is
what its Arrow type says (an ``int`` is ``bigint`` with precision 32, a MySQL ``BIT`` is
binary) with the reflected hint over it (``schema_types.arrow_overlay``).
``backend_kwargs`` go to ``connectorx.read_sql`` (``protocol``, ``partition_on`` ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from loadstone.exceptions import SqlDatabaseError

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlalchemy as sa

#: SQLAlchemy dialect -> connectorx's URL scheme
_SCHEMES = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}
#: read_sql's arguments the backend sets itself
_OWN = frozenset({"conn", "query", "return_type", "batch_size"})


def connection_url(engine: sa.Engine) -> str:
    """The engine's URL as connectorx reads it (the scheme without SQLAlchemy's driver)."""
    scheme = _SCHEMES.get(engine.dialect.name)
    if scheme is None:
        raise SqlDatabaseError(
            f"sql_database: backend='connectorx' does not read {engine.dialect.name} databases"
        )
    url = engine.url.set(drivername=scheme)
    return url.render_as_string(hide_password=False)


def query_text(engine: sa.Engine, query: sa.Select | sa.TextClause) -> str:
    """The query with its values written as the dialect's typed literals."""
    compiled = query.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True})
    return str(compiled)


def connectorx_pages(
    engine: sa.Engine,
    query: sa.Select | sa.TextClause,
    chunk_size: int,
    backend_kwargs: Mapping[str, object] | None,
) -> Iterator[pa.Table]:
    """The rows of ``query`` as Arrow tables of at most ``chunk_size`` rows."""
    import connectorx
    import pyarrow as pa

    options = dict(backend_kwargs or {})
    clash = sorted(_OWN & options.keys())
    if clash:
        raise TypeError(f"backend_kwargs cannot set {', '.join(clash)} (the backend sets them)")
    read_sql: Callable[..., pa.Table] = connectorx.read_sql  # typed per return_type
    try:
        table = read_sql(
            connection_url(engine), query_text(engine, query), return_type="arrow", **options
        )
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as error:  # a Rust panic (a type connectorx cannot read) is one too
        if isinstance(error, (RuntimeError, TypeError)):
            raise
        raise RuntimeError(f"connectorx: {type(error).__name__}: {error}") from None
    for batch in table.to_batches(max_chunksize=chunk_size):
        if batch.num_rows:
            yield pa.Table.from_batches([batch])
