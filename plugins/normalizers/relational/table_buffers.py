"""The rows of each table of one task, column by column, until they become a Parquet file.

A table's buffer holds sparse columns (:data:`~.native.Cell`): a wide table's rows fill few
of its columns, so nulls are not stored. Every ``flush_rows`` rows (and at the chunk's end)
the buffer becomes one Arrow table and one Parquet file in the table's folder; a text
column's Arrow buffers are written by the C path directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.plugins.normalizers.relational.facts import TaskError
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.plugins.normalizers.relational.native import Cell, NativeLoops
from loadstone.plugins.normalizers.relational.task import (
    Chunk,
    EngineConfig,
    RootSpec,
    TaskFailure,
)
from loadstone.schema.decimals import DEFAULT_SHAPE
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pyarrow as pa


#: the Arrow types (as text) whose buffers C writes: ``text_buffers`` for text, else
#: ``fixed_buffers`` with its kind code
_TEXT = -1
_NATIVE_KINDS = {"string": _TEXT, "int64": 0, "double": 1, "bool": 2, "timestamp[us, tz=UTC]": 3}
#: a column of rows the native core built: (name, validity bitmap or None, the type's
#: buffers: offsets and data of text, else the values)
ColumnBuffers = tuple[str, bytes | None, bytes] | tuple[str, bytes | None, bytes, bytes]


class TableBuffer:
    """The rows of one table not written yet: how many, and their values by column."""

    __slots__ = ("columns", "rows")

    def __init__(self) -> None:
        self.rows = 0
        self.columns: dict[str, Cell] = {}


def put(columns: dict[str, Cell], n: int, col: str, value: TDataItem) -> None:
    """Place ``value`` in row ``n`` of ``col`` (a later value for the same row wins)."""
    cell = columns.get(col)
    if cell is None:
        columns[col] = ([n], [value])
    elif cell[0][-1] == n:
        cell[1][-1] = value
    else:
        cell[0].append(n)
        cell[1].append(value)


def discard(columns: dict[str, Cell], n: int) -> bool:
    """Take back the values row ``n`` already placed (its row is dropped); always False."""
    for col, (rows, values) in list(columns.items()):
        if rows[-1] == n:
            rows.pop()
            values.pop()
            if not rows:
                del columns[col]
    return False


class TableBuffers:
    """Every table's buffer, and the files and row counts written so far."""

    __slots__ = (
        "_attempt",
        "_chunk",
        "_compression",
        "_decimals",
        "_file_counter",
        "_native",
        "_out_dir",
        "_spec",
        "_types",
        "files",
        "row_counts",
        "tables",
    )

    def __init__(
        self,
        config: EngineConfig,
        chunk: Chunk,
        attempt: int,
        types: dict[str, dict[str, str]],
        native: NativeLoops | None,
    ) -> None:
        self._out_dir = Path(config.out_dir)
        self._compression = config.compression
        self._decimals = config.decimals
        self._chunk = chunk
        self._attempt = attempt
        self._spec: RootSpec = config.specs[chunk.table_name]
        #: the task's column types (``ColumnTypes.by_table``): the files' column order
        self._types = types
        self._native = native
        self._file_counter = 0
        self.tables: dict[str, TableBuffer] = {}
        self.row_counts: dict[str, int] = {}
        self.files: dict[str, list[str]] = {}

    def of(self, table: str) -> TableBuffer:
        buffer = self.tables.get(table)
        if buffer is None:
            buffer = self.tables[table] = TableBuffer()
        return buffer

    def flush(self, table: str) -> None:
        """Write the table's buffered rows as one Parquet file and empty the buffer."""
        import pyarrow as pa

        from loadstone.normalizers.contract import arrow_type

        buffer = self.tables.get(table)
        if not buffer or not buffer.rows:
            return
        n, columns = buffer.rows, buffer.columns
        self._check_not_null(table, n, columns)
        self.tables[table] = TableBuffer()
        types = self._types[table]
        decimals = self._decimals.get(table, {})
        arrays = []
        fields = []
        for col in types:
            cell = columns.get(col)
            if cell is None:
                continue
            if types[col] == "decimal":  # the column's own precision and scale
                shape = decimals.get(col, DEFAULT_SHAPE)
                at = arrow_type("decimal", shape.precision, shape.scale)
            else:
                at = arrow_type(types[col])
            arrays.append(self._column_array(cell, n, at))
            fields.append(pa.field(col, at))
        self._write(table, n, pa.Table.from_arrays(arrays, schema=pa.schema(fields)))
        if self._native is not None:
            # the values are written: free them now, fetching objects ahead (dropping the
            # lists freed them one cache miss at a time: 6% of a chunk's CPU)
            self._native.release_cells(columns)

    def write_columns(self, table: str, n: int, records: list[ColumnBuffers]) -> None:
        """Write ``n`` rows the native core built (:mod:`.native_core`) as one Parquet file,
        columns in the task's order as :meth:`flush` writes them."""
        import pyarrow as pa

        from loadstone.normalizers.contract import arrow_type

        given = {record[0]: record[1:] for record in records}
        types = self._types[table]
        arrays = []
        fields = []
        for col in types:
            buffers = given.get(col)
            if buffers is None:
                continue
            at = arrow_type(types[col])
            validity, *rest = buffers
            arrays.append(
                pa.Array.from_buffers(
                    at,
                    n,
                    [
                        None if validity is None else pa.py_buffer(validity),
                        *map(pa.py_buffer, rest),
                    ],
                )
            )
            fields.append(pa.field(col, at))
        self._write(table, n, pa.Table.from_arrays(arrays, schema=pa.schema(fields)))

    def _write(self, table: str, n: int, data: pa.Table) -> None:
        """One Parquet file of the table's next ``n`` rows, counted and listed."""
        import pyarrow.parquet as pq

        self.row_counts[table] = self.row_counts.get(table, 0) + n
        folder = self._out_dir / safe_folder(table)
        folder.mkdir(parents=True, exist_ok=True)
        self._file_counter += 1
        name = f"c{self._chunk.index:05d}-a{self._attempt}-{self._file_counter:04d}.parquet"
        path = folder / name
        # no min/max statistics: every reader scans these files whole (measured: 15% of a
        # chunk's Parquet encoding, 1% of its CPU, on GitHub events)
        pq.write_table(data, path, compression=self._compression, write_statistics=False)
        self.files.setdefault(table, []).append(str(path))

    def flush_all(self) -> None:
        for table in list(self.tables):
            self.flush(table)

    def _check_not_null(self, table: str, n: int, columns: dict[str, Cell]) -> None:
        """A key column that has values but not in every row: a null the column cannot hold
        (dlt 1.31 fails the normalize job: ``CannotCoerceNullException``). A key with no
        value at all is the package-level check's (``UnboundColumnException``)."""
        spec = self._spec
        if table != spec.root:
            return
        for col in spec.not_null:
            cell = columns.get(col)
            if cell is not None and len(cell[0]) < n:
                raise TaskFailure(TaskError("not_null", table=table, column=col))

    def _column_array(self, cell: Cell, n: int, arrow_type: pa.DataType) -> pa.Array:
        """The Arrow array of ``n`` rows of one column from its sparse cell.

        Text is most of the cells of API data, and pyarrow converts a list of str one object
        at a time; the C path writes the string buffers directly (and needs no scatter), and
        so it does for integers, doubles, booleans and UTC timestamps. A value the C path does
        not take (a big int, another time zone) leaves the column to pyarrow.
        """
        import pyarrow as pa

        rows, values = cell
        native = self._native
        if native is None:
            if len(rows) != n:
                # a sparse column: scatter its values into a row-long list of nulls
                full: list[TDataItem] = [None] * n
                for row, value in zip(rows, values, strict=True):
                    full[row] = value
                values = full
            return pa.array(values, type=arrow_type)
        sparse_rows = None if len(rows) == n else rows
        kind = _NATIVE_KINDS.get(str(arrow_type))
        buffers: tuple[bytes | bytearray | None, ...] | None = None
        if kind == _TEXT:
            buffers = native.text_buffers(sparse_rows, values, n)
        elif kind is not None:
            buffers = native.fixed_buffers(sparse_rows, values, n, kind)
        if buffers is not None:  # (validity or None, then the type's own buffers)
            validity, *rest = buffers
            return pa.Array.from_buffers(
                arrow_type,
                n,
                [None if validity is None else pa.py_buffer(validity), *map(pa.py_buffer, rest)],
            )
        if len(rows) != n:
            values = native.scatter(rows, values, n)
        return pa.array(values, type=arrow_type)
