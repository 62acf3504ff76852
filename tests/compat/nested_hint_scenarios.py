"""Compatibility scenarios of ``nested_hints=`` beyond columns and contracts: a nested
table's primary key, merge key, write disposition and references, each over two runs.

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario

_FIRST = [
    {"id": 1, "lines": [{"sku": "a", "qty": 1, "parts": [{"p": 1}]}, {"sku": "b", "qty": 2}]},
    {"id": 2, "lines": [{"sku": "c", "qty": 3}]},
]
_SECOND = [
    {"id": 1, "lines": [{"sku": "a", "qty": 10, "parts": [{"p": 2}]}, {"sku": "z", "qty": 5}]}
]

_REFERENCES = [{"referenced_table": "orders", "columns": ["sku"], "referenced_columns": ["id"]}]


def _schema_tables(pipe: Any) -> dict[str, Any]:
    """Each data table's keys in order, its hints, and its columns' hints."""
    schema = pipe.default_schema
    out: dict[str, Any] = {}
    for name in schema.data_table_names():
        table = schema.get_table(name)
        out[name] = {
            "keys": [k for k in table if k != "columns"],
            "hints": {k: v for k, v in table.items() if k != "columns"},
            "columns": {c: dict(column) for c, column in table["columns"].items()},
        }
    return out


def _two_runs(
    ctx: Context, name: str, path: Any, nested: dict[str, Any], **root: Any
) -> dict[str, Any]:
    """The orders of two runs with ``nested`` hints at ``path``: tables and schema after each."""
    dlt = ctx.dlt
    pipe = ctx.pipeline(f"nested_{name}")
    out: dict[str, Any] = {}
    for run, rows in (("first", _FIRST), ("second", _SECOND)):
        hints = {path: dlt.mark.make_nested_hints(**nested)}
        res = dlt.resource(list(rows), name="orders", nested_hints=hints, **root)
        outcome = ctx.attempt(lambda res=res: pipe.run(res) and None)
        out[run] = {"run": outcome, "tables": ctx.tables(pipe), "schema": _schema_tables(pipe)}
    return out


@scenario
def nested_hints_keys_unlink_the_table(ctx: Context) -> Any:
    """A primary or merge key on a nested table makes it a table of its own (no parent, no
    parent id or list index; the root's resource; ``append`` unless given), its nested rows
    still linked to it; with ``merge`` it merges by its key, replacing the nested rows of the
    rows it replaces; under a merging root it keeps the root key and is not merged."""
    return {
        "primary_key": _two_runs(ctx, "pk", "lines", {"primary_key": "sku"}),
        "primary_key_merge": _two_runs(
            ctx, "pk_merge", "lines", {"primary_key": "sku", "write_disposition": "merge"}
        ),
        "merge_key_merge": _two_runs(
            ctx, "mk_merge", "lines", {"merge_key": "sku", "write_disposition": "merge"}
        ),
        "under_merging_root": _two_runs(
            ctx, "pk_root_merge", "lines", {"primary_key": "sku"},
            write_disposition="merge", primary_key="id",
        ),
        "deeper_path": _two_runs(ctx, "pk_deep", ("lines", "parts"), {"primary_key": "p"}),
    }  # fmt: skip


def _filesystem_replace(ctx: Context) -> dict[str, Any]:
    """Two runs into jsonl files with a nested ``replace``: each table's rows after them."""
    import glob
    import gzip
    import json

    dlt = ctx.dlt
    bucket = ctx.workdir / "bucket"
    pipe = dlt.pipeline(
        "nested_replace_fs",
        destination=dlt.destinations.filesystem(f"file://{bucket}"),
        dataset_name="ds",
        pipelines_dir=str(ctx.workdir / "pipelines"),
    )
    hints = {"lines": dlt.mark.make_nested_hints(write_disposition="replace")}
    for rows in (_FIRST, _SECOND):
        pipe.run(
            dlt.resource(list(rows), name="orders", nested_hints=hints), loader_file_format="jsonl"
        )
    out: dict[str, Any] = {}
    for table in ("orders", "orders__lines", "orders__lines__parts"):
        rows = []
        for path in glob.glob(str(bucket / "ds" / table / "*")):
            opener: Any = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as lines:
                rows += [
                    {k: v for k, v in json.loads(line).items() if not k.startswith("_dlt")}
                    for line in lines
                    if line.strip()
                ]
        out[table] = sorted(rows, key=json.dumps)
    return out


@scenario
def nested_hints_disposition_and_references(ctx: Context) -> Any:
    """A nested table that keeps its link records a given write disposition and references;
    ``replace`` empties it and its nested tables on each run while the root appends (on
    DuckDB and in a filesystem bucket)."""
    return {
        "replace": _two_runs(ctx, "replace", "lines", {"write_disposition": "replace"}),
        "references": _two_runs(ctx, "refs", "lines", {"references": _REFERENCES}),
        "replace_on_filesystem": _filesystem_replace(ctx),
        "make_nested_hints": ctx.dlt.mark.make_nested_hints(
            primary_key="sku", merge_key=["a"], write_disposition="merge", references=_REFERENCES
        ),
    }


@scenario
def nested_hints_key_given_or_dropped_later(ctx: Context) -> Any:
    """A key for a nested table an earlier run made linked fails the extract (a conflict on
    ``parent``), and the pipeline goes on; a table a key unlinked stays unlinked when a
    later run gives no key."""
    dlt = ctx.dlt
    keyed = {"lines": dlt.mark.make_nested_hints(primary_key="sku")}

    def conflict(exc: BaseException) -> Any:
        cause = getattr(exc, "exception", None)
        names = ("schema_name", "table_name", "prop_name", "val1", "val2")
        return [type(exc).__name__, exc.step, type(cause).__name__,
                {name: getattr(cause, name, None) for name in names}]  # fmt: skip

    linked = ctx.pipeline("nested_key_later")
    linked.run(dlt.resource(list(_FIRST), name="orders"))
    try:
        linked.run(dlt.resource(list(_SECOND), name="orders", nested_hints=keyed))
        refused: Any = "loaded"
    except Exception as exc:  # the outcome is what we compare
        refused = conflict(exc)
    linked.run(dlt.resource(list(_SECOND), name="orders"))
    unlinked = ctx.pipeline("nested_key_dropped")
    unlinked.run(dlt.resource(list(_FIRST), name="orders", nested_hints=keyed))
    unlinked.run(dlt.resource(list(_SECOND), name="orders"))
    return {
        "refused": refused,
        "linked": {"tables": ctx.tables(linked), "schema": _schema_tables(linked)},
        "dropped": {"tables": ctx.tables(unlinked), "schema": _schema_tables(unlinked)},
    }
