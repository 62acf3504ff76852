"""The relational core: source items -> typed rows of root and nested tables, in one worker.

Runs inside a Spark task (or in the driver for a single chunk) over one chunk of one
extracted file. Every row goes through dict operations that pyarrow or Spark SQL cannot
express (flattening with per-key naming, variant columns). The two loops that touch every
value (flattening an item, placing each value into its column) also exist in C
(``_speedups``): this module's Python loops are their reference, the default path runs the C
ones, and ``EngineConfig.native = False`` (config ``normalize.native``) runs the reference.
Everything that needs a decision (new columns, coercion, variants, contracts) stays here.

Sequential semantics in parallel: a column not in the schema gets its type from the first
non-None value *this task* sees (unless the driver forces the type). Which column a value
goes to is a pure function of (column type, value), so the task's rows equal the sequential
result iff each of its local decisions equals the decision of the globally first value. The
task reports, per new column, the position of its first value ``(chunk, line, visit)`` and
the type; the driver compares and re-runs only the tasks that guessed differently.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import orjson

from loadstone.exceptions import ContractViolation
from loadstone.extract.typed_json import MARK_BYTES, decode_item
from loadstone.plugins.normalizers.relational import type_rules
from loadstone.plugins.normalizers.relational.facts import (
    ChunkFacts,
    ColumnFact,
    ColumnKey,
    FailureKind,
    TableFact,
    TaskError,
)
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.schema.contracts import SchemaContract, decide
from loadstone.schema.settings import PreferredTypes, compile_preferred

try:
    import loadstone.plugins.normalizers.relational._speedups as _speedups
except ImportError:  # built without a C compiler: the pure-Python reference runs instead
    _speedups = None  # type: ignore[assignment]  # no C compiler: Python loops run

#: whether the C hot path is importable here (the test suite requires it)
NATIVE_AVAILABLE = _speedups is not None

LOAD_ID = "_dlt_load_id"
ROW_ID = "_dlt_id"
PARENT_ID = "_dlt_parent_id"
LIST_IDX = "_dlt_list_idx"
ROOT_ID = "_dlt_root_id"
VALID_FROM = "_dlt_valid_from"

#: a bare JSON integer of 19+ digits: orjson would parse it as a float (losing digits), so such
#: lines go through the json module, which keeps Python's exact int
_LONG_INT = re.compile(rb"(?<![\d.\w])-?\d{19,}(?![\d.eE])")
#: cheap pre-check for _LONG_INT at memory speed: digits -> "0", everything else -> "x"
_DIGIT_MASK = bytes(48 if 48 <= i <= 57 else 120 for i in range(256))
_NINETEEN_DIGITS = b"0" * 19


def scan_line(raw: bytes) -> tuple[int, int, bool]:
    """What :func:`parse_line` checks before parsing: (``[`` + ``{``, ``":``, 19 digits in a row).

    The reference of ``_speedups.scan_line``, which finds the same in one pass over the line
    (four passes here cost about a fifth of a chunk's CPU on API data).
    """
    nineteen = raw.translate(_DIGIT_MASK).find(_NINETEEN_DIGITS) >= 0
    return raw.count(b"[") + raw.count(b"{"), raw.count(b'":'), nineteen


#: data type -> the Python type whose values need no coercion into it. A timestamp column
#: gets the C path's sentinel instead: no Python type is it (so the Python loop coerces every
#: value), while the C path turns ISO text of the common shape into the datetime directly
_EXACT: dict[str, Any] = {"text": str, "bigint": int, "double": float, "bool": bool}
if _speedups is not None:
    _EXACT["timestamp"] = _speedups.ISO_TIMESTAMP_TEXT

_FAST_TYPES = {str: "text", bool: "bool", float: "double", dict: "json", list: "json"}
#: types whose values are converted even into a column of their own type (JSON text, the
#: wei and decimal storage: 38 digits, scale 9)
_SLOW_TYPES = frozenset(("json", "wei", "decimal"))
_I64_MIN = type_rules.INT64_MIN
_I64_MAX = type_rules.INT64_MAX


#: a column of a table buffer: the row numbers that have a value, and those values. Columns
#: are sparse (a wide table's rows fill few of its columns), so nulls are not stored
Cell = tuple[list[int], list[Any]]


def _as_contract(value: Any) -> SchemaContract:
    return SchemaContract.parse(value)


def last_per_path(
    pending: list[tuple[tuple[str, ...], list[Any], int]],
) -> list[tuple[tuple[str, ...], list[Any], int]]:
    """One list per nested table path: when keys of one object normalize to the same name
    (``"a b"`` and ``"a_b"``) and hold lists, the last key's list is kept, as dlt keeps it."""
    if len(pending) < 2:
        return pending
    last = {parts: index for index, (parts, _seq, _depth) in enumerate(pending)}
    if len(last) == len(pending):
        return pending
    return [entry for index, entry in enumerate(pending) if last[entry[0]] == index]


@attrs.frozen
class RootSpec:
    """How the items of one source table are normalized (from the table hints)."""

    source_name: str
    root: str
    max_nesting: int = 1000
    propagate_root_key: bool = False
    primary_key: tuple[str, ...] = ()
    row_hash: bool = False
    #: scd2: the column that gets the load instant (``validity_column_names[0]``)
    valid_from: str = VALID_FROM
    contract: SchemaContract = attrs.field(factory=SchemaContract, converter=_as_contract)
    existing_table: bool = False
    #: contracts nested tables declare (``make_nested_hints(schema_contract=...)``), by table
    table_contracts: Mapping[str, SchemaContract] = attrs.field(factory=dict, hash=False)
    #: root columns that may hold no null (keys): a row without a value fails the package
    not_null: tuple[str, ...] = ()


def _as_preferred(value: PreferredTypes | Mapping[str, str]) -> PreferredTypes:
    return value if isinstance(value, PreferredTypes) else compile_preferred(value)


@attrs.frozen
class EngineConfig:
    """Everything a task needs; pickled once into every Spark task."""

    naming: Any
    load_id: str
    out_dir: str
    specs: Mapping[str, RootSpec]
    known: Mapping[str, Mapping[str, str]]
    existing_tables: frozenset[str]
    detections: tuple[str, ...] = ("iso_timestamp",)
    #: the schema's preferred-type rules (a mapping is compiled on the way in)
    preferred: PreferredTypes = attrs.field(
        factory=lambda: compile_preferred({}), converter=_as_preferred
    )
    use_break_path: bool = True
    on_bad_record: str = "fail"
    flush_rows: int = 20000
    compression: str = "snappy"
    #: run the C hot path when it is built (False: the pure-Python reference loops)
    native: bool = True
    #: the package's data files on an object store (``package_storage.RemoteData``): input
    #: is read from there; output is still written to ``out_dir`` (the caller uploads it)
    remote: Any = None


@attrs.frozen
class Chunk:
    """A byte range of one extracted file; ``end`` -1 means to the end (all of a .gz)."""

    index: int
    file_index: int
    path: str
    table_name: str
    start: int
    end: int
    display: str
    first_line: int = 1


class TaskFailure(Exception):
    """Raised inside a task; carried to the driver as data (never through Spark's errors)."""

    def __init__(self, kind: FailureKind, **info: Any) -> None:
        self.kind = kind
        self.info = info
        super().__init__(kind, info)


def contract_action(
    spec: RootSpec,
    entity: str,
    *,
    table: str,
    column: str | None = None,
    value: Any = None,
    table_is_new: bool = False,
) -> str:
    """``keep``, ``drop_row`` or ``drop_value`` by the schema contract rules.

    A ``freeze`` violation fails the task naming table, column and value; it travels to the
    driver as data like every task failure.
    """
    try:
        return decide(
            spec.table_contracts.get(table, spec.contract),
            entity,  # type: ignore[arg-type]  # one of the three entity names
            table=table,
            column=column,
            value=value,
            table_is_new=table_is_new,
        ).action
    except ContractViolation as violation:
        raise TaskFailure(
            "contract",
            table=table,
            column=column,
            value=None if value is None else repr(value),
            entity=entity,
            mode=violation.mode,
        ) from None


def new_random_id() -> str:
    return base64.b64encode(os.urandom(10)).decode("ascii")[:-2]


def digest_id(text: str) -> str:
    """base64 (no '=') of a 10-byte SHAKE-128 digest: dlt's deterministic row keys."""
    return base64.b64encode(hashlib.shake_128(text.encode("utf-8")).digest(10)).decode("ascii")[:-2]


def sorted_json_text(value: Any) -> str:
    """Compact JSON with keys sorted at every level (the form dlt hashes)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:
        return json.dumps(
            value, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str
        )


def json_text(value: Any) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def iter_lines(chunk: Chunk, remote: Any = None) -> Iterator[tuple[int, bytes]]:
    """(1-based line number within the chunk, line bytes) for each line of the chunk.

    ``remote`` (``package_storage.RemoteData``): the file is an object of that storage.
    """
    opener: Any = open if remote is None else (lambda path, mode: remote.open_read(path))
    if chunk.path.endswith(".gz"):
        import gzip

        with opener(chunk.path, "rb") as raw, gzip.open(raw, "rb") as handle:
            for number, line in enumerate(handle, 1):
                yield number, line
        return
    with opener(chunk.path, "rb") as handle:
        handle.seek(chunk.start)
        data = handle.read() if chunk.end < 0 else handle.read(chunk.end - chunk.start)
    for number, line in enumerate(data.split(b"\n"), 1):
        yield number, line


class ChunkEngine:
    """Normalizes the items of one chunk and writes its Parquet files."""

    def __init__(
        self,
        config: EngineConfig,
        chunk: Chunk,
        forced: Mapping[str, Mapping[str, str]],
        attempt: int,
    ) -> None:
        self.config = config
        self.chunk = chunk
        self.naming = config.naming
        self.forced = forced
        self.attempt = attempt
        self.types: dict[str, dict[str, str]] = {t: dict(c) for t, c in config.known.items()}
        self.preferred = config.preferred
        self.detections = config.detections
        self.key_cache: dict[str, str] = {}
        self.key_source: dict[str, str] = {}
        self.col_cache: dict[tuple[str, ...], str] = {}
        self.col_parts: dict[str, tuple[str, ...]] = {}
        self.table_cache: dict[tuple[str, ...], str] = {}
        self.table_source: dict[str, str] = {}
        self.variant_cache: dict[tuple[str, str], str] = {}
        #: table -> {column: Python type stored as is} (the per-cell fast path)
        self.exact: dict[str, dict[str, Any]] = {}
        self.prefix_names: dict[tuple[str, ...], dict[str, tuple[tuple[str, ...], str]]] = {}
        #: table -> [row count, {column: values}] (column lists padded with None lazily)
        self.buffers: dict[str, list[Any]] = {}
        self.parents: dict[str, str | None] = {}
        self.table_first: dict[str, tuple[int, int, int]] = {}
        self.row_counts: dict[str, int] = {}
        # (table, column) -> [position, type, is_variant, decided_locally, source identifier]
        self.new_columns: dict[ColumnKey, ColumnFact] = {}
        self.files: dict[str, list[str]] = {}
        self.file_counter = 0
        self.line = 0
        self.seq = 0
        self.load_time = datetime.datetime.fromtimestamp(
            float(config.load_id), datetime.timezone.utc
        )
        self.bad: list[tuple[int, str, str]] = []
        self.bad_count = 0
        self.discarded_rows = 0
        #: contract decision for tables this task may not create (same for every row)
        self.table_actions: dict[str, str] = {}
        self.native = _speedups if config.native else None

    # -- identifiers ------------------------------------------------------------------------
    def norm_key(self, key: str) -> str:
        try:
            return self.key_cache[key]
        except KeyError:
            pass
        if not key.strip():
            normalized = "_empty"
        elif self.config.use_break_path:
            normalized = self.naming.normalize_path(key)
        else:
            normalized = self.naming.normalize_identifier(key)
        self.key_cache[key] = normalized
        self.key_source.setdefault(normalized, key)
        return normalized

    def col_name(self, parts: tuple[str, ...]) -> str:
        try:
            return self.col_cache[parts]
        except KeyError:
            name = parts[0] if len(parts) == 1 else self.naming.shorten_fragments(*parts)
            self.col_cache[parts] = name
            self.col_parts.setdefault(name, parts)
            return name

    def table_name(self, parts: tuple[str, ...]) -> str:
        try:
            return self.table_cache[parts]
        except KeyError:
            name = self.naming.shorten_fragments(*parts)
            self.table_cache[parts] = name
            self.table_source.setdefault(name, "__".join(self.key_source.get(p, p) for p in parts))
            return name

    def source_of(self, column: str) -> str:
        parts = self.col_parts.get(column)
        if parts is None:
            return column
        return ".".join(self.key_source.get(p, p) for p in parts)

    # -- items ------------------------------------------------------------------------------
    def table_action(self, spec: RootSpec, table: str) -> str:
        """The ``tables`` contract decision for a table new to the schema, decided once."""
        action = self.table_actions.get(table)
        if action is None:
            action = contract_action(spec, "tables", table=table)
            self.table_actions[table] = action
        return action

    def process_item(self, item: Any, spec: RootSpec, line: int) -> None:
        self.line = line
        self.seq = 0
        if type(item) is not dict:
            item = {"value": item}
        root = spec.root
        if not spec.existing_table and self.table_action(spec, root) != "keep":
            self.discarded_rows += 1
            return
        if root not in self.parents:
            self.parents[root] = None
            self.table_first[root] = (self.chunk.index, line, 0)
            self.table_source.setdefault(root, spec.source_name)
        raw: dict[str, Any] = {}
        pending: list[tuple[tuple[str, ...], list[Any], int]] = []
        self.flatten(item, (), 0, raw, root, spec, pending)
        raw[LOAD_ID] = self.config.load_id
        if spec.row_hash:
            raw[spec.valid_from] = self.load_time
        row_id = raw.get(ROW_ID)
        if row_id is None:
            if spec.primary_key:
                key = {k: raw.get(k) for k in spec.primary_key}
                row_id = digest_id(json_text(dict(sorted(key.items()))))
            elif spec.row_hash:
                # scd2: a version hash of the whole source item (nested data included)
                content = {k: v for k, v in item.items() if not k.startswith("_dlt")}
                row_id = digest_id(sorted_json_text(content))
            else:
                row_id = new_random_id()
            raw[ROW_ID] = row_id
        if not self.type_row(root, raw, spec):
            return
        root_id = row_id if spec.propagate_root_key else None
        for parts, seq, depth in last_per_path(pending):
            self.process_list(seq, (root,), parts, depth, row_id, root, root_id, spec)

    def names_under(self, prefix: tuple[str, ...]) -> dict[str, tuple[tuple[str, ...], str]]:
        """Cache of source key -> (normalized parts, column name) for one flatten prefix."""
        names = self.prefix_names.get(prefix)
        if names is None:
            names = self.prefix_names[prefix] = {}
        return names

    def name_of(
        self, names: dict[str, Any], prefix: tuple[str, ...], key: str
    ) -> tuple[tuple[str, ...], str]:
        nk = self.norm_key(key)
        parts = (*prefix, nk)
        entry = names[key] = (parts, self.col_name(parts))
        return entry

    def flatten(
        self,
        data: dict[str, Any],
        prefix: tuple[str, ...],
        depth: int,
        out: dict[str, Any],
        table: str,
        spec: RootSpec,
        pending: list[tuple[tuple[str, ...], list[Any], int]],
    ) -> None:
        if self.native is not None:
            self.native.flatten(
                self.prefix_names,
                self.name_of,
                data,
                prefix,
                depth,
                spec.max_nesting,
                out,
                self.types.get(table),
                pending,
            )
            return
        expand = depth < spec.max_nesting
        table_types = self.types.get(table)
        names = self.prefix_names.get(prefix)
        if names is None:
            names = self.names_under(prefix)
        deferred: list[tuple[dict[str, Any], tuple[str, ...]]] | None = None
        for key, value in data.items():
            entry = names.get(key)
            if entry is None:
                entry = self.name_of(names, prefix, key)
            tv = type(value)
            if (tv is dict or tv is list) and expand:
                parts, col = entry
                if table_types is None or table_types.get(col) != "json":
                    if tv is dict:
                        # dlt places nested dicts after this level's own keys, last dict first
                        if deferred is None:
                            deferred = []
                        deferred.append((value, parts))
                    else:
                        pending.append((parts, value, depth + 1))
                    continue
            out[entry[1]] = value
        if deferred is not None:
            for value, parts in reversed(deferred):
                self.flatten(value, parts, depth + 1, out, table, spec, pending)

    def process_list(
        self,
        seq: list[Any],
        parent_parts: tuple[str, ...],
        parts: tuple[str, ...],
        depth: int,
        parent_id: str,
        parent_table: str,
        root_id: str | None,
        spec: RootSpec,
    ) -> None:
        if not seq:
            return
        table_parts = parent_parts + parts
        table = self.table_name(table_parts)
        if table not in self.parents:
            # a new nested table of an existing root answers to the root's contract
            if (
                table not in self.config.existing_tables
                and spec.existing_table
                and self.table_action(spec, table) != "keep"
            ):
                return
            self.parents[table] = parent_table
            self.table_first[table] = (self.chunk.index, self.line, self.seq)
        max_nesting = spec.max_nesting
        for idx, element in enumerate(seq):
            self.seq += 1
            raw: dict[str, Any] = {}
            pending: list[tuple[tuple[str, ...], list[Any], int]] = []
            te = type(element)
            if te is dict:
                self.flatten(element, (), depth, raw, table, spec, pending)
            elif te is list:
                table_types = self.types.get(table)
                if depth < max_nesting and (
                    table_types is None or table_types.get("list") != "json"
                ):
                    pending.append((("list",), element, depth + 1))
                else:
                    raw["list"] = element
            else:
                raw["value"] = element
            if root_id is not None:
                raw[ROOT_ID] = root_id
            raw[PARENT_ID] = parent_id
            raw[LIST_IDX] = idx
            row_id = raw.get(ROW_ID)
            if row_id is None:
                row_id = digest_id(f"{parent_id}_{table}_{idx}")
                raw[ROW_ID] = row_id
            if not self.type_row(table, raw, spec):
                continue
            for sub_parts, sub_seq, sub_depth in last_per_path(pending):
                self.process_list(
                    sub_seq, table_parts, sub_parts, sub_depth, row_id, table, root_id, spec
                )

    # -- types ------------------------------------------------------------------------------
    def type_row(self, table: str, raw: dict[str, Any], spec: RootSpec) -> bool:
        """Type and coerce one flattened row straight into the table's column lists.

        Returns False when a schema contract discards the row (nothing of it is kept).
        A value that already has its column's Python type is placed on the fast path (here,
        or in C: ``_speedups.fill`` is this loop's fast path); any other goes through
        :meth:`place_other`.
        """
        types = self.types.get(table)
        if types is None:
            types = self.types[table] = {}
        buffer = self.buffers.get(table)
        if buffer is None:
            buffer = self.buffers[table] = [0, {}]
        n = buffer[0]
        columns = buffer[1]
        exact = self.exact.get(table)
        if exact is None:
            exact = self.exact[table] = {c: _EXACT[t] for c, t in types.items() if t in _EXACT}
        seq = self.seq
        native = self.native
        if native is not None:
            fill = native.fill
            step = fill(raw, exact, columns, n, 0, seq)
            while type(step) is tuple:
                pos, col, value, seq = step
                self.seq = seq
                if not self.place_other(table, col, value, spec, types, columns, n):
                    return self.discard(columns, n)
                step = fill(raw, exact, columns, n, pos, seq)
            seq = step
        else:
            for col, value in raw.items():
                seq += 1
                tv = type(value)
                if tv is exact.get(col) and (tv is not int or _I64_MIN <= value <= _I64_MAX):
                    self.put(columns, n, col, value)  # the value already has the column's type
                    continue
                if value is None:
                    continue
                self.seq = seq
                if not self.place_other(table, col, value, spec, types, columns, n):
                    return self.discard(columns, n)
        self.seq = seq
        n += 1
        buffer[0] = n
        if n >= self.config.flush_rows:
            self.flush(table)
        return True

    def place_other(
        self,
        table: str,
        col: str,
        value: Any,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool:
        """Place a value the fast path did not: a new column, a coercion, a variant.

        Returns False when the row must be discarded (a contract said so); a value a
        contract drops is simply not placed. ``self.seq`` is the value's visit position.
        """
        tv = type(value)
        vt = _FAST_TYPES.get(tv)
        if vt is None:
            if tv is int:
                vt = "bigint" if _I64_MIN <= value <= _I64_MAX else "wei"
            else:
                vt = type_rules.py_type(value)
        t = types.get(col)
        if t is None:
            t = self.new_column(table, col, value, vt, spec)
            if t is None:
                return True
            if t == "":
                return False
        if t != vt or vt in _SLOW_TYPES:
            return self.place_slow(table, col, t, vt, value, spec, types, columns, n) is not None
        self.put(columns, n, col, value)
        return True

    @staticmethod
    def discard(columns: dict[str, Cell], n: int) -> bool:
        """Take back the values row ``n`` already placed (its row is dropped)."""
        for col, (rows, values) in list(columns.items()):
            if rows[-1] == n:
                rows.pop()
                values.pop()
                if not rows:
                    del columns[col]
        return False

    @staticmethod
    def put(columns: dict[str, Cell], n: int, col: str, value: Any) -> None:
        """Place ``value`` in row ``n`` of ``col`` (a later value for the same row wins)."""
        cell = columns.get(col)
        if cell is None:
            columns[col] = ([n], [value])
        elif cell[0][-1] == n:
            cell[1][-1] = value
        else:
            cell[0].append(n)
            cell[1].append(value)

    def place_slow(
        self,
        table: str,
        col: str,
        t: str,
        vt: str,
        value: Any,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool | None:
        """Coercions, JSON text, wide integers and variant columns (None: discard the row)."""
        if t == "json":
            self.put(columns, n, col, json_text(value))
            return True
        if t == vt == "wei":
            if type_rules.fits_wei_storage(value):
                self.put(columns, n, col, decimal.Decimal(value))
                return True
            return self.variant(table, col, "text", str(value), spec, types, columns, n)
        try:
            self.put(columns, n, col, type_rules.coerce(t, vt, value))
            return True
        except type_rules.CoercionError:
            pass
        if vt == "json":
            value = json_text(value)
        elif vt == "wei":
            if type_rules.fits_wei_storage(value):
                value = decimal.Decimal(value)
            else:
                vt, value = "text", str(value)
        return self.variant(table, col, vt, value, spec, types, columns, n)

    def variant(
        self,
        table: str,
        col: str,
        vt: str,
        value: Any,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool | None:
        vcol = self.variant_cache.get((col, vt))
        if vcol is None:
            vcol = self.naming.shorten_fragments(col, f"v_{vt}")
            self.variant_cache[(col, vt)] = vcol
        if vcol not in types:
            action = contract_action(
                spec,
                "data_type",
                table=table,
                column=col,
                value=value,
                table_is_new=not (table in self.config.existing_tables or spec.existing_table),
            )
            if action == "drop_row":
                self.discarded_rows += 1
                return None
            if action == "drop_value":
                return False
            types[vcol] = vt
            if vt in _EXACT:
                self.exact.setdefault(table, {})[vcol] = _EXACT[vt]
            self.new_columns[(table, vcol)] = ColumnFact(
                (self.chunk.index, self.line, self.seq), vt, True, False, self.source_of(col)
            )
        self.put(columns, n, vcol, value)
        return True

    def new_column(self, table: str, col: str, value: Any, vt: str, spec: RootSpec) -> str | None:
        """Type of a column this task meets for the first time; '' discards the row, None the value."""
        if table in self.config.existing_tables:
            action = contract_action(spec, "columns", table=table, column=col, value=value)
            if action == "drop_row":
                self.discarded_rows += 1
                return ""
            if action == "drop_value":
                return None
        forced = self.forced.get(table, {}).get(col)
        t: str | None
        if forced is not None:
            t = forced
            local = False
        else:
            local = True
            t = self.preferred.type_for(col) if self.preferred else None
            if t is None:
                t = type_rules.detect_type(value, self.detections) if self.detections else None
                if t is None:
                    t = vt
        self.types[table][col] = t
        if t in _EXACT:
            self.exact.setdefault(table, {})[col] = _EXACT[t]
        self.new_columns[(table, col)] = ColumnFact(
            (self.chunk.index, self.line, self.seq), t, False, local, self.source_of(col)
        )
        return t

    # -- output -----------------------------------------------------------------------------
    def flush(self, table: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from loadstone.normalize.contract import arrow_type

        buffer = self.buffers.get(table)
        if not buffer or not buffer[0]:
            return
        n, columns = buffer
        self._check_not_null(table, n, columns)
        self.buffers[table] = [0, {}]
        self.row_counts[table] = self.row_counts.get(table, 0) + n
        types = self.types[table]
        arrays = []
        fields = []
        for col in types:
            cell = columns.get(col)
            if cell is None:
                continue
            at = arrow_type(types[col])
            arrays.append(self.column_array(cell, n, at))
            fields.append(pa.field(col, at))
        data = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        folder = Path(self.config.out_dir) / safe_folder(table)
        folder.mkdir(parents=True, exist_ok=True)
        self.file_counter += 1
        path = folder / f"c{self.chunk.index:05d}-a{self.attempt}-{self.file_counter:04d}.parquet"
        pq.write_table(data, path, compression=self.config.compression)
        self.files.setdefault(table, []).append(str(path))

    def _check_not_null(self, table: str, n: int, columns: dict[str, Cell]) -> None:
        """A key column that has values but not in every row: a null the column cannot hold
        (dlt 1.31 fails the normalize job: ``CannotCoerceNullException``). A key with no
        value at all is the package-level check's (``UnboundColumnException``)."""
        spec = self.config.specs[self.chunk.table_name]
        if table != spec.root:
            return
        for col in spec.not_null:
            cell = columns.get(col)
            if cell is not None and len(cell[0]) < n:
                raise TaskFailure("not_null", table=table, column=col)

    def column_array(self, cell: Cell, n: int, arrow_type: Any) -> Any:
        """The Arrow array of ``n`` rows of one column from its sparse cell.

        Text is most of the cells of API data, and pyarrow converts a list of str one object
        at a time; the C path writes the string buffers directly (and needs no scatter).
        """
        import pyarrow as pa

        rows, values = cell
        native = self.native
        if native is None:
            if len(rows) != n:
                # a sparse column: scatter its values into a row-long list of nulls
                full: list[Any] = [None] * n
                for row, value in zip(rows, values, strict=True):
                    full[row] = value
                values = full
            return pa.array(values, type=arrow_type)
        if arrow_type == pa.string():
            buffers = native.text_buffers(None if len(rows) == n else rows, values, n)
            if buffers is not None:
                validity, offsets, data = buffers
                return pa.Array.from_buffers(
                    arrow_type,
                    n,
                    [
                        None if validity is None else pa.py_buffer(validity),
                        pa.py_buffer(offsets),
                        pa.py_buffer(data),
                    ],
                )
        if len(rows) != n:
            values = native.scatter(rows, values, n)
        return pa.array(values, type=arrow_type)

    def flush_all(self) -> None:
        for table in list(self.buffers):
            self.flush(table)

    def facts(self, error: TaskError | None = None) -> ChunkFacts:
        """What this chunk reports to the driver (see :mod:`.facts`)."""
        return ChunkFacts(
            chunk=self.chunk.index,
            attempt=self.attempt,
            tables={
                t: TableFact(self.table_first[t], self.parents[t], self.row_counts.get(t, 0))
                for t in self.parents
            },
            table_sources=dict(self.table_source),
            columns=dict(self.new_columns),
            files={t: tuple(paths) for t, paths in self.files.items()},
            bad=tuple(self.bad),
            bad_count=self.bad_count,
            discarded_rows=self.discarded_rows,
            error=error,
        )


#: Lines with more opening brackets than this have their nesting depth measured: deeper items
#: cannot be normalized (recursion in the flattening and the JSON encoders) and are bad
#: records. Counting brackets runs at memory speed; only such lines pay for the walk.
MAX_DEPTH = 400
#: Lines with more keys than this have their widest row measured: a row of more values than
#: this would make a table no destination loads in reasonable time (200,000 columns took
#: DuckDB over ten minutes), so such a line is a bad record. Again counted at memory speed.
MAX_WIDTH = 30_000
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadLine(ValueError):
    """A line that cannot be normalized; the message is the one-line cause."""


def _reject_constant(name: str) -> Any:
    raise BadLine(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadLine(f"number {text} is out of the range of a double")
    return value


def _depth(item: Any) -> int:
    """Nesting depth of an item, without recursion (an item may be nested past the limit)."""
    deepest = 0
    stack = [(item, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        if type(value) is dict:
            stack.extend((v, depth + 1) for v in value.values() if type(v) in (dict, list))
        elif type(value) is list:
            stack.extend((v, depth + 1) for v in value if type(v) in (dict, list))
    return deepest


def _widest_row(item: Any) -> int:
    """The most values one row of the item holds (nested dicts flatten into their row; list
    elements are rows of their own)."""
    widest = 0
    rows = [item]
    while rows:
        width = 0
        stack = [rows.pop()]
        while stack:
            value = stack.pop()
            inner = value.values() if type(value) is dict else value
            for v in inner:
                if type(v) is dict:
                    stack.append(v)
                elif type(v) is list:
                    rows.extend(x for x in v if type(x) in (dict, list))
                    width += 1
                else:
                    width += 1
        widest = max(widest, width)
    return widest


def _check_strings(item: Any) -> None:
    """Every key and string value must be encodable as UTF-8 (no unpaired surrogate)."""
    stack = [item]
    while stack:
        value = stack.pop()
        if type(value) is dict:
            for key, inner in value.items():
                stack.append(key)
                stack.append(inner)
        elif type(value) is list:
            stack.extend(value)
        elif type(value) is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                bad = value[error.start : error.end]
                raise BadLine(
                    f"unpaired surrogate {bad!r} in a string: not encodable as UTF-8"
                ) from None


def parse_line(raw: bytes, scan: Callable[[bytes], tuple[int, int, bool]] = scan_line) -> Any:
    """One line of JSON as an item, or :class:`BadLine` with a one-line cause.

    orjson first; a line it refuses (an integer beyond 64 bits, a BOM, an escape of an
    unpaired surrogate ...) goes through the json module, which keeps exact integers but is
    made as strict as orjson otherwise: NaN, Infinity and numbers out of a double's range
    are invalid JSON on every line (dlt 1.31 rejects them in files too). Items nested deeper
    than :data:`MAX_DEPTH` are bad records. ``scan`` is :func:`scan_line` or its C twin.
    """
    item: Any
    brackets, keys, nineteen = scan(raw)
    if nineteen and _LONG_INT.search(raw) is not None:
        item = _parse_strict(raw, None)
    else:
        try:
            item = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            item = _parse_strict(raw, str(error))
    if MARK_BYTES in raw:  # Decimal, date, time or bytes written by extract
        item = decode_item(item)
    if brackets > MAX_DEPTH and _depth(item) > MAX_DEPTH:
        raise BadLine(f"nested deeper than {MAX_DEPTH} levels")
    if keys > MAX_WIDTH and (width := _widest_row(item)) > MAX_WIDTH:
        raise BadLine(f"a row of {width} values: wider than {MAX_WIDTH} columns")
    return item


def _parse_strict(raw: bytes, orjson_error: str | None) -> Any:
    try:
        item = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)
    except BadLine:
        raise
    except RecursionError:
        raise BadLine(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise BadLine(orjson_error or str(error)) from None
    if _SURROGATE.search(raw):
        _check_strings(item)
    return item


def run_chunk(
    config: EngineConfig, chunk: Chunk, forced: Mapping[str, Mapping[str, str]], attempt: int
) -> ChunkFacts:
    """Normalize one chunk; failures of the data come back as data, storage errors raise."""
    engine = ChunkEngine(config, chunk, forced, attempt)
    spec = config.specs[chunk.table_name]
    process = engine.process_item
    scan = scan_line if engine.native is None else engine.native.scan_line
    try:
        for number, raw in iter_lines(chunk, config.remote):
            if not raw or raw.isspace():
                continue
            try:
                item = parse_line(raw, scan)
            except BadLine as exc:
                engine.bad_count += 1
                if config.on_bad_record == "fail":
                    raise TaskFailure("bad_record", line=number, message=str(exc)) from None
                if config.on_bad_record == "quarantine":
                    engine.bad.append(
                        (number, str(exc), raw.decode("utf-8", "replace").rstrip("\r"))
                    )
                continue
            process(item, spec, number)
        engine.flush_all()
    except TaskFailure as failure:
        return engine.facts(TaskError(failure.kind, **failure.info))
    except OSError:
        raise  # storage, not data: the caller reports it with the path (and Spark retries)
    except Exception as exc:
        import traceback

        return engine.facts(
            TaskError(
                "internal",
                line=engine.line,
                message=f"{type(exc).__name__}: {exc}",
                traceback=traceback.format_exc(),
            )
        )
    return engine.facts()
