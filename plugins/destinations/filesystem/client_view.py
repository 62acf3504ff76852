"""What the table formats' writers and the dataset reader use of the client that made them.

:class:`~loadstone.plugins.destinations.filesystem.client.FilesystemClient` is the one client;
it makes a :class:`~.delta.DeltaWriter`, an :class:`~.iceberg.IcebergWriter` or a
:class:`~.reader.DatasetReader` on first use, handing itself over. They name it by these
protocols, so that the client imports them and they do not import the client back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from loadstone.plugins.destinations.filesystem.configuration import FilesystemConfiguration
    from loadstone.plugins.destinations.filesystem.delete_insert import Replacement
    from loadstone.plugins.destinations.filesystem.records import DatasetRecords
    from loadstone.plugins.destinations.filesystem.tables import TablePlan
    from loadstone.schema import Schema

__all__ = ["ClientView", "TableWriter"]


class TableWriter(Protocol):
    """A table format's writer (``delta.py``, ``iceberg.py``): commits and reads tables."""

    def commit(
        self,
        plan: TablePlan,
        files: Sequence[Path],
        load_id: str,
        replacement: Replacement | None = None,
    ) -> None: ...

    def read(self, table: str, columns: Sequence[str] | None = None) -> pa.Table | None: ...


class ClientView(Protocol):
    """The client's members its writers and reader use: where the dataset lies, how it is
    configured, its records and files, and the writer of a table format."""

    @property
    def fs(self) -> Any: ...  # an fsspec filesystem (fsspec ships no types)

    @property
    def config(self) -> FilesystemConfiguration: ...

    @property
    def dataset_name(self) -> str: ...

    @property
    def dataset_path(self) -> str: ...

    @property
    def records(self) -> DatasetRecords: ...

    @property
    def schema(self) -> Schema | None: ...

    def table_url(self, table: str) -> str: ...

    def _schema_name(self, schema_name: str | None = None) -> str: ...

    def table_files(
        self, table: str, schema_name: str | None = None
    ) -> list[tuple[str, str | None]]: ...

    def table_writer(self, table_format: str) -> TableWriter: ...
