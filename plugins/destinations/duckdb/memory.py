"""How much memory a package's load may take in an embedded DuckDB: by width, never by rows.

A package loads in one transaction. DuckDB builds each table's rows into row groups of
122,880 rows per inserting thread and keeps them (and every block it wrote) in its buffer
pool up to its memory limit, 80% of RAM by default. Left alone, the loader's memory therefore
grows with the data until that limit (2.5 GB for 100k GitHub events, 596 columns).

What a load really needs is one row group per thread for the widest table: about 0.6 MiB
per column and thread (8-byte values plus validity for 122,880 rows, some spare). Below
that DuckDB fails ("could not allocate block"): a 3,000-column table on 2 threads needed
3 GB, where a flat 1-2 GB limit failed it. Above it DuckDB spills what it can to its temp
directory. So the default limit is that need plus a fixed base, never less than 1 GiB and
never more than DuckDB's own default: flat in data size, proportional to schema width.

Loads now write smaller row groups (``row_groups.py``), which need less than this; the
sizing for DuckDB's 122,880 rows is kept because ``row_group_size = 0`` brings them back.
"""

from __future__ import annotations

import re

from loadstone import config

#: a share of RAM, as DuckDB takes it (``'50%'``)
_PERCENT = re.compile(r"^\s*\d+(?:\.\d+)?\s*%\s*$")

MIB = 1024 * 1024
#: Working memory per column and inserting thread (one row group of 8-byte values, spare).
PER_COLUMN_AND_THREAD = 640 * 1024
#: Fixed part: Parquet reading, catalog, the statements themselves.
BASE = 512 * MIB
#: No default limit goes below this.
FLOOR = 1024 * MIB

_UNITS = {
    "b": 1,
    "bytes": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
    "tb": 1000**4,
    "tib": 1024**4,
}


def load_memory_limit(widest_columns: int, threads: int, ceiling: int) -> int:
    """Bytes a load of tables up to ``widest_columns`` wide may use (never above ``ceiling``)."""
    need = BASE + max(widest_columns, 1) * max(threads, 1) * PER_COLUMN_AND_THREAD
    return min(max(need, FLOOR), ceiling)


def parse_size(text: str) -> int:
    """Bytes of a DuckDB size setting such as ``'19.2 GiB'`` or ``'953.6 MiB'``."""
    number, _, unit = str(text).strip().partition(" ")
    if not unit:
        digits = number.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        number, unit = digits, number[len(digits) :]
    return int(float(number) * _UNITS[unit.strip().lower() or "b"])


def configured_memory_limit() -> str | None:
    """``destination.duckdb.memory_limit`` as DuckDB's setting text, or None when unset.

    Read as a size here (``2GB``, ``1 GiB``, bytes; or a share of RAM, ``50%``) so a bad value
    fails before anything is extracted, naming the setting and where it came from, not with
    DuckDB's "Parser Error: Memory must have a number" at load.
    """
    found = config.locate("destination.duckdb.memory_limit", default="")
    if found.value in ("", None):
        return None
    if isinstance(found.value, str) and _PERCENT.match(found.value):
        return found.value.strip()
    size = config.parse_size(found.value, "destination.duckdb.memory_limit", found.origin)
    return f"{size}B"
