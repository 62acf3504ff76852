"""The Arrow path of normalize: a package's Parquet files (Arrow items, Parquet and CSV inputs)
become root tables column by column, with Arrow compute; no row is visited in Python.

dlt 1.31 is the specification (recorded in ``tests/fixtures/arrow/``):

* column names go through the naming convention; two source names that normalize to one are
  an error naming both;
* types come from the Arrow schema (:func:`loadstone.schema.arrow_types.column_from_arrow`);
  a column the schema or a hint already types is cast to that type (a cast that fails names
  table, column, the first value refused and cause; a decimal is never rounded to fit its
  column's precision and scale: :class:`~loadstone.exceptions.ValueDoesNotFit`); struct, list and map columns are stored as JSON text; a
  ``null``-typed column is not created;
* Arrow data is not unpacked into nested tables (``max_table_nesting`` does not apply);
* ``_dlt_load_id`` and ``_dlt_id`` are added only when
  ``normalize.parquet_normalizer.add_dlt_load_id`` / ``add_dlt_id`` say so, or when the table
  already has them (dict rows went there too: dlt would then fail the load on their NOT NULL;
  loadstone fills them); scd2 tables get their row hash in ``_dlt_id`` and the load time in
  the validity column, as dict rows do.

Output files use the Parquet types every loader reads (``normalize.contract.arrow_type``).
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import orjson

from loadstone import config as loadstone_config
from loadstone.destinations.contract import ARROW_FILE_PREFIX
from loadstone.exceptions import ArrowDataError, ValueDoesNotFit
from loadstone.extract.arrow_items import iter_batches, parts, read_schema
from loadstone.normalizers.contract import (
    ExtractedInput,
    NormalizeContext,
    NormalizeResult,
    TableOutput,
    arrow_type,
)
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.plugins.normalizers.relational.known_columns import hints_on_known_columns
from loadstone.plugins.normalizers.relational.row_keys import (
    LOAD_ID,
    ROW_ID,
    digest_id,
    random_ids,
)
from loadstone.plugins.normalizers.relational.schema_updates import (
    RootPlan,
    system_column,
    with_root_hints,
)
from loadstone.schema import Column, Schema, Table
from loadstone.schema.arrow_types import column_from_arrow
from loadstone.schema.contracts import decide, is_new_table
from loadstone.schema.decimals import fit, misfit_reason, shape_of

if TYPE_CHECKING:
    import pyarrow as pa

    from loadstone.storage.package_storage import RemoteData

#: rows read from an input file at a time
BATCH_ROWS = 128 * 1024
#: rows of an input file normalized as one part (parts run side by side)
PART_ROWS = 512 * 1024


@attrs.frozen
class ArrowOutcome:
    """What the Arrow path wrote: outputs per table, and what it changed in the schema."""

    tables: Mapping[str, TableOutput]
    new_tables: tuple[str, ...]
    new_columns: Mapping[str, tuple[str, ...]]


@attrs.frozen
class _Settings:
    add_load_id: bool
    add_row_id: bool
    #: nested Arrow columns of ``json`` columns written as they are (the destination's
    #: ``keeps_nested_arrow_types``), else as JSON text
    keep_nested: bool = False

    @classmethod
    def configured(cls) -> _Settings:
        return cls(
            loadstone_config.get_bool("normalize.parquet_normalizer.add_dlt_load_id", False),
            loadstone_config.get_bool("normalize.parquet_normalizer.add_dlt_id", False),
        )


@attrs.frozen
class _FileColumn:
    """One input column: its source name, its schema column, and whether it is kept."""

    source: str
    column: Column
    keep: bool = True


def arrow_settings() -> None:
    """Parse the Arrow path's settings (``normalize.parquet_normalizer.*``)."""
    _Settings.configured()


def with_arrow_outcome(result: NormalizeResult, arrow: ArrowOutcome) -> NormalizeResult:
    """The JSON path's result joined with the Arrow path's (a table may get both)."""
    tables = dict(result.tables)
    for name, output in arrow.tables.items():
        before = tables.get(name)
        if before is not None:
            output = TableOutput(
                output.folder, before.row_count + output.row_count, before.files + output.files
            )
        tables[name] = output
    new_columns = dict(result.new_columns)
    for name, columns in arrow.new_columns.items():
        new_columns[name] = tuple(dict.fromkeys([*new_columns.get(name, ()), *columns]))
    new_tables = tuple(dict.fromkeys([*result.new_tables, *arrow.new_tables]))
    return attrs.evolve(result, tables=tables, new_tables=new_tables, new_columns=new_columns)


def normalize_arrow(
    schema: Schema,
    files: Sequence[ExtractedInput],
    plans: Mapping[str, RootPlan],
    context: NormalizeContext,
    load_id: str,
    out_dir: Path,
) -> ArrowOutcome:
    """Every Arrow file of a package into its root table (schema evolved in place).

    With the package's data on an object store the files are read from local copies made
    for the step (an Arrow file is read by random access; the outputs are published by the
    normalizer like every other).
    """
    with _read_locally(context, files):
        caps = context.capabilities
        keep_nested = caps is not None and caps.keeps_nested_arrow_types
        settings = attrs.evolve(_Settings.configured(), keep_nested=keep_nested)
        outputs: dict[str, list[Path]] = {}
        rows: dict[str, int] = {}
        new_tables: list[str] = []
        new_columns: dict[str, list[str]] = {}
        jobs: list[_Job] = []
        for number, file in enumerate(files):
            plan = plans[file.table_name]
            root = plan.spec.root
            columns, added = _evolve(schema, plan, file, context, settings, new_tables)
            known = new_columns.setdefault(root, [])
            known.extend(c for c in added if c not in known)
            if columns is None:
                continue  # a contract discards the table's rows
            for index, part in enumerate(parts(file.path, PART_ROWS)):
                target = (
                    out_dir
                    / safe_folder(root)
                    / f"{ARROW_FILE_PREFIX}{number:05d}-{index:04d}.parquet"
                )
                jobs.append(_Job(file, part, columns, plan, target))
        for job, written in zip(jobs, _run_jobs(jobs, schema, load_id, settings), strict=True):
            root = job.plan.spec.root
            if written:
                outputs.setdefault(root, []).append(job.target)
                rows[root] = rows.get(root, 0) + written
            else:
                job.target.unlink(missing_ok=True)
        tables = {
            name: TableOutput(out_dir / safe_folder(name), rows[name], tuple(paths))
            for name, paths in outputs.items()
        }
        return ArrowOutcome(
            tables, tuple(new_tables), {t: tuple(c) for t, c in new_columns.items() if c}
        )


def _read_locally(
    context: NormalizeContext, files: Sequence[ExtractedInput]
) -> AbstractContextManager[None]:
    """Local copies of the files for the step when the package's data is on an object store."""
    storage: RemoteData | None = context.storage
    if storage is None:
        return contextlib.nullcontext()
    return storage.local_copies([f.path for f in files])


@attrs.frozen
class _Job:
    """One part of one input file, to be written as one output file of its table."""

    file: ExtractedInput
    part: tuple[int, int]
    columns: list[_FileColumn]
    plan: RootPlan
    target: Path


def _run_jobs(jobs: Sequence[_Job], schema: Schema, load_id: str, settings: _Settings) -> list[int]:
    """Rows written per job, the jobs side by side on threads (Arrow, Parquet and DuckDB
    release the GIL); the schema is final by now, so every part sees the same table."""
    if len(jobs) <= 1:
        return [_write(job, schema.tables[job.plan.spec.root], load_id, settings) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
        futures = [
            pool.submit(_write, job, schema.tables[job.plan.spec.root], load_id, settings)
            for job in jobs
        ]
        return [future.result() for future in futures]


def _source_names(file: ExtractedInput) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in read_schema(file.path)]


def _evolve(
    schema: Schema,
    plan: RootPlan,
    file: ExtractedInput,
    context: NormalizeContext,
    settings: _Settings,
    new_tables: list[str],
) -> tuple[list[_FileColumn] | None, list[str]]:
    """The file's columns in schema terms; the table and new columns added to ``schema``.

    Returns None for the columns when a ``tables`` contract discards the rows.
    """
    root = plan.spec.root
    fields = _named_fields(file, context, root)
    table_is_new = is_new_table(schema, root)
    if table_is_new and not decide(plan.spec.contract, "tables", table=root).keep:
        return None, []
    if root not in schema.tables:
        schema.update_table(Table(root))
        new_tables.append(root)
    schema.replace_table(with_root_hints(schema.tables[root], plan))
    known = schema.tables[root].columns
    file_columns: list[_FileColumn] = []
    added: list[Column] = []
    for source, name, field_type in fields:
        column = _column_for(schema, plan, root, name, field_type, known)
        if column is None:
            continue
        keep = True
        if name not in known:
            decision = decide(
                plan.spec.contract, "columns", table=root, column=name, table_is_new=table_is_new
            )
            keep = decision.keep
            if keep:
                added.append(column)
        file_columns.append(_FileColumn(source, column, keep))
    names = {c.name for c in added}
    added += [
        c for n, c in plan.columns.items() if c.data_type and n not in known and n not in names
    ]
    for name in _system_columns(schema.tables[root], plan, settings):
        if name not in known and name not in {c.name for c in added}:
            added.append(system_column(name))
    retyped = hints_on_known_columns(plan.columns, known)
    schema.update_table(Table(root, columns=[*retyped, *added]), merge_compound_props=False)
    return file_columns, [c.name for c in added]


def _named_fields(
    file: ExtractedInput, context: NormalizeContext, root: str
) -> list[tuple[str, str, pa.DataType]]:
    """(source name, normalized name, Arrow type) per field; a collision is an error."""
    seen: dict[str, str] = {}
    fields = []
    for source, field_type in _source_names(file):
        name = context.naming.normalize_identifier(source)
        if name in seen:
            raise ArrowDataError(
                f"table {root!r}: the Arrow columns {seen[name]!r} and {source!r} both "
                f"normalize to {name!r}; rename one of them"
            )
        seen[name] = source
        fields.append((source, name, field_type))
    return fields


def _column_for(
    schema: Schema,
    plan: RootPlan,
    root: str,
    name: str,
    field_type: pa.DataType,
    known: Mapping[str, Column],
) -> Column | None:
    """The schema column data of ``field_type`` goes to: the table's, a hint's, or inferred."""
    existing = known.get(name)
    if existing is not None and existing.data_type:
        return existing
    hinted = plan.columns.get(name)
    if hinted is not None and hinted.data_type:
        return schema.new_column(root, name, hinted.data_type).merge(hinted)
    inferred = column_from_arrow(name, field_type)
    if inferred is None:
        return None
    column = schema.new_column(root, name, inferred.data_type).merge(inferred)
    return column if hinted is None else column.merge(attrs.evolve(hinted, data_type=None))


def _system_columns(table: Table, plan: RootPlan, settings: _Settings) -> list[str]:
    """The dlt columns rows of this table get (see the module docstring)."""
    names = []
    if settings.add_load_id or LOAD_ID in table.columns:
        names.append(LOAD_ID)
    if settings.add_row_id or ROW_ID in table.columns or plan.spec.row_hash:
        names.append(ROW_ID)
    return names


# ------------------------------------------------------------------------------------ output
def _write(job: _Job, table: Table, load_id: str, settings: _Settings) -> int:
    """The rows of one part as an output file of the table; returns the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    plan, columns, target = job.plan, job.columns, job.target
    system = _system_columns(table, plan, settings)
    valid_from = plan.spec.valid_from if plan.spec.row_hash else None
    kept = [c for c in columns if c.keep]
    nested = _kept_nested(job, kept) if settings.keep_nested else {}
    fields = [pa.field(c.column.name, nested.get(c.source) or _output_type(c.column)) for c in kept]
    fields += [pa.field(name, pa.string()) for name in system]
    if valid_from is not None and valid_from not in {f.name for f in fields}:
        fields.append(pa.field(valid_from, arrow_type("timestamp")))
    out_schema = pa.schema(fields)
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    dropped = [c for c in columns if not c.keep]
    with pq.ParquetWriter(target, out_schema) as writer:
        for batch in iter_batches(job.file.path, BATCH_ROWS, job.part):
            batch = _drop_discarded_rows(batch, dropped, plan)
            if batch.num_rows == 0:
                continue
            arrays = [
                _converted(batch.column(c.source), c.column, table.name, c.source in nested)
                for c in kept
            ]
            arrays += _system_arrays(batch, system, plan, load_id)
            if valid_from is not None and valid_from not in {c.column.name for c in kept}:
                arrays.append(_load_time_array(load_id, batch.num_rows))
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=out_schema))
            written += batch.num_rows
    return written


def _drop_discarded_rows(
    batch: pa.RecordBatch, dropped: list[_FileColumn], plan: RootPlan
) -> pa.RecordBatch:
    """``discard_row`` on new columns: rows holding a value there are not loaded."""
    import pyarrow.compute as pc

    if plan.spec.contract.mode("columns") != "discard_row":
        return batch
    for column in dropped:
        batch = batch.filter(pc.is_null(batch.column(column.source)))
    return batch


def _output_type(column: Column) -> pa.DataType:
    assert column.data_type is not None
    return arrow_type(column.data_type, column.precision, column.scale)


def _kept_nested(job: _Job, kept: Sequence[_FileColumn]) -> dict[str, pa.DataType]:
    """The input's nested Arrow types of the ``json`` columns written as they are."""
    import pyarrow as pa

    schema = read_schema(job.file.path)
    found = {}
    for column in kept:
        if column.column.data_type != "json" or column.source not in schema.names:
            continue
        field_type = schema.field(column.source).type
        if pa.types.is_dictionary(field_type):
            field_type = field_type.value_type
        if pa.types.is_nested(field_type):
            found[column.source] = field_type
    return found


def _converted(array: pa.Array, column: Column, table: str, as_is: bool = False) -> pa.Array:
    """``array`` in the column's output type (cast, JSON text, UTC timestamps); a nested
    ``json`` column ``as_is`` keeps its Arrow type."""
    import pyarrow as pa

    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    target = _output_type(column)
    if as_is:
        return array
    if column.data_type in ("json", "text") and pa.types.is_nested(array.type):
        return _json_texts(array)
    if pa.types.is_timestamp(array.type) and array.type.tz is None:
        array = array.cast(pa.timestamp(array.type.unit, tz="UTC"))
    if array.type.equals(target):
        return array
    safe = not pa.types.is_timestamp(target)
    try:
        return array.cast(target, safe=safe)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        cause = str(error).strip().splitlines()[0]
        raise _refused(array, target, safe, column, table, cause) from None


def _refused(
    array: pa.Array, target: pa.DataType, safe: bool, column: Column, table: str, cause: str
) -> Exception:
    """The error naming the first value of ``array`` the cast refuses (found by halving the
    array: a failing cast says only that some value failed). A decimal that does not fit
    its column is a :class:`ValueDoesNotFit`; never rounded to fit."""
    import pyarrow as pa

    lo, hi = 0, len(array)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            array.slice(lo, mid - lo).cast(target, safe=safe)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            hi = mid
        else:
            lo = mid
    value = array[lo].as_py() if len(array) else None
    if column.data_type == "decimal" and isinstance(value, (Decimal, int, str)):
        with contextlib.suppress(ArithmeticError, ValueError):
            exact = Decimal(str(value).strip())
            shape = shape_of(column.precision, column.scale)
            if exact.is_finite() and fit(exact, shape) is None:
                reason = misfit_reason(exact, shape)
                return ValueDoesNotFit(table, column.name, str(value), shape.type_name, reason)
    shown = "" if value is None else f" (first refused: {str(value)[:200]!r})"
    return ArrowDataError(
        f"table {table!r} column {column.name!r}: {array.type} values cannot be stored as "
        f"{column.data_type}{shown} ({cause})"
    )


def _json_texts(array: pa.Array) -> pa.Array:
    """Struct/list/map values as compact JSON text (maps as objects), nulls kept.

    DuckDB's ``to_json`` writes exactly dlt's text (``{"a":1,"b":null}``, ``[1,2]``,
    ``{"k":1}``) from the Arrow buffers without a Python object per value: 60x faster than
    ``to_pylist`` and a JSON encoder at a million rows.
    """
    import duckdb
    import pyarrow as pa

    with duckdb.connect() as conn:
        conn.register("nested_values", pa.table({"v": array}))
        relation = conn.sql("SELECT to_json(v)::VARCHAR AS v FROM nested_values")
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        texts = fetch().column(0)
    return texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts


def _json_default(value: object) -> str:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def _system_arrays(
    batch: pa.RecordBatch, system: list[str], plan: RootPlan, load_id: str
) -> list[pa.Array]:
    import pyarrow as pa

    arrays = []
    for name in system:
        if name == LOAD_ID:
            arrays.append(pa.array([load_id] * batch.num_rows, pa.string()))
        elif plan.spec.row_hash:
            arrays.append(pa.array(_row_hashes(batch), pa.string()))
        else:
            arrays.append(pa.array(random_ids(batch.num_rows), pa.string()))
    return arrays


def _row_hashes(batch: pa.RecordBatch) -> list[str]:
    """scd2's version key of each row: a digest of its values (dlt columns left out)."""
    rows = batch.to_pylist()
    return [
        digest_id(
            orjson.dumps(
                {k: v for k, v in row.items() if not k.startswith("_dlt")},
                option=orjson.OPT_SORT_KEYS,
                default=_json_default,
            ).decode("utf-8")
        )
        for row in rows
    ]


def _load_time_array(load_id: str, count: int) -> pa.Array:
    import datetime as _dt

    import pyarrow as pa

    instant = _dt.datetime.fromtimestamp(float(load_id), _dt.timezone.utc)
    return pa.array([instant] * count, arrow_type("timestamp"))
