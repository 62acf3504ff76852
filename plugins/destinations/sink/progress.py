"""The rows of each table a sink function already accepted, kept in the load package.

A sink has no transaction: what the function accepted is gone from our hands. So after every
batch the function returns from, the count of rows it accepted for that table is written
(atomically) into the package's folder; a retry, in this run or a later one, skips those rows
and sends the rest in batches from there, as dlt 1.31 resumes a custom destination's job
after its last successful batch. The file goes with the package once it is loaded.

The one window no file can close: a process killed after the function returned and before
the count was written sends that batch again (dlt has the same window).
"""

from __future__ import annotations

from pathlib import Path

from loadstone.storage.json_files import read_json_object, write_json_atomic

FILE_NAME = "sink_progress.json"


class Progress:
    """Rows delivered per table of one package (in memory when the package has no folder)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.rows: dict[str, int] = {}
        if path is not None and path.exists():
            stored = read_json_object(path, repair=f"delete {path} to send the package again")
            self.rows = {str(k): int(v) for k, v in (stored.get("rows") or {}).items()}

    @classmethod
    def of_package(cls, package_dir: Path | None) -> Progress:
        return cls(None if package_dir is None else Path(package_dir) / FILE_NAME)

    def delivered(self, table: str) -> int:
        return self.rows.get(table, 0)

    def accepted(self, table: str, rows: int) -> None:
        """``rows`` more rows of ``table`` were accepted by the function: remember it now."""
        self.rows[table] = self.delivered(table) + rows
        if self.path is not None:
            write_json_atomic(self.path, {"rows": self.rows})
