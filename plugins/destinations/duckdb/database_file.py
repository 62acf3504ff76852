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
What a new or idle database has attached is known (nothing else ran on it), so opening one
reads only the catalog name the file got, and parking it is one ``execute`` naming the
catalog read at its open: a small run's open and close went from 14 statements in 14
``execute`` calls to 11 in 4.
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

import attrs
import duckdb

from loadstone.plugins.destinations.duckdb.sql import literal, quote


@attrs.frozen
class Opened:
    """What :func:`open_database_file` knows of a connection it handed out."""

    #: the file's catalog, the connection's default (what ``current_database()`` answers)
    catalog: str
    #: the database was new or idle: its global settings are DuckDB's defaults
    default_settings: bool


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
#: path -> the catalog the file is attached as (read back once, when it was attached)
_catalogs_of: dict[str, str] = {}
#: connection -> what it was opened as (see :func:`opened`)
_opened: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, Opened] = weakref.WeakKeyDictionary()
#: paths whose open database a user reached through one of its connections: not kept idle
_reached: set[str] = set()
#: The global settings loads change, reset when a database is parked (``TimeZone``, the
#: other setting a client sets, is its connection's own: it goes with the connection).
_LOAD_SETTINGS = ("memory_limit", "threads", "preserve_insertion_order")
#: What a database :func:`_connect` hands out has attached: a new one has DuckDB's
#: ``memory``, an idle one the scratch catalog; None when it must be read (shared).
_NEW: dict[str, str | None] = {"memory": None}
_IDLE: dict[str, str | None] = {_SCRATCH: None}
#: where the names of new databases come from
_numbers = itertools.count(1)


def open_database_file(path: str, row_group_size: int) -> duckdb.DuckDBPyConnection:
    """A connection to the file ``path`` whose inserts write ``row_group_size``-row groups."""
    path = os.path.abspath(path)
    with _opening:
        while True:  # twice at most: a new database has not spilled
            conn, catalogs = _connect(path)
            try:
                _attach(conn, path, row_group_size, catalogs)
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
        _opened[conn] = Opened(_catalogs_of[path], default_settings=catalogs is not None)
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
        name, catalog = _names.pop(path), _catalogs_of.pop(path, None)
        if catalog is None:  # never attached by this module: nothing to park
            conn.close()
            return
        keeper = duckdb.connect(name)
        conn.close()
        if not _parked(keeper, catalog):
            keeper.close()
            return
        _idle[name] = keeper
        while len(_idle) > IDLE_LIMIT:
            _idle.popitem(last=False)[1].close()


class _SpillFolderUsed(Exception):
    """The database spilled into its folder before, which DuckDB cannot move to another."""


def opened(conn: duckdb.DuckDBPyConnection) -> Opened | None:
    """What the connection was opened as, None for one :func:`open_database_file` did
    not attach (a plain ``duckdb.connect``, another database)."""
    return _opened.get(conn)


def _connect(
    path: str,
) -> tuple[duckdb.DuckDBPyConnection, dict[str, str | None] | None]:
    """A connection to the database the file has (or gets: an idle one, else a new one),
    and the catalogs that database has when known without asking (see :func:`_attach`)."""
    name = _names.get(path)
    known: dict[str, str | None] | None = None  # a database the file has: shared, unknown
    if name is None:
        name = next(reversed(_idle), None)
        known = _IDLE if name is not None else _NEW
        name = name or _new_name()
        _names[path] = name
    conn = duckdb.connect(name)
    keeper = _idle.pop(name, None)
    if keeper is not None:  # the idle database is joined: ``conn`` keeps it alive now
        keeper.close()
    return conn, known


def _forget(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """Close a connection that could not attach; the file has no database if no other
    of its connections is open."""
    conn.close()
    if not _handed.get(path):
        _names.pop(path, None)
        _catalogs_of.pop(path, None)


def _new_name() -> str:
    return f":memory:loadstone-{os.getpid()}-{next(_numbers)}"


def _attach(
    conn: duckdb.DuckDBPyConnection,
    path: str,
    row_group_size: int,
    known: dict[str, str | None] | None,
) -> None:
    """Attach ``path`` (unless this shared database already has) and make it the default.

    ``known`` is what a new or idle database has attached (nothing else ran on it); a
    database found by the file's name is read, as another connection may have changed it.
    Statements that cannot fail apart go as one ``execute``.
    """
    catalogs = _catalogs(conn) if known is None else known
    if "memory" in catalogs and catalogs["memory"] is None:  # a new database
        scratch = quote(_SCRATCH)
        conn.execute(f"ATTACH {literal(':memory:')} AS {scratch}; USE {scratch}; DETACH memory")
        catalogs = _IDLE
    catalog = next((name for name, at in catalogs.items() if at == path), None)
    if catalog is None:  # new, or idle since another file was detached
        _spill_into(conn, f"{path}.tmp")
        found = conn.execute(
            f"ATTACH {literal(path)} (ROW_GROUP_SIZE {int(row_group_size)}); "
            f"SELECT database_name FROM duckdb_databases() WHERE path = {literal(path)}"
        ).fetchall()
        catalog = str(found[0][0])
    scratch = f"; DETACH {quote(_SCRATCH)}" if _SCRATCH in catalogs else ""
    conn.execute(f"USE {quote(catalog)}{scratch}")
    _catalogs_of[path] = catalog


def _spill_into(conn: duckdb.DuckDBPyConnection, folder: str) -> None:
    """The spill folder ``<file>.tmp``, as ``duckdb.connect(path)`` has (see module docs)."""
    try:
        conn.execute(f"SET temp_directory = {literal(folder)}")
    except duckdb.NotImplementedException as error:  # used before: cannot switch
        raise _SpillFolderUsed(folder) from error


def _parked(keeper: duckdb.DuckDBPyConnection, catalog: str) -> bool:
    """Detach the file's ``catalog`` (checkpointing it: another process may open it now)
    and reset the settings loads change, in one ``execute``; False when that failed (the
    database is closed then). Only loadstone's statements ran: the catalog is as attached."""
    resets = "".join(f"; RESET {name}" for name in _LOAD_SETTINGS)
    try:
        keeper.execute(
            f"ATTACH {literal(':memory:')} AS {quote(_SCRATCH)}; USE {quote(_SCRATCH)}; "
            f"DETACH {quote(catalog)}{resets}"
        )
    except duckdb.Error:
        return False
    return True


def _catalogs(conn: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    """The database's catalogs (not DuckDB's own ``system`` and ``temp``) and their files."""
    rows = conn.execute(
        "SELECT database_name, path FROM duckdb_databases() WHERE NOT internal"
    ).fetchall()
    return {str(name): None if at is None else str(at) for name, at in rows}
