"""SQL shared by the SQL destinations (DuckDB, PostgreSQL): not a destination itself.

* ``loader.py``: :class:`SqlLoader`, the DDL, migration and package transaction both clients
  inherit (each keeps only what its database does its own way);
* ``dialect.py``: quoting and the :class:`Dialect` value (what differs per database);
* ``merge.py``: the write dispositions (append, replace, delete-insert, upsert, scd2);
* ``bookkeeping.py``: the system tables' rows (``_dlt_version``, ``_dlt_pipeline_state``,
  ``_dlt_loads``);
* ``names.py``: system names through the naming convention the client was given;
* ``table_files.py``: the load files of one table.
"""
