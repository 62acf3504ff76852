"""SQL shared by the SQL destinations (DuckDB, PostgreSQL): not a destination itself.

* ``dialect.py``: quoting and the :class:`Dialect` value (what differs per database);
* ``merge.py``: the write dispositions (append, replace, delete-insert, upsert, scd2).
"""
