"""``kill -9`` in the middle of a filesystem load, then a rerun: every row exactly once.

A pipeline loads a first package; then a child process runs its second package and is
killed (SIGKILL, no cleanup) right after the k-th write of its load step: a data file, a
bookkeeping record, a file copied into a table, a Delta or Iceberg commit. The parent then
reruns the pipeline, which finishes the pending package, and reads the bucket with
independent readers: both packages' rows are there once, and ``_dlt_loads`` has one record
per package. A dry run counts the writes, so every k from the first write to the last is
tried. The first package is loaded once per test: each k starts from a copy of the working
folder it left (copied back to the same path, as the Iceberg catalog records absolute paths).

The children are forked from one preloaded parent (``preloaded_children.py``) that imported
loadstone, pyarrow, deltalake and pyiceberg once: each is still a process of its own, killed by
a real SIGKILL, without paying those imports again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from filesystem_support import DATASET, fs_pipeline, rows_per_table
from preloaded_children import LOADSTONE_RUN, Preloaded, preloaded

CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    import loadstone
    from loadstone.plugins.destinations.filesystem import client, delta, iceberg, records

    kill_after, spec = int(sys.argv[1]), json.loads(sys.argv[2])
    events = [0]
    armed = [False]

    def counted(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            result = original(*args, **kwargs)
            if armed[0]:
                events[0] += 1
                if events[0] == kill_after:
                    os.kill(os.getpid(), signal.SIGKILL)
            return result

        setattr(module, name, wrapper)

    for module in (client, records, delta, iceberg):
        for name in ("put_file_atomic", "write_bytes_atomic"):
            if hasattr(module, name):
                counted(module, name)
    counted(delta.DeltaWriter, "commit")
    counted(iceberg.IcebergWriter, "commit")

    pipeline = loadstone.pipeline(
        pipeline_name="crash",
        destination=loadstone.destinations.filesystem(bucket_url=spec["bucket"]),
        dataset_name=spec["dataset"],
        pipelines_dir=spec["pipelines"],
    )
    hints = spec["hints"]
    if spec["package"] == "first":
        pipeline.run([{"id": 1, "tags": ["a", "b"]}], table_name="items", **hints)
    else:
        armed[0] = True
        pipeline.run(spec["second"], table_name="items", **hints)
    print(events[0])
    """
)

EXPECTED = {"items": 3, "items__tags": 3}
#: a delete-insert whose second package replaces row 1 and shrinks its list
MERGED = {"items": 2, "items__tags": 2}
SECOND = {
    "append": [{"id": 2, "tags": ["c"]}, {"id": 3, "tags": []}],
    "delete-insert": [{"id": 1, "tags": ["z"]}, {"id": 2, "tags": ["c"]}],
}


def _spec(tmp: Path, table_format: str | None, strategy: str, package: str) -> dict[str, object]:
    hints: dict[str, object] = {"table_format": table_format} if table_format else {}
    if strategy != "append":
        hints["write_disposition"] = {"disposition": "merge", "strategy": strategy}
        hints["primary_key"] = "id"
    return {
        "bucket": str(tmp / "bucket"),
        "dataset": DATASET,
        "pipelines": str(tmp / "pipelines"),
        "hints": hints,
        "second": SECOND[strategy],
        "package": package,
    }


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    """What the children import, imported once (imports only: nothing runs before a fork)."""
    yield from preloaded(
        *LOADSTONE_RUN,  # what a pipeline's run imports (half a child's CPU when it was not)
        "loadstone.plugins.normalizers.relational.local_pool",
        "loadstone.plugins.normalizers.relational.native",
        "fsspec",
        "rich.console",
        "rich.table",
        "sqlite3",
        "loadstone.plugins.destinations.filesystem.client",
        "loadstone.plugins.destinations.filesystem.delta",
        "loadstone.plugins.destinations.filesystem.iceberg",
        "loadstone.plugins.destinations.filesystem.records",
        "pyarrow",
        "pyarrow.parquet",
        "deltalake",
        # what an Iceberg commit imports (its catalog on SQLite, pandas through pyarrow)
        "pyiceberg.table",
        "pyiceberg.io.pyarrow",
        "pyiceberg.catalog.sql",
        "sqlalchemy.dialects.sqlite",
        "pyarrow.dataset",
        "pandas",
    )


def _child(
    parent: Preloaded,
    tmp: Path,
    kill_after: int,
    table_format: str | None,
    strategy: str,
    package: str = "second",
) -> subprocess.CompletedProcess[str]:
    spec = json.dumps(_spec(tmp, table_format, strategy, package))
    return parent.run(CHILD, [str(kill_after), spec], cwd=tmp)


def _rows(tmp: Path, table_format: str | None) -> dict[str, list[int]]:
    """Row ids per table, read by the format's own library (files: pyarrow/json)."""
    dataset = tmp / "bucket" / DATASET
    if table_format is None:
        return {name: [0] * count for name, count in rows_per_table(dataset).items()}
    from test_filesystem_table_formats import read_table

    return {
        name: [0] * read_table(table_format, tmp / "bucket", name).num_rows for name in EXPECTED
    }


@pytest.mark.parametrize(
    ("table_format", "strategy", "expected"),
    [
        (None, "append", EXPECTED),
        ("delta", "append", EXPECTED),
        ("iceberg", "append", EXPECTED),
        ("delta", "delete-insert", MERGED),
        ("iceberg", "delete-insert", MERGED),
    ],
)
def test_kill_9_at_every_write_of_a_load_then_rerun_loads_exactly_once(
    parent: Preloaded,
    tmp_path: Path,
    table_format: str | None,
    strategy: str,
    expected: dict[str, int],
) -> None:
    """A delete-insert commits its nested table before its root, so a rerun after a kill
    between the two removes the same old nested rows."""
    work, first_loaded = tmp_path / "work", tmp_path / "first_loaded"
    work.mkdir()
    first = _child(parent, work, 0, table_format, strategy, package="first")
    assert first.returncode == 0, first.stderr
    shutil.copytree(work, first_loaded, symlinks=True)
    dry = _child(parent, work, 0, table_format, strategy)
    assert dry.returncode == 0, dry.stderr
    writes = int(dry.stdout.strip().splitlines()[-1])
    assert writes >= 3  # the two tables' data, then the _dlt_loads record
    for kill_after in range(1, writes + 1):
        shutil.rmtree(work)
        shutil.copytree(first_loaded, work, symlinks=True)
        killed = _child(parent, work, kill_after, table_format, strategy)
        assert killed.returncode == -9, (kill_after, killed.stderr[-2000:])
        # the child's pipeline, on the working folder it left behind
        fs_pipeline(work, "crash", str(work / "bucket")).run()
        counts = {name: len(ids) for name, ids in _rows(work, table_format).items()}
        assert counts == expected, kill_after
        loads = list((work / "bucket" / DATASET / "_dlt_loads").iterdir())
        assert len(loads) == 2, kill_after
