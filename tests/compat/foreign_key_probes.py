"""``sql_database`` / ``sql_table(resolve_foreign_keys=True)`` as a dlt user writes them:
the ``references`` each table gets, against a library given as an argument and the tests'
PostgreSQL.

Recorded under dlt 1.31 by ``tests/compat/record_foreign_keys.py``
(``tests/fixtures/sql_database/dlt_foreign_keys.json``); compared by
``tests/sources/test_sql_foreign_keys.py``. dlt lists a table's references in the order of
SQLAlchemy's set of foreign keys, which changes between runs: the answers are sorted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

_DDL = """
DROP TABLE IF EXISTS rfk_child;
DROP TABLE IF EXISTS rfk_other;
DROP TABLE IF EXISTS rfk_parent;
CREATE TABLE rfk_parent (id int PRIMARY KEY, k2 int, UNIQUE (id, k2));
CREATE TABLE rfk_other (code text PRIMARY KEY);
CREATE TABLE rfk_child (
    cid int PRIMARY KEY,
    pid int REFERENCES rfk_parent (id),
    a int,
    b int,
    code text REFERENCES rfk_other (code),
    up int REFERENCES rfk_child (cid),
    FOREIGN KEY (a, b) REFERENCES rfk_parent (id, k2)
);
INSERT INTO rfk_parent VALUES (1, 1);
INSERT INTO rfk_other VALUES ('x');
INSERT INTO rfk_child VALUES (10, 1, 1, 1, 'x', NULL);
"""


def create_tables(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(_DDL))
    engine.dispose()


def comparable(references: Any) -> Any:
    """References sorted by table, each as its sorted (column, referenced column) pairs."""
    if references is None:
        return None
    return sorted(
        [
            ref["referenced_table"],
            sorted(map(list, zip(ref["columns"], ref["referenced_columns"], strict=True))),
        ]
        for ref in references
    )


def references_outcome(dlt: Any, sql_database: Any, sql_table: Any, url: str, workdir: Path) -> Any:
    create_tables(url)
    names = ["rfk_parent", "rfk_other", "rfk_child"]
    source = sql_database(url, table_names=names, resolve_foreign_keys=True)
    out: dict[str, Any] = {
        name: comparable(source.resources[name].compute_table_schema().get("references"))
        for name in names
    }
    table = sql_table(url, table="rfk_child", resolve_foreign_keys=True)
    out["sql_table"] = comparable(table.compute_table_schema().get("references"))
    off = sql_table(url, table="rfk_child")
    out["not_resolved"] = comparable(off.compute_table_schema().get("references"))
    deferred = sql_database(
        url, table_names=names, resolve_foreign_keys=True, defer_table_reflect=True
    )
    out["deferred_before_run"] = comparable(
        deferred.resources["rfk_child"].compute_table_schema().get("references")
    )
    pipeline = dlt.pipeline(
        "foreign_keys",
        destination=dlt.destinations.duckdb(str(workdir / "fk.duckdb")),
        pipelines_dir=str(workdir / "pipelines"),
    )
    pipeline.run(deferred)
    out["deferred_loaded"] = comparable(
        pipeline.default_schema.tables["rfk_child"].get("references")
    )
    return out
