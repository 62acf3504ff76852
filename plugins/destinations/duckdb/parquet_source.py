"""The Parquet files of one table as a SQL source DuckDB can select from.

Files of one table may have different column sets (each normalizer task writes what it saw),
so the source reads them ``union_by_name`` and a schema column absent from every file is
selected as a typed NULL. Files are read in name order so the first row of the package stays
first (merge keeps the first of duplicate keys, as dlt does).

One exception to reading Parquet directly: DuckDB turns a DECIMAL wider than 38 digits into
DOUBLE, which would lose digits of 256-bit ``wei`` values. Such files are read with pyarrow,
the wide decimals cast to exact decimal text, and handed to DuckDB as an Arrow table.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from loadstone.destinations.contract import LoadFileSpec, load_files
from loadstone.plugins.destinations.duckdb.sql import MAX_DECIMAL_PRECISION, literal, quote
from loadstone.plugins.destinations.sql.table_files import TableFiles

if TYPE_CHECKING:  # pyarrow is imported where files are read, so that a DuckDB client that
    import pyarrow as pa  # reads none (show, info, report) imports neither it nor numpy

_counter = itertools.count()


@attrs.frozen
class ParquetSource(TableFiles):
    """The files of one table and the union of their columns."""

    column_types: dict[str, pa.DataType] = attrs.field(factory=dict)

    @classmethod
    def from_spec(cls, table: str, spec: LoadFileSpec) -> ParquetSource:
        import pyarrow.parquet as pq

        files = load_files(spec)
        column_types: dict[str, pa.DataType] = {}
        for file in files:
            for field in pq.read_schema(file):
                column_types.setdefault(field.name, field.type)
        return cls(table, tuple(files), column_types)

    def _wide_decimals(self) -> list[str]:
        import pyarrow as pa

        return [
            name
            for name, type_ in self.column_types.items()
            if pa.types.is_decimal(type_) and type_.precision > MAX_DECIMAL_PRECISION
        ]

    def from_clause(self, conn: object) -> str:
        """A FROM item for this source (registers an Arrow view when wide decimals need it)."""
        wide = self._wide_decimals()
        if not wide:
            files = ", ".join(literal(str(f)) for f in self.files)
            return f"read_parquet([{files}], union_by_name = true)"
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = []
        for file in self.files:
            data = pq.read_table(file)
            for name in wide:
                if name in data.column_names:
                    idx = data.column_names.index(name)
                    data = data.set_column(idx, name, data.column(name).cast(pa.string()))
            tables.append(data)
        combined = pa.concat_tables(tables, promote_options="permissive")
        view = f"__loadstone_src_{next(_counter)}"
        conn.register(view, combined)  # type: ignore[attr-defined]  # duckdb has no stubs for it
        return quote(view)

    def select_list(self, columns: Sequence[tuple[str, str]]) -> str:
        """``CAST(col AS type)`` per target (name, DuckDB type); NULL when no file has it."""
        parts = []
        for name, duck_type in columns:
            source = quote(name) if name in self.column_types else "NULL"
            parts.append(f"CAST({source} AS {duck_type}) AS {quote(name)}")
        return ", ".join(parts)
