"""The normalizer contract: what the pipeline hands a normalizer and what it gets back.

A normalizer plugin (entry point group ``loadstone.normalizers``) provides an object with::

    normalize(package, schema, context) -> NormalizeResult

``package`` (a :class:`loadstone.storage.load_package.LoadPackage` or anything shaped like it) has

* ``load_id: str``;
* ``extracted_files() -> list[ExtractedFile]``: each has ``path`` (JSONL, maybe ``.gz``; one
  source item per line) and ``table_name`` (the *source*, not normalized, table name), and
  optionally ``source`` / ``first_line`` (where the lines came from, for error messages);
* ``normalized_dir: Path``: where the normalizer writes its Parquet data sets;
* ``table_hints`` (a mapping, or a method returning one): per source table name a partial
  table in dlt's dict form (``columns``, ``primary_key``, ``merge_key``,
  ``write_disposition`` as a string or ``{"disposition", "strategy"}``, ``schema_contract``,
  ``max_nesting`` ...).

The result names, per normalized table, one folder of Parquet files. The files of one table
all use the data types of the returned schema, but a file holds only the columns its part of
the input filled: readers combine them **by column name** (DuckDB
``read_parquet(..., union_by_name=true)``, ``pyarrow.dataset`` with the schema from
:func:`arrow_type`). Parquet types per data type are :data:`PARQUET_TYPES`.

Nothing in a failed normalize reaches a destination: the normalizer removes what it wrote
and raises; running it again on the fixed package works.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import attrs

# normalizers raise the schema's collision error: one class for the whole product
from loadstone.exceptions import IdentifierCollisionError as IdentifierCollisionError
from loadstone.schema.decimals import shape_of

# a normalizer raises the schema's collision error: one class for the whole product

if TYPE_CHECKING:
    import pyarrow as pa

    from loadstone.destinations.contract import Capabilities
    from loadstone.destinations.overlap import FilesSink
    from loadstone.naming import NamingConvention
    from loadstone.schema import Schema
    from loadstone.storage.package_storage import RemoteData

#: What to do with a line that is not a JSON document.
ON_BAD_RECORD_VALUES = ("fail", "skip", "quarantine")

#: Name of the extra table that holds quarantined lines (columns file, line, error, raw).
BAD_RECORDS_TABLE = "_bad_records"

#: Digits a ``wei`` value keeps in the normalizer's Parquet files (``decimal128(38, 0)``): the
#: one statement of this storage limit. The ``wei`` *data type* itself reaches 76 digits
#: (``loadstone.schema.data_types.WEI_PRECISION``, what dlt's schema allows); DuckDB stores
#: ``wei`` as VARCHAR (its own mapping, ``plugins/destinations/duckdb/sql.py``).
WEI_PARQUET_PRECISION: Final = 38
#: the largest absolute integer a Parquet ``wei`` column holds
WEI_PARQUET_MAX: Final = 10**WEI_PARQUET_PRECISION - 1
#: the widest decimal an Arrow ``decimal128`` holds; wider declared decimals are ``decimal256``
MAX_DECIMAL128_PRECISION: Final = 38

#: Parquet physical type per data type, as text (documentation; see :func:`arrow_type`).
#: ``wei`` (integers of any size, e.g. Ethereum amounts) is ``decimal128(38, 0)``: DuckDB and
#: most warehouses hold at most 38 digits; an integer with more digits cannot be coerced into
#: ``wei`` and goes, losslessly, to the variant column ``<column>__v_text``.
PARQUET_TYPES: Mapping[str, str] = {
    "text": "string",
    "bigint": "int64",
    "double": "float64",
    "bool": "bool",
    "timestamp": "timestamp[us, tz=UTC]",
    "date": "date32",
    "time": "time64[us]",
    "decimal": "decimal128(p, s) of the column (decimal256 above 38 digits), else (38, 9)",
    "wei": "decimal128(38, 0)",
    "json": "string (JSON text)",
    "binary": "binary",
}


def arrow_type(
    data_type: str, precision: int | None = None, scale: int | None = None
) -> pa.DataType:
    """The pyarrow type loadstone writes for ``data_type``: a decimal has the column's own
    precision and scale (``loadstone.schema.decimals.shape_of``), never a rounded default."""
    import pyarrow as pa

    if data_type in ("text", "json"):
        return pa.string()
    if data_type == "bigint":
        return pa.int64()
    if data_type == "double":
        return pa.float64()
    if data_type == "bool":
        return pa.bool_()
    if data_type == "timestamp":
        return pa.timestamp("us", tz="UTC")
    if data_type == "date":
        return pa.date32()
    if data_type == "time":
        return pa.time64("us")
    if data_type == "decimal":
        shape = shape_of(precision, scale)
        if shape.precision > MAX_DECIMAL128_PRECISION:
            return pa.decimal256(shape.precision, shape.scale)
        return pa.decimal128(shape.precision, shape.scale)
    if data_type == "wei":
        return pa.decimal128(WEI_PARQUET_PRECISION, 0)
    if data_type == "binary":
        return pa.binary()
    raise ValueError(f"unknown data type {data_type!r}")


def _check_on_bad_record(_instance: object, _attribute: object, value: str) -> None:
    if value not in ON_BAD_RECORD_VALUES:
        raise ValueError(f"on_bad_record must be one of {ON_BAD_RECORD_VALUES}, not {value!r}")


@attrs.frozen
class NormalizeContext:
    """Everything a normalizer needs besides the package and the schema.

    ``spark`` is a SparkSession, or a zero-argument callable returning one (lazy: a package
    small enough for one task then never starts a JVM), or None (run in this process).
    ``naming`` is an instance already sized to the destination's identifier limits;
    ``capabilities`` (``loadstone.destinations.contract.Capabilities``) may be None when unknown.
    ``progress``, when given, is called as parts of the package finish, with
    ``(parts done, parts in all)``: a long normalize step shows it is moving. A normalizer
    may call it from any thread, or never.
    """

    #: a classic or a Connect SparkSession (two unrelated classes), or a callable making one
    spark: Any
    naming: NamingConvention
    capabilities: Capabilities | None = None
    on_bad_record: str = attrs.field(default="fail", validator=_check_on_bad_record)
    progress: Callable[[int, int], None] | None = None
    #: hears where each chunk ran (the run's trace: ``pipeline P trace --json``)
    on_chunk: Callable[[ChunkRun], None] | None = None
    #: hears which engine the normalizer chose, and on which Spark master or remote
    on_engine: Callable[[EngineChoice], None] | None = None
    #: the package's data files on an object store (``packages.storage_url = s3://...``):
    #: read input there, publish output
    storage: RemoteData | None = None
    #: hears, in order, the normalized files nothing later in this package changes (the
    #: pipeline's load of the package while it is normalized: ``load.overlap_normalize``)
    on_files: FilesSink | None = None


@attrs.frozen
class ChunkRun:
    """Where one part of a package was normalized: a Spark executor, or the driver."""

    chunk: int
    #: the Spark executor id, or ``driver`` for this process
    executor: str
    #: whether the engine's C hot path ran
    native: bool
    host: str | None = None
    cpu_seconds: float | None = None
    wall_seconds: float | None = None
    #: 0 for a chunk's first run, 1 for a re-run with the settled column types
    round: int = 0
    #: Unix times the chunk began and ended where it ran (a Spark task, a local worker or
    #: the driver; None in traces written before they were recorded)
    started_at: float | None = None
    ended_at: float | None = None
    #: the input the chunk read: the user's file or object, or the package file
    input: str | None = None


@attrs.frozen
class EngineChoice:
    """The engine a normalize step ran on: ``local`` (this process) or ``spark``."""

    engine: str
    master: str | None = None
    remote: str | None = None


@attrs.frozen
class TableOutput:
    """One normalized table of a package: its folder (a safe file name), rows and files."""

    folder: Path
    row_count: int
    files: tuple[Path, ...] = ()


def as_schema(schema: Schema | Mapping[str, object]) -> Schema:
    """The one schema type past this boundary: a normalizer that returns its schema as a
    stored document (a third-party one, written against the stored format) has it read here,
    once, so nothing downstream branches on dicts."""
    from loadstone.schema import Schema

    if isinstance(schema, Schema):
        return schema
    return Schema.from_dict(schema, bump_version=False)


@attrs.frozen
class NormalizeResult:
    """The evolved schema, the data written per normalized table, and what changed."""

    #: the evolved schema: always a Schema (a stored dict given here is read once)
    schema: Schema = attrs.field(converter=as_schema)
    tables: Mapping[str, TableOutput]
    bad_records: int = 0
    new_tables: tuple[str, ...] = ()
    new_columns: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    @property
    def schema_changed(self) -> bool:
        return bool(self.new_tables or any(self.new_columns.values()))


class ExtractedInput(Protocol):
    """One extracted file as a normalizer reads it.

    ``source`` and ``first_line`` say where its lines came from when the file is a chunk of
    a bigger input (errors name that file and line); ``None`` and ``1`` otherwise.
    """

    @property
    def path(self) -> Path: ...

    @property
    def table_name(self) -> str: ...

    @property
    def source(self) -> str | None: ...

    @property
    def first_line(self) -> int: ...


class PackageToNormalize(Protocol):
    """The package side of the contract (see the module docstring);
    :class:`loadstone.storage.load_package.LoadPackage` is one."""

    @property
    def load_id(self) -> str: ...

    @property
    def normalized_dir(self) -> Path: ...

    def extracted_files(self) -> Sequence[ExtractedInput]: ...

    def table_hints(self) -> Mapping[str, Mapping[str, Any]]: ...  # hints as the user gave them


@runtime_checkable
class Normalizer(Protocol):
    """What a normalizer plugin's ``loadstone_normalizer()`` hook returns."""

    def normalize(
        self,
        package: PackageToNormalize,
        schema: Schema,
        context: NormalizeContext,
    ) -> NormalizeResult:
        """Normalize ``package`` into Parquet under ``package.normalized_dir``, evolving a
        copy of ``schema`` (returned in the result; ``schema`` itself stays as it was)."""
        ...


def check_normalizer_settings(normalizer: Normalizer) -> None:
    """A normalizer's own settings parsed before any work, where it offers
    ``check_settings()`` (optional: a third-party normalizer may read none)."""
    check = getattr(normalizer, "check_settings", None)
    if callable(check):
        check()
