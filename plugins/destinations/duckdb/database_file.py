"""Opening a database file so that loads write smaller row groups (see ``row_groups.py``).

DuckDB takes a row group size only as an option of ATTACH: ``duckdb.connect`` refuses it as a
setting, and the file does not keep it. So loadstone opens an in-memory DuckDB and attaches
the file to it with ``(ROW_GROUP_SIZE n)``. Everything a user or the loader can see stays as
``duckdb.connect(path)`` leaves it:

* the catalog name: ATTACH without an alias derives it from the file name exactly as
  ``duckdb.connect`` does (``shop.duckdb`` -> ``shop``, ``a.b.duckdb`` -> ``a``,
  ``main.duckdb`` -> ``main_db``), and the client reads it back rather than guessing;
* the catalogs listed: the in-memory database ``memory`` is detached, which also lets a file
  named ``memory.duckdb`` keep its name (a scratch catalog stands in while it is detached);
* the spill folder ``<file>.tmp`` (an in-memory DuckDB would spill into ``./.tmp``);
* sharing in one process: DuckDB gives every ``duckdb.connect(path)`` of one file the same
  database, so a ``sql_client`` held open during a load works. A file attached twice fails
  ("Unique file handle conflict"), so all connections to one file share one *named*
  in-memory database (``:memory:loadstone-<hash of the path>``), which DuckDB shares the
  same way and closes, checkpointing the file, when the last connection closes;
* a file a plain ``duckdb.connect`` of this process already holds cannot be attached; it is
  opened the plain way then, joining that connection (with DuckDB's own row groups).

Another process holding the file gives DuckDB's own lock error, as ``duckdb.connect`` does.
"""

from __future__ import annotations

import hashlib
import os
import threading

import duckdb

from loadstone.plugins.destinations.duckdb.sql import literal, quote

#: Stands in for ``memory`` while it is detached; DuckDB never derives a name with a dot.
_SCRATCH = "loadstone.opening"
#: Opening is check-then-attach on a shared database: one thread at a time.
_opening = threading.Lock()


def open_database_file(path: str, row_group_size: int) -> duckdb.DuckDBPyConnection:
    """A connection to the file ``path`` whose inserts write ``row_group_size``-row groups."""
    path = os.path.abspath(path)
    database = f":memory:loadstone-{hashlib.sha256(path.encode()).hexdigest()[:16]}"
    with _opening:
        conn = duckdb.connect(database, config={"temp_directory": f"{path}.tmp"})
        try:
            _attach(conn, path, row_group_size)
        except duckdb.ResourceInUseException:
            conn.close()
            return duckdb.connect(path)
        except BaseException:
            conn.close()
            raise
    return conn


def _attach(conn: duckdb.DuckDBPyConnection, path: str, row_group_size: int) -> None:
    """Attach ``path`` (unless this shared database already has) and make it the default."""
    if _catalogs(conn, "NOT internal AND database_name = 'memory'"):
        conn.execute(f"ATTACH {literal(':memory:')} AS {quote(_SCRATCH)}")
        conn.execute(f"USE {quote(_SCRATCH)}")
        conn.execute("DETACH memory")
        conn.execute(f"ATTACH {literal(path)} (ROW_GROUP_SIZE {int(row_group_size)})")
    (catalog,) = _catalogs(conn, "path = ?", path)
    conn.execute(f"USE {quote(catalog)}")
    conn.execute(f"DETACH DATABASE IF EXISTS {quote(_SCRATCH)}")


def _catalogs(conn: duckdb.DuckDBPyConnection, where: str, *params: str) -> list[str]:
    rows = conn.execute(
        f"SELECT database_name FROM duckdb_databases() WHERE {where}", list(params)
    ).fetchall()
    return [row[0] for row in rows]
