"""Helpers for the normalizer tests: a stand-in load package and readers of the output.

The stand-in has exactly the attributes the normalizer contract (``loadstone.normalizers.contract``)
promises, so these tests pin the contract rather than one package implementation.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.parquet as pq

FIXTURES = Path(__file__).parent / "fixtures" / "relational"


@attrs.frozen
class StandInFile:
    path: Path
    table_name: str
    source: str | None = None
    first_line: int = 1


@attrs.define
class StandInPackage:
    """The smallest thing that satisfies the normalizer contract's package side."""

    root: Path
    load_id: str = "1700000000.123456"
    files: list[StandInFile] = attrs.field(factory=list)
    table_hints: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    @property
    def normalized_dir(self) -> Path:
        return self.root / "normalized"

    def extracted_files(self) -> list[StandInFile]:
        return list(self.files)

    def add_jsonl(
        self, table: str, records: Iterable[Any], *, gz: bool = False, name: str | None = None
    ) -> Path:
        folder = self.root / "extracted"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (name or f"{table}-{len(self.files)}.jsonl{'.gz' if gz else ''}")
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        if gz:
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
        self.files.append(StandInFile(path, table))
        return path

    def add_raw(self, table: str, text: str, name: str = "raw.jsonl") -> Path:
        folder = self.root / "extracted"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(text, encoding="utf-8")
        self.files.append(StandInFile(path, table))
        return path


def snake_case(max_length: int | None = None) -> Any:
    from loadstone.plugins.naming.snake_case import NamingConvention

    return NamingConvention(max_length=max_length)


def read_table(result: Any, table: str) -> list[dict[str, Any]]:
    """All rows of one normalized table (files combined by column name), in file order."""
    output = result.tables[table]
    tables = [pq.read_table(f) for f in sorted(output.files)]
    if not tables:
        return []
    combined = pa.concat_tables(tables, promote_options="default")
    return combined.to_pylist()


def schema_tables(result: Any) -> Mapping[str, Any]:
    schema = result.schema
    data = schema if isinstance(schema, Mapping) else schema.to_dict()
    return data["tables"]


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


__all__ = [
    "FIXTURES",
    "StandInPackage",
    "load_fixture",
    "read_table",
    "schema_tables",
    "snake_case",
]
