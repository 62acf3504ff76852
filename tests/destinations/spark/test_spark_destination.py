"""The Spark destination, end to end: loads by loadstone, reads by a separate Spark application.

The loads run as child processes (``spark_destination_child.py``), each one Spark application
with the Hive metastore (embedded Derby, one JVM at a time) and a warehouse in a temporary
folder shared by the whole module; then ``spark_catalog_reader.py``, a Spark application that
does not import loadstone, reads every table through the metastore. Each test checks one
behaviour against what the reader saw, or (decimals, issue 39) what the loader read back.
Scenarios that do not interfere share a load: the four cases are four tables of one run, the
dispositions six tables of one pipeline's two runs, whose state and schema are then restored.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jvm_options
import pytest

TESTS = Path(__file__).resolve().parent
CHILD = TESTS / "spark_destination_child.py"
READER = TESTS / "spark_catalog_reader.py"
CASES = ("github_events", "github_issues", "ethereum_blocks", "weird_rows")


#: JIT thresholds of the loads application (its JVM only): it runs the same catalog, write
#: and rename code for a dozen loads, and compiling less of it, later, cost less CPU than it
#: saved (paired runs of that application: 87.9 -> 76.9 and 95.6 -> 86.8 CPU s; the shorter
#: reader measured no gain, 33.8 -> 33.8 at 3 and 38.4 at 10, so it keeps the defaults)
LOADS_JIT = "-XX:CompileThresholdScaling=5"


def _run(*args: str, cwd: Path, jvm: str = "") -> subprocess.CompletedProcess:
    """``args`` as a child process; ``jvm``: more options for its JVM (after the suite's)."""
    jvm_options.refresh()  # the class archive, if it was built since the last application
    options = " ".join(part for part in (os.environ.get("JAVA_TOOL_OPTIONS", ""), jvm) if part)
    return subprocess.run(
        [*args],
        cwd=cwd,
        env={**os.environ, "JAVA_TOOL_OPTIONS": options},
        capture_output=True,
        text=True,
        timeout=900,
    )


def _child(work: Path, *args: str) -> dict[str, Any]:
    jvm = LOADS_JIT if args[0] == "loads" else ""
    done = _run(sys.executable, str(CHILD), args[0], str(work), *args[1:], cwd=work, jvm=jvm)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((work / f"{args[0]}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory, cases_dir: Path) -> dict[str, Any]:
    """Everything the loaders did and everything the independent reader then saw.

    Three Spark applications in turn (the Derby metastore admits one at a time): two loads
    killed mid-way in one process, one application with every other load (it also finishes
    the killed ones, and loads the decimals), then the reader.
    """
    work = tmp_path_factory.mktemp("spark_catalog")
    found: dict[str, Any] = {"work": work}
    crashed = _run(sys.executable, str(CHILD), "crash", str(work), cwd=work)
    found["crash"] = (crashed.returncode, crashed.stderr[-3000:])
    found.update(_child(work, "loads", str(cases_dir)))
    reader = _run(sys.executable, str(READER), str(work), cwd=work)
    assert reader.returncode == 0, reader.stderr[-3000:]
    found["read"] = json.loads((work / "read.json").read_text(encoding="utf-8"))
    return found


def _read(loaded: dict[str, Any], name: str) -> dict[str, Any]:
    assert name in loaded["read"], f"{name} not in catalog: {sorted(loaded['read'])}"
    return loaded["read"][name]


def _ids(loaded: dict[str, Any], name: str, column: str = "id") -> list[int]:
    table = _read(loaded, name)
    index = [c.split(":")[0] for c in table["columns"]].index(column)
    return sorted(int(row[index]) for row in table["rows"])


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES)
def test_every_case_is_read_back_by_another_spark_application(
    loaded: dict[str, Any], case: str
) -> None:
    expected = loaded["cases"][case]
    assert expected, f"the normalizer produced no rows for {case}"
    for table, rows in expected.items():
        assert _read(loaded, f"cases.{table}")["count"] == rows, table


@pytest.mark.spark
def test_system_tables_record_each_load_once(loaded: dict[str, Any]) -> None:
    loads = _read(loaded, "cases._dlt_loads")
    assert loads["count"] == 1
    assert [c.split(":")[0] for c in loads["columns"]] == [
        "load_id",
        "schema_name",
        "status",
        "inserted_at",
        "schema_version_hash",
    ]
    assert _read(loaded, "cases._dlt_version")["count"] >= 1
    assert _read(loaded, "cases._dlt_pipeline_state")["count"] == 1


@pytest.mark.spark
def test_wei_is_a_decimal_38_and_keeps_every_digit(loaded: dict[str, Any]) -> None:
    blocks = _read(loaded, "cases.ethereum_blocks")
    assert "total_difficulty:decimal(38,0)" in blocks["columns"]
    index = [c.split(":")[0] for c in blocks["columns"]].index("total_difficulty")
    assert sorted(row[index] for row in blocks["rows"]) == [
        "50719297655545113494805",
        "50719312123422817289537",
    ]


@pytest.mark.spark
def test_weird_strings_arrive_unchanged(loaded: dict[str, Any], cases_dir: Path) -> None:
    source = json.loads((cases_dir / "weird_rows.json").read_text(encoding="utf-8"))
    table = _read(loaded, "cases.weird_rows")
    index = [c.split(":")[0] for c in table["columns"]].index("str")
    assert sorted(row[index] for row in table["rows"]) == sorted(item["str"] for item in source)


@pytest.mark.spark
def test_append_adds_the_second_load_to_the_first(loaded: dict[str, Any]) -> None:
    assert _ids(loaded, "dispositions.appended") == [1, 2, 3]
    assert loaded["dispositions"]["append_dataset"] == [1, 2, 3]


@pytest.mark.spark
def test_the_users_session_sees_a_load_after_having_read_the_table(
    loaded: dict[str, Any],
) -> None:
    assert loaded["dispositions"]["users_session_counts"] == [2, 3]


@pytest.mark.spark
def test_replace_keeps_only_the_last_load_in_root_and_nested_tables(
    loaded: dict[str, Any],
) -> None:
    assert _ids(loaded, "dispositions.replaced") == [2]
    nested = _read(loaded, "dispositions.replaced__tags")
    index = [c.split(":")[0] for c in nested["columns"]].index("value")
    assert [row[index] for row in nested["rows"]] == ["c"]


@pytest.mark.spark
def test_schema_evolves_by_adding_columns_across_two_loads(loaded: dict[str, Any]) -> None:
    items = _read(loaded, "dispositions.evolved")
    names = [c.split(":")[0] for c in items["columns"]]
    assert {"id", "name", "score"} <= set(names)
    assert "score:double" in items["columns"]
    by_id = {row[names.index("id")]: row[names.index("score")] for row in items["rows"]}
    assert by_id == {"1": None, "2": "2.5"}
    assert _read(loaded, "dispositions.evolved__parts")["count"] == 1
    assert loaded["dispositions"]["evolved_sql"] == [[1, None], [2, 2.5]]


@pytest.mark.spark
def test_merge_replaces_rows_by_primary_key_with_their_nested_rows(
    loaded: dict[str, Any],
) -> None:
    items = _read(loaded, "dispositions.merged")
    names = [c.split(":")[0] for c in items["columns"]]
    rows = {row[names.index("id")]: row[names.index("v")] for row in items["rows"]}
    assert rows == {"1": "c", "2": "b", "3": "d"}  # the first of duplicate keys is kept
    tags = _read(loaded, "dispositions.merged__tags")
    assert sorted(
        row[[c.split(":")[0] for c in tags["columns"]].index("value")] for row in tags["rows"]
    ) == ["k", "y", "z"]


@pytest.mark.spark
def test_merge_of_a_shrunk_list_keeps_none_of_its_old_elements(loaded: dict[str, Any]) -> None:
    """Same rows as DuckDB's merge and dlt 1.31's on DuckDB: the new list only."""
    tags = _read(loaded, "dispositions.shrunk__tags")
    names = [c.split(":")[0] for c in tags["columns"]]
    assert sorted(row[names.index("value")] for row in tags["rows"]) == ["q", "z"]
    assert _ids(loaded, "dispositions.shrunk") == [1, 2]


@pytest.mark.spark
def test_upsert_is_refused_before_anything_is_created(loaded: dict[str, Any]) -> None:
    error = loaded["dispositions"]["merge_error"]
    assert error is not None
    assert "write disposition merge (strategy 'upsert')" in error and "'items'" in error
    assert not any(name.startswith("upserted.") for name in loaded["read"])


@pytest.mark.spark
def test_state_and_schema_are_restored_from_the_catalog(loaded: dict[str, Any]) -> None:
    assert "cursor-42" in loaded["dispositions"]["restored_state"]
    assert "items" in loaded["dispositions"]["restored_tables"]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("disposition", "ids", "tags"),
    [("append", [1, 2, 3, 4], ["a", "b", "c", "d", "e"]), ("replace", [3, 4], ["c", "d", "e"])],
)
def test_kill_9_mid_load_then_rerun_loads_the_package_exactly_once(
    loaded: dict[str, Any], disposition: str, ids: list[int], tags: list[str]
) -> None:
    returncode, stderr = loaded["crash"]
    assert returncode == -signal.SIGKILL, stderr
    assert loaded["rerun"][disposition] == 1
    dataset = f"crashed_{disposition}"
    assert _ids(loaded, f"{dataset}.items") == ids
    nested = _read(loaded, f"{dataset}.items__tags")
    index = [c.split(":")[0] for c in nested["columns"]].index("value")
    assert sorted(row[index] for row in nested["rows"]) == tags
    assert _read(loaded, f"{dataset}._dlt_loads")["count"] == 2


@pytest.mark.spark
def test_a_wei_beyond_38_digits_goes_to_a_text_variant_with_every_digit(
    loaded: dict[str, Any],
) -> None:
    items = _read(loaded, "dispositions.too_wide")
    assert "big:decimal(38,0)" in items["columns"]
    assert "big__v_text:string" in items["columns"]
    names = [c.split(":")[0] for c in items["columns"]]
    by_id = {
        row[names.index("id")]: (row[names.index("big")], row[names.index("big__v_text")])
        for row in items["rows"]
    }
    assert by_id == {"1": (str(10**20), None), "2": (None, str(10**40))}


@pytest.mark.spark
def test_loadstone_run_with_destination_spark(loaded: dict[str, Any]) -> None:
    cli = loaded["cli"]
    assert cli["returncode"] == 0, cli["stderr"][-3000:]
    assert (
        _read(loaded, "from_cli_dataset.events")["count"]
        == loaded["cases"]["weird_rows"]["weird_rows"]
    )


@pytest.mark.spark
def test_a_decimal_38_10_hint_is_the_spark_tables_type_with_every_digit(
    loaded: dict[str, Any],
) -> None:
    issue = loaded["decimals"]["issue"]
    assert issue["types"]["x"] == "decimal(38,10)"
    assert issue["x"] == [
        "1234567890123.0123456789",
        "-1.00E-10",  # Python's text of -1E-10 at scale 10: the same number
        "99999999999999999999999999.9999999999",
    ]


@pytest.mark.spark
def test_a_value_beyond_the_precision_is_refused_before_spark_sees_it(
    loaded: dict[str, Any],
) -> None:
    assert loaded["decimals"]["refused"] == {"error": "ValueDoesNotFit", "failed_packages": 1}


@pytest.mark.spark
def test_random_decimals_read_back_digit_for_digit_or_are_refused(
    loaded: dict[str, Any],
) -> None:
    assert loaded["decimals"]["property"] == "held"
