"""What a compatibility scenario sees: a pipeline factory and a snapshot of what was loaded.

This module imports neither loadstone nor dlt: a scenario receives the library as ``dlt``
(``import loadstone as dlt`` in the test, ``import dlt`` in the recorder), so the same
program runs under both. Snapshots read the DuckDB file with ``duckdb`` itself, so they do
not depend on either library's query API. Values that differ run to run by design (load
ids, row hashes, timestamps of the load) are left out; everything else must be equal.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import decimal
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: columns whose values are ids or instants of a particular run
VOLATILE = ("_dlt_load_id", "_dlt_id", "_dlt_parent_id", "_dlt_root_id")

#: the in-memory DuckDB every snapshot attaches its file to: making a DuckDB database costs
#: about 25 ms of CPU, attaching a file about 2 ms, and a scenario takes several snapshots
_READER: list[Any] = []


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Any]:
    """A connection to the DuckDB file ``path``, read-only, as ``duckdb.connect(path,
    read_only=True)`` gives one (its catalog is the default); detached when done."""
    import duckdb

    if not _READER:
        _READER.append(duckdb.connect(":memory:"))
    conn = _READER[0].cursor()
    path = Path(path).absolute()
    try:
        quoted = str(path).replace("'", "''")
        conn.execute(f"ATTACH '{quoted}' (READ_ONLY)")  # named from the file, as connect does
        (catalog,) = conn.execute(
            "SELECT database_name FROM duckdb_databases() WHERE path = ?", [str(path)]
        ).fetchone()
        conn.execute(f'USE "{catalog}"')
        try:
            yield conn
        finally:
            conn.execute("USE memory")
            conn.execute(f'DETACH "{catalog}"')
    finally:
        conn.close()


def columns_of(conn: Any, dataset: str, where: str = "") -> dict[str, list[tuple[Any, ...]]]:
    """Each table of ``dataset`` (by name) with its columns' ``(name, type, is_nullable)`` in
    order: one catalog query for the dataset, not one per table (DuckDB's information_schema
    costs ~4 ms a query, and a scenario takes several snapshots of several tables)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table, *column in conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        f"WHERE table_schema = ? {where} ORDER BY table_name, ordinal_position",
        [dataset],
    ).fetchall():
        out.setdefault(table, []).append(tuple(column))
    return out


def plain(value: Any) -> Any:
    """A JSON value standing for ``value`` (same text for the same value in both libraries)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in sorted(value.items())}
    return str(value)


class Context:
    """One scenario run: its folder, the library under test and helpers."""

    def __init__(self, dlt: Any, workdir: Path, library: str) -> None:
        self.dlt = dlt
        self.workdir = workdir
        self.library = library  # "dlt" or "loadstone"

    def pipeline(self, name: str, **kwargs: Any) -> Any:
        kwargs.setdefault("destination", "duckdb")
        kwargs.setdefault("pipelines_dir", str(self.workdir / "pipelines"))
        return self.dlt.pipeline(name, **kwargs)

    def tables(self, pipeline: Any, *, system: bool = False, keep: tuple[str, ...] = ()) -> dict:
        """Every table of the pipeline's dataset: sorted column names and sorted rows."""
        path = self.workdir / f"{pipeline.pipeline_name}.duckdb"
        if not path.exists():
            return {}
        with read_only(path) as conn:
            out: dict[str, Any] = {}
            for name, described in columns_of(conn, pipeline.dataset_name).items():
                if name.startswith("_dlt") and not system:
                    continue
                cols = [column[0] for column in described]
                shown = [c for c in cols if c not in VOLATILE or c in keep]
                rows = conn.execute(
                    f"SELECT {', '.join(chr(34) + c + chr(34) for c in shown) or '1'} "
                    f'FROM "{pipeline.dataset_name}"."{name}"'
                ).fetchall()
                out[name] = {
                    "columns": sorted(cols),
                    "rows": sorted((plain(list(r)) for r in rows), key=json.dumps),
                }
            return out

    def sql(self, pipeline: Any, query: str) -> list[Any]:
        with read_only(self.workdir / f"{pipeline.pipeline_name}.duckdb") as conn:
            return plain([list(r) for r in conn.execute(query).fetchall()])

    def attempt(self, action: Callable[[], Any]) -> dict[str, Any]:
        """The outcome of ``action``: ``{"ok": result}`` or the error's class, step and cause."""
        try:
            return {"ok": plain(action())}
        except Exception as exc:  # the outcome is what we compare
            out: dict[str, Any] = {"error": type(exc).__name__}
            if hasattr(exc, "step"):
                out["step"] = exc.step
            cause = getattr(exc, "exception", None)
            if cause is not None:
                out["cause"] = type(cause).__name__
            return out

    def run_script(self, body: str, name: str = "my_script.py") -> str:
        """Run ``body`` as a script (``dlt`` imported as the library under test); its stdout."""
        header = "import loadstone as dlt\n" if self.library == "loadstone" else "import dlt\n"
        script = self.workdir / name
        script.write_text(header + body, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=self.workdir,
            capture_output=True,
            text=True,
            env={**os.environ},
            check=False,
        )
        if done.returncode != 0:
            return f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
        return done.stdout.strip()


def decode_state(text: str) -> dict[str, Any]:
    """The ``state`` column of ``_dlt_pipeline_state`` (zlib-compressed JSON in base64)."""
    return json.loads(zlib.decompress(base64.b64decode(text)))


def run_scenario(scenario: Callable[[Context], Any], dlt: Any, library: str, workdir: Path) -> Any:
    """Run ``scenario`` in ``workdir`` (as the working directory) and return its outcome."""
    workdir.mkdir(parents=True, exist_ok=True)
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        return plain(scenario(Context(dlt, workdir, library)))
    finally:
        os.chdir(previous)


def destination_tables(db: Path, dataset: str = "d") -> dict[str, Any]:
    """Each data table of ``dataset`` in the DuckDB file ``db``: its columns as
    ``[name, type, nullable]`` and its row count (what the source tests and their dlt
    recorders compare)."""
    out: dict[str, Any] = {}
    if not Path(db).exists():
        return out
    with read_only(db) as conn:
        tables = columns_of(conn, dataset, "and table_name not like '_dlt%'")
        for name, columns in tables.items():
            count = conn.execute(f'select count(*) from "{dataset}"."{name}"').fetchone()
            out[name] = {"columns": [list(c) for c in columns], "rows": count[0] if count else 0}
    return out
