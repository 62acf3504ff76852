"""A package that fails because of its own data or schema never blocks the next run.

Each case fails one run with one line saying why and that the package was set aside (``info``
lists it under failed packages); the next, normal run of the same pipeline succeeds and loads
only its own rows. A damaged package copy (the user's file intact) is named as such, with the
repair. Settings are all parsed before any work: a bad one fails before a package exists.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
from pathlib import Path

import duckdb
import pytest
from env_support import environment

from loadstone.cli import main


def run(path: str, *extra: str) -> tuple[int, str]:
    """``loadstone run PATH -t t -p poison`` in this process: exit status and stderr."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["run", path, "-t", "t", "-p", "poison", "-q", *extra])
    return code, err.getvalue()


def write(name: str, *rows: dict[str, object]) -> str:
    Path(name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    return name


def info() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["pipeline", "poison", "info"]) == 0
    return out.getvalue()


def loaded_ids() -> list[int]:
    with duckdb.connect("poison.duckdb", read_only=True) as conn:
        return [
            row[0] for row in conn.execute("SELECT id FROM poison_dataset.t ORDER BY id").fetchall()
        ]


def assert_set_aside(code: int, err: str) -> None:
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "the package was set aside" in err and "the next run goes on" in err
    assert "pending packages: 0" in info() and "failed packages: 1" in info()


def test_a_user_key_named_dlt_list_idx_sets_its_package_aside_at_load() -> None:
    code, err = run(write("bad.jsonl", {"id": 1, "_dlt_list_idx": "x"}, {"id": 2}))
    assert "step load" in err
    assert_set_aside(code, err)
    code, err = run(write("good.jsonl", {"id": 3}, {"id": 4}))
    assert code == 0, err
    assert loaded_ids() == [3, 4]


def test_a_merge_whose_primary_key_the_data_lacks_sets_its_package_aside() -> None:
    code, err = run(write("nokey.jsonl", {"a": 1}), "-w", "merge", "-k", "pk")
    assert "step normalize" in err and "pk" in err
    assert_set_aside(code, err)
    code, err = run(write("good.jsonl", {"id": 3, "pk": 3}), "-w", "merge", "-k", "pk")
    assert code == 0, err
    assert loaded_ids() == [3]


def test_data_breaking_a_frozen_contract_sets_its_package_aside() -> None:
    import loadstone as dlt

    pipe = dlt.pipeline("poison", destination="duckdb")
    pipe.run([{"id": 1}], table_name="t")
    with pytest.raises(dlt.PipelineStepFailed, match="set aside"):
        pipe.run([{"id": 2, "extra": "x"}], table_name="t", schema_contract="freeze")
    assert pipe.list_pending_packages() == [] and len(pipe.failed_packages()) == 1
    pipe.run([{"id": 3}], table_name="t")
    assert loaded_ids() == [1, 3]


def test_a_set_aside_package_that_carried_no_state_leaves_one_state_row() -> None:
    """dlt 1.31 writes a state row only when the state changed (differential program p617):
    setting aside a package that did not carry the state sends it no second time."""
    import loadstone as dlt

    pipe = dlt.pipeline("poison", destination="duckdb")
    pipe.run([{"id": 1}], table_name="t")
    with pytest.raises(dlt.PipelineStepFailed, match="set aside"):
        pipe.run([{"id": 2, "extra": "x"}], table_name="t", schema_contract="freeze")
    pipe.run([{"id": 3}], table_name="t")
    with duckdb.connect("poison.duckdb", read_only=True) as conn:
        sql = "SELECT version FROM poison_dataset._dlt_pipeline_state"
        assert conn.execute(sql).fetchall() == [(1,)]
    assert loaded_ids() == [1, 3]


def test_a_damaged_package_copy_is_named_with_its_repair_not_the_intact_input() -> None:
    import loadstone as dlt

    lines = "".join(json.dumps({"id": i}) + "\n" for i in range(2_000))
    Path("events.jsonl.gz").write_bytes(gzip.compress(lines.encode()))  # extract copies it
    pipe = dlt.pipeline("poison", destination="duckdb")
    pipe.extract(Path("events.jsonl.gz"), table_name="t")
    (package,) = pipe.list_pending_packages()
    copy = package.extracted_files()[0].path
    assert copy.is_relative_to(package.root)
    damaged = copy.read_bytes().replace(b'{"id": 1000}', b'{"id": 1000{', 1)
    copy.write_bytes(damaged)  # the same size: only normalize can find it
    code, err = run("events.jsonl.gz")
    (error,) = [line for line in err.splitlines() if line.startswith("error: ")]
    assert code == 1 and error == err.splitlines()[-1]
    err = error
    assert str(copy) in err and "drop-pending-packages" in err
    assert "events.jsonl.gz, which is unchanged" in err and "Fix the line" not in err
    assert main(["pipeline", "poison", "drop-pending-packages"]) == 0
    code, err = run("events.jsonl.gz")
    assert code == 0, err
    assert loaded_ids() == list(range(2_000))


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("LOAD__KEEP_COMPLETED_PACKAGES", "maybe", "load.keep_completed_packages"),
        ("RUNTIME__LOG_LEVEL", "LOUD", "runtime.log_level"),
        ("SPARK__MASTER", "bogus://x", "spark.master 'bogus://x'"),
        ("SPARK__REMOTE", "bogus://x", "spark.remote 'bogus://x'"),
        ("NORMALIZE__WORKERS", "zero", "normalize.workers"),
        ("NORMALIZE__ENGINE", "warp", "normalize.engine"),
        ("NORMALIZE__CHUNK_BYTES", "lots", "normalize.chunk_bytes"),
        ("NORMALIZE__SPARK_MIN_BYTES", "big", "normalize.spark_min_bytes"),
        ("NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_ID", "perhaps", "add_dlt_id"),
        ("EXTRACT__COPY_INPUTS", "maybe", "extract.copy_inputs"),
        ("DESTINATION__DUCKDB__MEMORY_LIMIT", "lots", "destination.duckdb.memory_limit"),
        (
            "SPARK__MASTER",
            "spark://nowhere:7077",
            "cannot reach Spark master spark://nowhere:7077 (from environment variable "
            "SPARK__MASTER)",
        ),
    ],
)
def test_a_bad_setting_fails_in_one_line_before_any_work(key: str, value: str, named: str) -> None:
    with environment({key: value}):
        code, err = run(write("good.jsonl", {"id": 1}))
    assert code == 1 and err.count("\n") == 1 and named in err
    assert not (Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "poison").exists()
    assert not Path("poison.duckdb").exists()


def test_log_level_names_are_taken_in_any_case() -> None:
    with environment(dict(RUNTIME__LOG_LEVEL="debug")):
        code, err = run(write("good.jsonl", {"id": 1}))
    assert code == 0, err
    assert loaded_ids() == [1]
