"""dlt 1.31's load-aware members of ``Dataset`` and ``Relation``: which loads a dataset
holds (``load_ids``, ``latest_load_id``, ``loads_table``) and rows of given loads
(``from_loads``, ``with_load_id_col``), plus the schema a relation reads (``columns_schema``).

Kept apart from ``dataset.py`` so the query machinery stays one idea; these are mixins that
only build SQL on top of the relation's ``_wrap`` and the dataset's ``query``.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from loadstone.destinations.query_results import quote_identifier, replace_placeholders
from loadstone.exceptions.destinations import NotATableRelation

if TYPE_CHECKING:
    import pyarrow as pa

    from loadstone.destinations.contract import Row
    from loadstone.schema import Schema


class _Result(Protocol):
    columns: list[str]
    _arrow: pa.Table | None


class Relation(Protocol):
    """What these members use of ``dataset.Relation`` (named by protocol: importing it
    would make the two modules a cycle)."""

    sql: str
    table: str | None
    _origin: str | None
    _params: tuple[object, ...]

    @property
    def _dataset(self) -> Dataset: ...
    @property
    def columns(self) -> list[str]: ...
    def _wrap(self, sql: str, params: Sequence[object] = ()) -> Relation: ...
    def _run(self, want_arrow: bool = False) -> _Result: ...
    def fetchall(self) -> list[Row]: ...
    def select(self, *columns: str) -> Relation: ...
    def where(
        self, column_or_expr: str, operator: str | None = None, value: Any = None
    ) -> Relation: ...
    def with_load_id_col(self) -> Relation: ...
    def _whole_table(self, member: str) -> str: ...
    @property
    def columns_schema(self) -> dict[str, dict[str, Any]]: ...


class Dataset(Protocol):
    """What these members use of ``dataset.Dataset``."""

    dataset_name: str
    _pipeline: Any  # dataset.DatasetOwner

    @property
    def schema(self) -> Schema: ...
    @property
    def tables(self) -> list[str]: ...
    @property
    def stored_tables(self) -> list[str]: ...
    def qualified(self, table: str) -> str: ...
    def query(self, sql: str, *params: object) -> Relation: ...
    def table(self, name: str) -> Relation: ...
    def load_ids(self, schema_name: str | None = None) -> list[str]: ...


LOADS_TABLE = "_dlt_loads"
LOAD_ID = "_dlt_load_id"


def root_chain(schema: Schema, table: str) -> list[str]:
    """``table`` and its ancestors up to the root table (the one with ``_dlt_load_id``)."""
    chain = [table]
    tables: Mapping[str, Any] = schema.tables
    while (parent := (tables.get(chain[-1]) or {}).get("parent")) is not None:
        if parent not in tables or parent in chain:
            break
        chain.append(str(parent))
    return chain


def arrow_data_type(field: Any) -> str | None:
    """dlt's data type for an Arrow field of a query's result (None when there is none)."""
    import pyarrow as pa

    kind = field.type
    checks = (
        (pa.types.is_integer, "bigint"),
        (pa.types.is_floating, "double"),
        (pa.types.is_boolean, "bool"),
        (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "text"),
        (pa.types.is_timestamp, "timestamp"),
        (pa.types.is_date, "date"),
        (pa.types.is_time, "time"),
        (pa.types.is_decimal, "decimal"),
        (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t), "binary"),
    )
    return next((name for check, name in checks if check(kind)), None)


def columns_known(tables: Mapping[str, Any], origin: str | None) -> dict[str, Any]:
    """Column hints by name: the origin table's, or (for SQL of the user's) the columns
    whose name only one table of the schema has."""
    if origin is not None:
        return dict(tables.get(origin, {}).get("columns", {}))
    seen: dict[str, list[Any]] = {}
    for table in tables.values():
        for name, column in table.get("columns", {}).items():
            seen.setdefault(name, []).append(column)
    return {name: columns[0] for name, columns in seen.items() if len(columns) == 1}


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def inline_params(sql: str, params: Sequence[object]) -> str:
    """``sql`` with each ``%s`` placeholder (outside quotes) replaced by its value."""
    values = iter(params)
    return replace_placeholders(sql, lambda: _literal(next(values)))


class DatasetLoads:
    """``Dataset`` members that read ``_dlt_loads`` (completed loads have status 0)."""

    def load_ids(self: Dataset, schema_name: str | None = None) -> list[str]:
        """Completed load ids, oldest first (dlt's order)."""
        if LOADS_TABLE not in self.stored_tables:
            return []
        sql = f"SELECT load_id FROM {self.qualified(LOADS_TABLE)} WHERE status = 0"
        params: tuple[object, ...] = ()
        if schema_name is not None:
            sql += " AND schema_name = %s"
            params = (schema_name,)
        rows = self.query(sql + " ORDER BY load_id ASC", *params).fetchall()
        return [str(row[0]) for row in rows]

    def latest_load_id(self: Dataset, schema_name: str | None = None) -> str | None:
        ids = self.load_ids(schema_name)
        return max(ids) if ids else None

    def loads_table(self: Dataset) -> Relation:
        """``_dlt_loads`` as a relation (a method in dlt 1.31, not a property)."""
        return self.table(LOADS_TABLE)

    @property
    def schema(self: Dataset) -> Schema:
        schema: Schema = self._pipeline.default_schema
        return schema

    @property
    def schemas(self: Dataset) -> tuple[Schema, ...]:
        return (self._pipeline.default_schema,)

    @property
    def destination_dialect(self: Dataset) -> str:
        """The SQL dialect of the destination (its name: ``duckdb``, ``postgres``)."""
        return str(self._pipeline.destination.name)

    def is_same_dataset(self: Dataset, other: Dataset) -> bool:
        """Both read the same dataset of the same destination."""
        mine = self._pipeline.destination
        theirs = other._pipeline.destination
        return (
            self.dataset_name == other.dataset_name
            and mine.name == theirs.name
            and dict(mine.config) == dict(theirs.config)
        )


class RelationLoads:
    """``Relation`` members about loads and the schema; they need a whole-table relation."""

    def _whole_table(self: Relation, member: str) -> str:
        if self.table is None:
            raise NotATableRelation(
                f"`{member}()` only works on relations created via .table(). "
                "It can't be applied to arbitrary relation."
            )
        return self.table

    def with_load_id_col(self: Relation) -> Relation:
        """The table's rows with ``_dlt_load_id``; a nested table takes it from its root
        table, joined through the ``_dlt_parent_id`` chain as dlt does."""
        table = self._whole_table("with_load_id_col")
        chain = root_chain(self._dataset.schema, table)
        if len(chain) == 1:
            return self
        ds = self._dataset
        cols = ", ".join(
            f"{quote_identifier(table)}.{quote_identifier(c)} AS {quote_identifier(c)}"
            for c in self.columns
        )
        sql = f"SELECT {cols}, {quote_identifier(chain[-1])}.{quote_identifier(LOAD_ID)} AS {quote_identifier(LOAD_ID)} "
        sql += f"FROM {ds.qualified(table)} AS {quote_identifier(table)}"
        for child, parent in itertools.pairwise(chain):
            sql += (
                f" INNER JOIN {ds.qualified(parent)} AS {quote_identifier(parent)} ON "
                f'{quote_identifier(child)}."_dlt_parent_id" = {quote_identifier(parent)}."_dlt_id"'
            )
        return self._wrap(sql)  # a whole table's relation has no parameters to carry

    def from_loads(
        self: Relation, load_ids: Collection[str], add_load_id_column: bool = False
    ) -> Relation:
        """Rows of the given loads only; ``add_load_id_column`` keeps ``_dlt_load_id`` on a
        nested table's rows (a root table has it anyway)."""
        table = self._whole_table("from_loads")
        ids = [str(i) for i in load_ids]
        with_id = self.with_load_id_col()
        marks = ", ".join("%s" for _ in ids) or "NULL"
        filtered = with_id._wrap(
            f"SELECT * FROM ({with_id.sql}) AS q WHERE {quote_identifier(LOAD_ID)} IN ({marks})",
            ids,
        )
        if add_load_id_column or len(root_chain(self._dataset.schema, table)) == 1:
            return filtered
        return filtered.select(*self.columns)

    @property
    def columns_schema(self: Relation) -> dict[str, dict[str, Any]]:
        """``{column: {"name", "data_type", "nullable"}}`` for the relation's columns: the
        schema's hints when the column is one of the table it reads, else the type the
        destination answers with (``{"name"}`` alone when it names none)."""
        tables = self._dataset.schema.tables
        known = columns_known(tables, self._origin)
        result = self._wrap(f"SELECT * FROM ({self.sql}) AS q LIMIT 0")._run(want_arrow=True)
        arrow = result._arrow
        out: dict[str, dict[str, Any]] = {}
        for name in result.columns:
            column = known.get(name)
            entry: dict[str, Any] = {"name": name}
            if column is not None:
                entry.update({k: column[k] for k in ("data_type", "nullable") if k in column})
            elif arrow is not None and (data_type := arrow_data_type(arrow.schema.field(name))):
                entry["data_type"] = data_type
            out[name] = entry
        return out

    @property
    def schema(self: Relation) -> dict[str, Any]:
        """dlt's relation schema: ``{"columns": columns_schema}``."""
        return {"columns": self.columns_schema}

    def filter(
        self: Relation, column_or_expr: str, operator: str | None = None, value: Any = None
    ) -> Relation:
        """dlt's other name for ``where``."""
        return self.where(column_or_expr, operator, value)

    def to_sql(self: Relation, pretty: bool = False) -> str:
        """The relation's SQL with its values written in (runnable as is). The text is
        loadstone's: dlt's comes from sqlglot, one aliased column at a time."""
        return inline_params(self.sql, self._params)

    @property
    def query_dialect(self: Relation) -> str:
        return str(self._dataset._pipeline.destination.name)

    @property
    def destination_dialect(self: Relation) -> str:
        """The SQL dialect of the destination (its name: ``duckdb``, ``postgres``)."""
        return str(self._dataset._pipeline.destination.name)
