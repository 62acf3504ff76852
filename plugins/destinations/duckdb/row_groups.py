"""How many rows a load writes per DuckDB row group: a rule, read from configuration.

DuckDB compresses and writes a table's row groups to disk in parallel while an INSERT runs
("optimistic writes"), but only once an inserting thread has filled a whole row group; every
row group smaller than that is compressed at COMMIT, on one core. With DuckDB's own size of
122,880 rows a package of 100k GitHub events (596 columns, 2 cores) spent 3.4-6.8 s inserting
and 4.1-4.6 s more committing; with 16,384-row groups the threads write as they insert and
the COMMIT takes 0.05 s. 16,384 and 32,768 loaded equally fast in sum (32,768 inserted 100k
events about 0.5 s faster; 16,384 committed 20k events 0.6 s faster, their 20,000 root rows
filling no 32,768-row group) and 16,384 took 0.15-0.3 GB less memory: it is the default.
Smaller groups compress a little worse: the file of 100k events is 46-49 MB instead of 41 MB.

The size is ``destination.duckdb.row_group_size`` (``DESTINATION__DUCKDB__ROW_GROUP_SIZE``).
DuckDB accepts a positive multiple of its vector size, 2,048 rows; ``0`` or ``"default"``
means DuckDB's own size and opens the file exactly as ``duckdb.connect(path)`` does.
"""

from __future__ import annotations

from loadstone.exceptions import InvalidRowGroupSize

KEY = "destination.duckdb.row_group_size"
#: DuckDB's vector size: a row group holds a whole number of vectors.
VECTOR_SIZE = 2048
#: DuckDB's own row group size (what ``0`` / ``"default"`` leave in place).
DUCKDB_ROW_GROUP_SIZE = 122_880
#: Measured through the pipeline at 20k and 100k events (see above and the README).
DEFAULT_ROW_GROUP_SIZE = 16_384
_ADVICE = (
    f"use a positive multiple of {VECTOR_SIZE} rows (DuckDB's vector size), e.g. "
    f"{DEFAULT_ROW_GROUP_SIZE}, or 0 or 'default' for DuckDB's own {DUCKDB_ROW_GROUP_SIZE}"
)


def parse_row_group_size(value: object, origin: str = "argument") -> int | None:
    """Rows per row group, or None for DuckDB's own size (``0``, ``"default"``).

    Text is accepted because environment variables and hand-written config are text.
    """
    number = value
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if text.lower() == "default":
            return None
        number = int(text) if text.isdigit() else None
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise InvalidRowGroupSize(KEY, value, origin, _ADVICE)
    if number == 0:
        return None
    if number % VECTOR_SIZE:
        raise InvalidRowGroupSize(KEY, value, origin, _ADVICE)
    return number


def configured_row_group_size(explicit: object = None) -> int | None:
    """The size loads write (None: DuckDB's own), from ``explicit`` or configuration."""
    from loadstone import config

    found = config.locate(KEY, explicit=explicit, default=DEFAULT_ROW_GROUP_SIZE)
    return parse_row_group_size(found.value, found.origin)
