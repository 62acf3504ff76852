"""One package into the Spark catalog: stage everything, then rename into place, loads row last.

The steps and why they are safe to interrupt are in ``table_files.py``; this module decides
which tables take part and in what order:

1. take back any earlier attempt of this load id in every table the schema knows;
2. write each table's rows into its staging folder (a value that does not fit fails here,
   before anything is visible), and the state and loads rows into theirs (files made here);
   ``merge`` chains stage their tables' new contents, computed by Spark (``merge.py``);
3. ``replace`` and ``merge`` chains: set the current files of their tables aside;
4. rename the staged data files in, then the state row, then (last) the ``_dlt_loads`` row;
5. forget the set-aside files; the user's session lists the changed tables' files anew.

An exception before step 4's last rename takes the attempt back (step 1 again) and is
reported as :class:`LoadFailed` naming the table it happened in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from loadstone.destinations.contract import LoadRequest, SchemaVersionRow
from loadstone.exceptions import DestinationError, LoadFailed
from loadstone.plugins.destinations.spark.merge import is_keyed, merged_chain
from loadstone.plugins.destinations.spark.source import list_files, table_frame
from loadstone.plugins.destinations.spark.types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from loadstone.plugins.destinations.spark.table_files import TableFolder
    from loadstone.plugins.destinations.tables import TableModel


class SparkClient(Protocol):
    """What a package's load uses of the client that runs it
    (:class:`~loadstone.plugins.destinations.spark.client.SparkClient` is the one): named by
    protocol, so that the client imports this module and this one does not import it back."""

    @property
    def session(self) -> SparkSession: ...

    def qualified(self, table: str) -> str: ...

    def table_ident(self, table: str) -> str: ...

    def refresh(self, table: str) -> None: ...

    def read_table(self, table: str) -> DataFrame: ...

    def folders(self, tables: Sequence[str]) -> dict[str, TableFolder]: ...

    def row_file(self, name: str, values: Sequence[object]) -> bytes: ...

    def system_rows(
        self, request: LoadRequest, version: SchemaVersionRow
    ) -> dict[str, list[object]]: ...


class PackageLoad:
    """The state of one attempt to load one package."""

    def __init__(
        self,
        client: SparkClient,
        model: TableModel,
        request: LoadRequest,
        version: SchemaVersionRow,
        tables: set[str],
    ) -> None:
        """``tables``: the dataset's tables (lower case) after the schema's migration."""
        self.client = client
        self.model = model
        self.request = request
        self.load_id = request.load_id
        self.system_rows = client.system_rows(request, version)
        self.current: str | None = None
        #: tables whose files this attempt changed (the user's session lists them anew)
        self.touched: set[str] = set()
        known = [t for t in model.data_tables() if t.lower() in tables]
        system = [client.table_ident(name) for name in self.system_rows]
        self.folders: dict[str, TableFolder] = client.folders(known + system)

    def run(self) -> None:
        self._undo()
        try:
            staged, rewritten = self._stage()
            for table in rewritten:
                self.current = table
                self.touched.add(table)
                self.folders[table].set_aside(self.load_id)
            for table in [*staged, *map(self.client.table_ident, self.system_rows)]:
                self.current = table
                self.touched.add(table)
                self.folders[table].publish(self.load_id)
        except BaseException as exc:
            self.touched.update(self.folders)  # taken back: any table may have changed
            self._undo()
            if isinstance(exc, DestinationError) or not isinstance(exc, Exception):
                raise
            files = self._files(self.current)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise LoadFailed(self.load_id, self.current, reason, files) from exc
        finally:
            self._refresh()
        for folder in self.folders.values():
            folder.forget_replaced(self.load_id)

    def _files(self, table: str | None) -> list[str]:
        spec = self.request.tables.get(table) if table else None
        return [str(f) for f in list_files(spec)] if spec else []

    def _undo(self) -> None:
        for table, folder in self.folders.items():
            if folder.undo(self.load_id):
                self.touched.add(table)

    def _refresh(self) -> None:
        for table in self.folders:
            if table in self.touched:
                self.client.refresh(table)

    def _roots(self) -> list[str]:
        roots: list[str] = []
        for table in self.request.tables:
            root = self.model.root(table)
            if root not in roots:
                roots.append(root)
        return roots

    def _package_frames(self) -> dict[str, DataFrame]:
        """The package's rows of each table, shaped like the table (nothing runs yet)."""
        frames: dict[str, DataFrame] = {}
        for table, spec in self.request.tables.items():
            self.current = table
            if table not in self.model.tables:
                raise LoadFailed(self.load_id, table, "the table is not in the package's schema")
            files = list_files(spec)
            columns = [(c.name, spark_type(c, table)) for c in self.model.typed_columns(table)]
            if files and columns:
                frames[table] = table_frame(self.client.session, files, columns)
        return frames

    def _rewrites(self, frames: dict[str, DataFrame]) -> list[str]:
        """Tables whose current files go (``replace``, keyed ``merge``); merged contents are
        put into ``frames``."""
        rewritten: list[str] = []
        for root in self._roots():
            disposition = self.model.disposition(root)
            chain = [t for t in [root, *self.model.nested_tables(root)] if t in self.folders]
            if disposition == "replace":
                rewritten += chain
            elif disposition == "merge" and is_keyed(self.model, root):
                self.current = root
                existing = {t: self._current_rows(t) for t in chain}
                package = {t: frames[t] for t in chain if t in frames}
                frames.update(merged_chain(self.model, root, package, existing, self.load_id))
                rewritten += chain
        return rewritten

    def _current_rows(self, table: str) -> DataFrame:
        return self.client.read_table(table)

    def _stage(self) -> tuple[list[str], list[str]]:
        """Write every table's new rows and the system rows to staging (see module docstring);
        returns the data tables staged and the tables whose current files are to go."""
        frames = self._package_frames()
        rewritten = self._rewrites(frames)
        for table, frame in frames.items():
            self.current = table
            frame.write.mode("overwrite").parquet(self.folders[table].staging(self.load_id))
        for name, values in self.system_rows.items():
            self.current = self.client.table_ident(name)
            data = self.client.row_file(name, values)
            self.folders[self.current].stage_file(self.load_id, "row.parquet", data)
        self.current = None
        return list(frames), rewritten
