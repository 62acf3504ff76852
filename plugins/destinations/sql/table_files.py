"""The load files of one table, as the SQL loaders read a request's entry.

One rule for DuckDB and PostgreSQL: the entry's Parquet files (``load_files``), in name order
so the package's first row stays first (merge keeps the first of duplicate keys, as dlt
does). A loader that needs more of the files (DuckDB: their columns) extends this class.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from loadstone.destinations.contract import LoadFileSpec, load_files


@attrs.frozen
class TableFiles:
    """The files of one table of a package."""

    table: str
    files: tuple[Path, ...]

    @classmethod
    def from_spec(cls, table: str, spec: LoadFileSpec) -> TableFiles:
        return cls(table, tuple(load_files(spec)))

    @property
    def is_empty(self) -> bool:
        return not self.files
