"""The native engine core: a chunk's JSON lines into Arrow column buffers, without a Python
object per value (``normalize.engine_core = "native"``).

``_native_core.cpp`` parses each line with simdjson and writes its values straight into
per-table column buffers (validity, offsets and data, int64 / double / bool), which become
the same Parquet files the Python engine writes. It makes no decision of its own that the
Python engine makes: every new key path, table and column is decided by the engine's own
objects (:class:`~.names.ColumnNames`, :class:`~.column_types.ColumnTypes`,
:class:`~.rows.TablesMet`), called back through :class:`NativeHooks` once each, so the
facts a chunk reports are the Python engine's. Whatever the core does not do exactly (a
value whose type is not its column's, an integer beyond int64, a contract that drops
something, a bad line ...) makes it give up the chunk with a one-line reason
(``NativeFallback``), and the Python engine runs the whole chunk instead: the result is
the Python engine's either way. Specs the core never takes (row keys from a primary key,
null checks, gzipped input ...) are known before it starts (:func:`skip_reason`).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from loadstone.plugins.normalizers.relational import row_keys
from loadstone.plugins.normalizers.relational.json_lines import chunk_bytes
from loadstone.plugins.normalizers.relational.names import ColumnNames, list_table_parts
from loadstone.plugins.normalizers.relational.task import TaskFailure

if TYPE_CHECKING:
    from loadstone.plugins.normalizers.relational.column_types import ColumnTypes
    from loadstone.plugins.normalizers.relational.facts import ChunkFacts
    from loadstone.plugins.normalizers.relational.row_typing import Cursor
    from loadstone.plugins.normalizers.relational.rows import RowFlattener, TablesMet
    from loadstone.plugins.normalizers.relational.table_buffers import TableBuffers
    from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig, RootSpec
    from loadstone.typing import TDataItem

try:
    from loadstone.plugins.normalizers.relational import _native_core
except ImportError:  # built without a C++ compiler or simdjson: the Python engine runs
    _native_core = None  # type: ignore[assignment]  # no C++ toolchain: the Python engine runs

#: whether the native core is importable here (the test suite requires it)
CORE_AVAILABLE = _native_core is not None

_log = logging.getLogger(__name__)
_said_unavailable = False

#: ``ChunkFacts.core`` of a chunk the native core wrote
NATIVE = "native"


def say_unavailable_once() -> None:
    """``engine_core = "native"`` where the core is not built: the Python engine runs, and
    the driver says so once per process."""
    global _said_unavailable
    if CORE_AVAILABLE or _said_unavailable:
        return
    _said_unavailable = True
    _log.warning(
        "normalize.engine_core = native, but loadstone's native core (_native_core, C++ and "
        "simdjson) is not built here: the Python engine runs. Install libsimdjson-dev and a "
        "C++ compiler, then reinstall loadstone"
    )


def skip_reason(config: EngineConfig, chunk: Chunk) -> str | None:
    """Why the native core does not take this chunk at all, or None when it tries."""
    if not CORE_AVAILABLE:
        return "not built"
    if not config.native:  # normalize.native = false rules every C path out: the reference
        return "normalize.native = false"
    spec = config.specs[chunk.table_name]
    if chunk.path.endswith(".gz"):
        return "a gzipped file"
    if spec.primary_key or spec.row_hash:
        return "row keys from the primary key or the whole item"
    if spec.unlinked or spec.own_root_key:
        return "nested tables with keys of their own"
    if spec.not_null or spec.null_refused:
        return "columns that refuse nulls"
    return None


class NativeHooks:
    """What the native core asks the Python engine, once per new name, table or column."""

    __slots__ = (
        "_chunk",
        "_cursor",
        "_names",
        "_rows",
        "_spec",
        "_tables",
        "_types",
        "drawn",
    )

    def __init__(
        self,
        chunk: Chunk,
        spec: RootSpec,
        names: ColumnNames,
        types: ColumnTypes,
        tables: TablesMet,
        rows: RowFlattener,
        cursor: Cursor,
    ) -> None:
        self._chunk = chunk
        self._spec = spec
        self._names = names
        self._types = types
        self._tables = tables
        self._rows = rows
        self._cursor = cursor
        #: the root keys drawn so far (given back when the chunk is handed back)
        self.drawn: list[str] = []

    def name(self, prefix: tuple[str, ...], key: str) -> tuple[tuple[str, ...], str]:
        """(normalized parts, column) of ``key`` under ``prefix``, as the flattening names it."""
        names = self._names.names_under(prefix)
        entry = names.get(key)
        if entry is None:
            entry = self._names.name_of(names, prefix, key)
        return entry

    def root(self, line: int) -> bool:
        """The root table met on the chunk's first item (False: the contract refuses it)."""
        spec, tables = self._spec, self._tables
        root = spec.root
        if not spec.existing_table and not tables.admits(spec, root):
            return False
        if root not in tables.parents:
            tables.meet(root, None, (self._chunk.index, line, 0))
            self._names.table_source.setdefault(root, spec.source_name)
        self._types.by_table.setdefault(root, {})
        return True

    def table(
        self,
        parent_parts: tuple[str, ...],
        parts: tuple[str, ...],
        parent: str,
        line: int,
        seq: int,
    ) -> tuple[tuple[str, ...], str] | None:
        """The nested table of a list at ``parts`` under a row of ``parent`` (None: refused)."""
        table_parts = parent_parts + list_table_parts(parts)
        table = self._names.table_name(table_parts)
        if table not in self._tables.parents:
            self._cursor.line, self._cursor.seq = line, seq
            if not self._rows._meet(
                table, parent, self._spec
            ):  # the flattening's own rule, not a copy
                return None
        self._types.by_table.setdefault(table, {})
        return table_parts, table

    def root_key(self) -> str:
        """A root row's key: the Python engine's own function, once per root row."""
        key = row_keys.new_random_id()
        self.drawn.append(key)
        return key

    def column_type(self, table: str, column: str) -> str | None:
        """The type the task knows for a column (the schema's, or decided earlier)."""
        types = self._types.by_table.get(table)
        return None if types is None else types.get(column)

    def new_column(
        self, table: str, column: str, value: TDataItem, vt: str, line: int, seq: int
    ) -> str | None:
        """:meth:`~.column_types.ColumnTypes.new_column` for a column's first value."""
        self._cursor.line, self._cursor.seq = line, seq
        position = (self._chunk.index, line, seq)
        return self._types.new_column(table, column, value, vt, self._spec, position)


def run_native(
    config: EngineConfig,
    chunk: Chunk,
    hooks: NativeHooks,
    buffers: TableBuffers,
) -> str | None:
    """Run the chunk through the native core and write its tables; None when it did, else
    the reason it handed the chunk back (nothing was written then)."""
    assert _native_core is not None  # skip_reason said it is built
    spec = config.specs[chunk.table_name]
    reason = _run_core(config, chunk, spec, hooks, buffers)
    if reason is not None:  # the Python engine draws the keys the core drew (and dropped)
        row_keys.give_back(hooks.drawn)
    return reason


def _run_core(
    config: EngineConfig, chunk: Chunk, spec: RootSpec, hooks: NativeHooks, buffers: TableBuffers
) -> str | None:
    assert _native_core is not None  # skip_reason said it is built
    with chunk_bytes(chunk, config.remote) as (data, size):
        try:
            flushes = _native_core.run_chunk(
                data,
                size,
                hooks,
                config.load_id,
                spec.root,
                chunk.index,
                spec.max_nesting,
                config.flush_rows,
                spec.propagate_root_key,
            )
        except _native_core.NativeFallback as fallback:
            return str(fallback)
        except TaskFailure as failure:  # a contract said no: the Python engine reports it
            return f"a contract failure ({failure.error.kind})"
        except OSError:
            raise
        except Exception as error:  # correctness first: the Python engine decides
            return f"internal: {type(error).__name__}: {error}"
    for table, rows, columns in flushes:
        buffers.write_columns(table, rows, columns)
    return None


def parse_lines(data: bytes) -> int:
    """simdjson over every line of ``data``, nothing built: the benchmark's parser floor."""
    assert _native_core is not None, "the native core is not built"
    return int(_native_core.parse_lines(data))


def outcome(facts: Iterable[ChunkFacts]) -> dict[str, int]:
    """Chunks per core (``native``, ``python``, each fallback reason): for the log and the
    benchmark."""
    return dict(collections.Counter(f.core for f in facts))
