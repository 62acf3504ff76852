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
  in-memory database (``:memory:loadstone-<n>``, the name the file is given while it is
  open), which DuckDB shares the same way and closes, checkpointing the file, when the last
  connection closes;
* a file a plain ``duckdb.connect`` of this process already holds cannot be attached; it is
  opened the plain way then, joining that connection (with DuckDB's own row groups).

Another process holding the file gives DuckDB's own lock error, as ``duckdb.connect`` does.

Making a DuckDB database costs about 30 ms of CPU (its catalog of built-in functions), more
than a small run's whole load; attaching a file to one costs about 2 ms. So when the last
connection loadstone handed out for a file closes (:func:`close_database_file`), the file is
detached (checkpointed, its lock released: another process may open it at once) and the
empty database is kept, idle, for the next open of *any* file (a few at most, oldest dropped
first), with the settings loads change reset; the file it then serves gets its own spill
folder, or a new database when the old one's spill folder was used (DuckDB cannot move it).
Only a database that ran nothing but loadstone's own statements is kept: one a user reached
(``sql_client``, ``dataset``, the native connection), who may have set or attached anything,
is closed as before, and its file keeps its name while any connection lives. A connection
closed other than through :func:`close_database_file` (or never closed) leaves the database
to DuckDB, as before.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections import OrderedDict

import duckdb

from loadstone.plugins.destinations.duckdb.sql import literal, quote

#: Stands in for ``memory`` while it is detached; DuckDB never derives a name with a dot.
_SCRATCH = "loadstone.opening"
#: Opening, closing and parking are check-then-act on a shared database: one at a time.
_opening = threading.Lock()
#: How many idle databases (files detached) are kept for the next open of a file.
IDLE_LIMIT = 2
#: database name -> a connection keeping that idle database alive, oldest first
_idle: OrderedDict[str, duckdb.DuckDBPyConnection] = OrderedDict()
#: path -> the name of the in-memory database the file is attached to (or was, if its
#: connections were dropped unclosed: the name then makes a new database)
_names: dict[str, str] = {}
#: path -> the connections :func:`open_database_file` handed out (weakly: a forgotten one
#: closes with DuckDB's garbage collection, and the file with it, as before)
_handed: dict[str, weakref.WeakSet[duckdb.DuckDBPyConnection]] = {}
#: paths whose open database a user reached through one of its connections: not kept idle
_reached: set[str] = set()
#: The global settings loads change, reset when a database is parked.
_LOAD_SETTINGS = ("memory_limit", "threads", "preserve_insertion_order", "TimeZone")
#: where the names of new databases come from
_numbers = itertools.count(1)


def open_database_file(path: str, row_group_size: int) -> duckdb.DuckDBPyConnection:
    """A connection to the file ``path`` whose inserts write ``row_group_size``-row groups."""
    path = os.path.abspath(path)
    with _opening:
        while True:  # twice at most: a new database has not spilled
            conn = _connect(path)
            try:
                _attach(conn, path, row_group_size)
                break
            except _SpillFolderUsed:  # an idle database that spilled cannot serve this file
                conn.close()
                _names[path] = _new_name()
            except duckdb.ResourceInUseException:
                _forget(conn, path)
                return duckdb.connect(path)
            except BaseException:
                _forget(conn, path)
                raise
        _handed.setdefault(path, weakref.WeakSet()).add(conn)
    return conn


def close_database_file(conn: duckdb.DuckDBPyConnection, *, reached: bool) -> None:
    """Close a connection of :func:`open_database_file`; the last one of its file parks the
    database unless a user ``reached`` one of them (see module docs). Any other connection
    is just closed."""
    with _opening:
        path = next((p for p, handed in _handed.items() if conn in handed), None)
        if path is None:
            conn.close()
            return
        handed = _handed[path]
        handed.discard(conn)
        if reached:
            _reached.add(path)
        if len(handed):  # others still use the file (or were closed behind our back)
            conn.close()
            return
        del _handed[path]
        if path in _reached:
            _reached.discard(path)
            conn.close()
            return
        name = _names.pop(path)
        keeper = duckdb.connect(name)
        conn.close()
        if not _parked(keeper, path):
            keeper.close()
            return
        _idle[name] = keeper
        while len(_idle) > IDLE_LIMIT:
            _idle.popitem(last=False)[1].close()


class _SpillFolderUsed(Exception):
    """The database spilled into its folder before, which DuckDB cannot move to another."""


def _connect(path: str) -> duckdb.DuckDBPyConnection:
    """A connection to the database the file has (or gets: an idle one, else a new one)."""
    name = _names.get(path)
    if name is None:
        name = next(reversed(_idle), None) or _new_name()
        _names[path] = name
    conn = duckdb.connect(name)
    keeper = _idle.pop(name, None)
    if keeper is not None:  # the idle database is joined: ``conn`` keeps it alive now
        keeper.close()
    return conn


def _forget(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """Close a connection that could not attach; the file has no database if no other
    of its connections is open."""
    conn.close()
    if not _handed.get(path):
        _names.pop(path, None)


def _new_name() -> str:
    return f":memory:loadstone-{os.getpid()}-{next(_numbers)}"


def _attach(conn: duckdb.DuckDBPyConnection, path: str, row_group_size: int) -> None:
    """Attach ``path`` (unless this shared database already has) and make it the default."""
    catalogs = _catalogs(conn)
    if "memory" in catalogs and catalogs["memory"] is None:  # a new database
        conn.execute(f"ATTACH {literal(':memory:')} AS {quote(_SCRATCH)}")
        conn.execute(f"USE {quote(_SCRATCH)}")
        conn.execute("DETACH memory")
    catalog = next((name for name, at in catalogs.items() if at == path), None)
    if catalog is None:  # new, or idle since another file was detached
        _spill_into(conn, f"{path}.tmp")
        conn.execute(f"ATTACH {literal(path)} (ROW_GROUP_SIZE {int(row_group_size)})")
        catalog = next(name for name, at in _catalogs(conn).items() if at == path)
    conn.execute(f"USE {quote(catalog)}")
    conn.execute(f"DETACH DATABASE IF EXISTS {quote(_SCRATCH)}")


def _spill_into(conn: duckdb.DuckDBPyConnection, folder: str) -> None:
    """The spill folder ``<file>.tmp``, as ``duckdb.connect(path)`` has (see module docs)."""
    try:
        conn.execute(f"SET temp_directory = {literal(folder)}")
    except duckdb.NotImplementedException as error:  # used before: cannot switch
        raise _SpillFolderUsed(folder) from error


def _parked(keeper: duckdb.DuckDBPyConnection, path: str) -> bool:
    """Detach the file (checkpointing it: another process may open it now) and reset the
    settings loads change; False when that failed (the database is closed then)."""
    try:
        keeper.execute(f"ATTACH {literal(':memory:')} AS {quote(_SCRATCH)}")
        keeper.execute(f"USE {quote(_SCRATCH)}")
        for catalog, at in _catalogs(keeper).items():
            if at == path:
                keeper.execute(f"DETACH {quote(catalog)}")
        for name in _LOAD_SETTINGS:
            keeper.execute(f"RESET {name}")
    except duckdb.Error:
        return False
    return True


def _catalogs(conn: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    """The database's catalogs (not DuckDB's own ``system`` and ``temp``) and their files."""
    rows = conn.execute(
        "SELECT database_name, path FROM duckdb_databases() WHERE NOT internal"
    ).fetchall()
    return {str(name): None if at is None else str(at) for name, at in rows}
