"""Hostile inputs, through the CLI and the API: each loads every row exactly once, or fails
with one clear line (the file and line, the cause) and loads nothing; a later run after the
fix loads it exactly once, and a failure never blocks later runs.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import duckdb
import locations
import pandas as pd
import pytest

import loadstone as dlt
from loadstone.cli import main
from loadstone.exceptions import LoadstoneError

FIXTURES = locations.FIXTURES


def deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@attrs.frozen
class Case:
    """A file's content, the bad-record mode, and what the run must end with."""

    name: str
    content: bytes
    mode: str = "fail"
    #: ids loaded into table t, in order; None: the run fails and loads nothing
    ids: tuple[int, ...] | None = None
    #: text the one error line must hold
    message: str = ""


def lines(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


BIG = json.dumps({"id": 1, "blob": "x" * 100_000})

CASES = [
    Case("first_record_over_64k.jsonl", lines(BIG, '{"id": 2}'), ids=(1, 2)),
    Case(
        "bad_first_line.jsonl",
        lines('{"id": 1,,}', '{"id": 2}', '{"id": 3}'),
        message="bad_first_line.jsonl line 1:",
    ),
    Case("bad_first_line.jsonl", lines('{"id": 1,,}', '{"id": 2}', '{"id": 3}'), "skip", (2, 3)),
    Case(
        "bad_first_line.jsonl", lines('{"id": 1,,}', '{"id": 2}', '{"id": 3}'), "quarantine", (2, 3)
    ),
    Case(
        "deep.jsonl",
        lines('{"id": 1}', deep(1500), '{"id": 3}'),
        message="deep.jsonl line 2: nested deeper than",
    ),
    Case("deep.jsonl", lines('{"id": 1}', deep(1500), '{"id": 3}'), "skip", (1, 3)),
    Case(
        "wide.jsonl",
        lines('{"id": 1}', json.dumps({f"k{i}": i for i in range(30_001)})),
        message="wide.jsonl line 2: a row of 30001 values",
    ),
    Case(
        "surrogate.jsonl",
        lines('{"id": 1}', '{"id": 2, "v": "\\ud800x"}'),
        message="surrogate.jsonl line 2: unpaired surrogate",
    ),
    Case(
        "nan_first.jsonl",
        lines('{"id": 1, "v": NaN}', '{"id": 2, "v": 1.5}'),
        message="nan_first.jsonl line 1: NaN is not valid JSON",
    ),
    Case(
        "nan_later.jsonl",
        lines('{"id": 1, "v": 1.5}', '{"id": 2, "v": NaN}'),
        message="nan_later.jsonl line 2: NaN is not valid JSON",
    ),
    Case(
        "infinity.jsonl",
        lines('{"id": 1, "v": 1.5}', '{"id": 2, "v": -Infinity}'),
        message="infinity.jsonl line 2: -Infinity is not valid JSON",
    ),
    Case(
        "out_of_range.jsonl",
        lines('{"id": 1, "v": 1.5}', '{"id": 2, "v": 1e400}'),
        message="out_of_range.jsonl line 2: number 1e400 is out of the range",
    ),
    Case(
        "specials.jsonl",
        lines('{"id": 1, "v": NaN}', '{"id": 2, "v": 1e400}', '{"id": 3, "v": 2.5}'),
        "skip",
        (3,),
    ),
    Case("bom_array.json", b'\xef\xbb\xbf[{"id": 1}, {"id": 2}]', ids=(1, 2)),
    Case("bom_lines.jsonl", b'\xef\xbb\xbf{"id": 1}\n{"id": 2}\n', ids=(1, 2)),
    Case(
        "truncated.jsonl.gz",
        gzip.compress(lines(*[json.dumps({"id": i, "pad": "x" * 50}) for i in range(2000)]))[:400],
        message="truncated.jsonl.gz is not a complete gzip file",
    ),
    Case(
        "not_gzip.jsonl.gz", lines('{"id": 1}'), message="not_gzip.jsonl.gz is not a complete gzip"
    ),
]


def loaded_ids(pipeline_name: str) -> list[int]:
    path = Path(f"{pipeline_name}.duckdb")
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as conn:
        known = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = 'ds' AND table_name = 't'"
        ).fetchall()
        if not known:
            return []
        return [row[0] for row in conn.execute("SELECT id FROM ds.t ORDER BY id").fetchall()]


def run_cli(path: Path, pipeline_name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["run", str(path), "-t", "t", "-p", pipeline_name, "--dataset", "ds", "-q"])
    return code, capsys.readouterr().err


def check_outcome(case: Case, pipeline_name: str, code: int, err: str) -> None:
    if case.ids is None:
        assert code != 0
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "Traceback" not in err, err
        assert case.message in errors[0], errors[0]
        assert loaded_ids(pipeline_name) == []
    else:
        assert code == 0, err
        assert loaded_ids(pipeline_name) == list(case.ids)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.name}-{c.mode}")
def test_cli(case: Case, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    monkeypatch.setenv("NORMALIZE__ON_BAD_RECORD", case.mode)
    path = Path(case.name)
    path.write_bytes(case.content)
    code, err = run_cli(path, "cli", capsys)
    check_outcome(case, "cli", code, err)
    # the failure poisons nothing: the fixed input loads exactly once
    fixed = lines('{"id": 7}')
    path.write_bytes(gzip.compress(fixed) if path.suffix == ".gz" else fixed)
    code, err = run_cli(path, "cli", capsys)
    assert code == 0, err
    assert loaded_ids("cli") == sorted([*(case.ids or ()), 7])


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.name}-{c.mode}")
def test_api(case: Case, monkeypatch: Any) -> None:
    monkeypatch.setenv("NORMALIZE__ON_BAD_RECORD", case.mode)
    path = Path(case.name)
    path.write_bytes(case.content)
    pipe = dlt.pipeline("api", destination="duckdb", dataset_name="ds")
    if case.ids is None:
        with pytest.raises(LoadstoneError) as failure:
            pipe.run(path, table_name="t")
        assert case.message in str(failure.value)
        assert "\n" not in str(failure.value)
        assert loaded_ids("api") == []
    else:
        pipe.run(path, table_name="t")
        assert loaded_ids("api") == list(case.ids)
    assert pipe.list_pending_packages() == []


def test_quarantined_lines_name_their_file_and_line(monkeypatch: Any) -> None:
    monkeypatch.setenv("NORMALIZE__ON_BAD_RECORD", "quarantine")
    Path("mixed.jsonl").write_bytes(
        lines('{"id": 1,,}', '{"id": 2}', deep(1500), '{"id": 4, "v": NaN}', '{"id": 5}')
    )
    dlt.pipeline("q", destination="duckdb", dataset_name="ds").run(
        Path("mixed.jsonl"), table_name="t"
    )
    with duckdb.connect("q.duckdb", read_only=True) as conn:
        bad = conn.execute("SELECT file, line FROM ds._bad_records ORDER BY line").fetchall()
    assert bad == [("mixed.jsonl", 1), ("mixed.jsonl", 3), ("mixed.jsonl", 4)]
    assert loaded_ids("q") == [2, 5]


def nested_dict(levels: int) -> dict[str, Any]:
    item: dict[str, Any] = {"id": 1}
    for _ in range(levels):
        item = {"a": item}
    return item


@pytest.mark.parametrize(
    ("item", "message"),
    [({"id": 1, "v": "a\ud800"}, "unpaired surrogate"), (nested_dict(1200), "nested too deep")],
    ids=["lone_surrogate", "deep_dict"],
)
def test_python_items_that_cannot_be_written_fail_in_one_line(item: Any, message: str) -> None:
    pipe = dlt.pipeline("py", destination="duckdb", dataset_name="ds")
    with pytest.raises(LoadstoneError) as failure:
        pipe.run([{"id": 0}, item], table_name="t")
    assert message in str(failure.value) and "item 2 of table 't'" in str(failure.value)
    assert loaded_ids("py") == []
    assert pipe.list_pending_packages() == []


def test_special_floats_from_python_are_null_as_dlt_stores_them() -> None:
    observed = json.loads((FIXTURES / "dlt_special_values.json").read_text())["python_objects"]
    pipe = dlt.pipeline("specials", destination="duckdb", dataset_name="ds")
    pipe.run(
        [{"id": 1, "v": 1.5}, {"id": 2, "v": float("inf")}, {"id": 3, "v": float("-inf")}],
        table_name="t",
    )
    with duckdb.connect("specials.duckdb", read_only=True) as conn:
        rows = conn.execute("SELECT id, v FROM ds.t ORDER BY id").fetchall()
    assert [[repr(v) for v in row] for row in rows] == observed["py_inf_line2"]["rows"]


def test_missing_value_markers_load_as_null_not_as_their_text() -> None:
    """``df.to_dict("records")`` puts ``pd.NaT`` where a timestamp is missing: it is null,
    not the text "NaT" in a variant column (dlt 1.31 loads that text; docs/migrating.md)."""
    pipe = dlt.pipeline("missing", destination="duckdb", dataset_name="ds")
    frame = pd.DataFrame({"id": [1, 2], "ts": pd.to_datetime(["2024-01-01", None])})
    rows = frame.to_dict(orient="records")
    rows[1].update(na=pd.NA, dec=Decimal("NaN"), inf=Decimal("-Infinity"))
    pipe.run([*rows, {"id": 3, "dec": Decimal("1.5")}], table_name="t")
    with duckdb.connect("missing.duckdb", read_only=True) as conn:
        found = conn.execute("SELECT id, ts IS NULL, dec FROM ds.t ORDER BY id").fetchall()
    assert found == [(1, False, None), (2, True, None), (3, True, Decimal("1.5"))]
    columns = pipe.default_schema.tables["t"]["columns"]
    assert [c for c in columns if not c.startswith("_dlt")] == ["id", "ts", "dec"]


def test_special_numbers_in_files_are_rejected_on_every_line_as_dlt_does() -> None:
    observed = json.loads((FIXTURES / "dlt_special_values.json").read_text())["jsonl_files"]
    assert not any(outcome["ok"] for name, outcome in observed.items() if "bom" not in name)
