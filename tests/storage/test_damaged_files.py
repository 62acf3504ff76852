"""Every file loadstone reads back may be damaged: the error names it and says how to repair it.

Also: an extracted copy that is not what ``package.json`` recorded is never loaded in part;
normalized files that are missing or cut are normalized again from the extracted copy.
(Writes on a full disk: tests/pipelines/test_disk_full.py.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

import loadstone as dlt
from loadstone.cli import main
from loadstone.exceptions import LoadstoneError

ROWS = 50


def write_input(path: str = "items.jsonl", rows: int = ROWS) -> Path:
    with open(path, "w") as handle:
        for i in range(rows):
            handle.write(json.dumps({"id": i, "tags": [i]}) + "\n")
    return Path(path)


def pipeline() -> Any:
    return dlt.pipeline("dmg", destination="duckdb", dataset_name="ds")


def counts() -> tuple[int, int]:
    with duckdb.connect("dmg.duckdb", read_only=True) as conn:
        (rows, distinct) = conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM ds.items"
        ).fetchone()
    return rows, distinct


def pending_after_normalize() -> Any:
    """A package extracted and normalized but not loaded (as a crash leaves it)."""
    pipe = pipeline()
    pipe.extract(write_input(), table_name="items")
    pipe.normalize()
    (package,) = pipe.list_pending_packages()
    return pipe, package


def cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def test_a_truncated_package_json_is_named_and_dropping_it_works(capsys: Any) -> None:
    _pipe, package = pending_after_normalize()
    cut(package.root / "package.json", 40)
    with pytest.raises(LoadstoneError, match=r"package\.json is damaged .*drop-pending-packages"):
        pipeline().run()
    assert main(["pipeline", "dmg", "info"]) == 0
    assert "damaged" in capsys.readouterr().out
    assert main(["pipeline", "dmg", "drop-pending-packages"]) == 0
    assert pipeline().list_pending_packages() == []
    pipeline().run(write_input(), table_name="items")
    assert counts() == (ROWS, ROWS)


@pytest.mark.parametrize(
    ("relative", "repair"),
    [
        ("state.json", "delete it: the next run restores the state"),
        ("schemas/dmg.schema.json", "delete it: the next run takes the schema"),
    ],
)
def test_damaged_state_or_schema_names_the_file_and_following_the_advice_works(
    relative: str, repair: str, capsys: Any
) -> None:
    pipeline().run(write_input(), table_name="items")
    path = Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "dmg" / relative
    cut(path, 25)
    for command in (
        ["pipeline", "dmg", "info"],
        ["run", "items.jsonl", "-t", "items", "-p", "dmg"],
    ):
        assert main([*command]) != 0
        err = capsys.readouterr().err
        assert err.count("error: ") == 1 and relative.split("/")[-1] in err and repair in err
    path.unlink()
    pipeline().run(write_input("more.jsonl"), table_name="items")
    assert counts() == (2 * ROWS, ROWS)


def test_a_damaged_trace_is_named(capsys: Any) -> None:
    pipeline().run(write_input(), table_name="items")
    cut(Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "dmg" / "trace.json", 10)
    assert main(["pipeline", "dmg", "trace"]) != 0
    assert "trace.json is damaged" in capsys.readouterr().err


@pytest.mark.parametrize("keep", ["line_boundary", "mid_line"])
def test_a_cut_extracted_copy_is_never_loaded_in_part(
    keep: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACT__COPY_INPUTS", "true")  # the input is copied into the package
    pipe = pipeline()
    pipe.extract(write_input(), table_name="items")
    (package,) = pipe.list_pending_packages()
    (copy,) = package.extracted_files()
    data = copy.path.read_bytes()
    half = data[: len(data) // 2]
    copy.path.write_bytes(half[: half.rindex(b"\n") + 1] if keep == "line_boundary" else half)
    with pytest.raises(LoadstoneError, match=r"extracted file .* recorded .*run the same input"):
        pipeline().run()
    assert not Path("dmg.duckdb").exists() or counts() == (0, 0)
    pipeline().run(Path("items.jsonl"), table_name="items")
    assert counts() == (ROWS, ROWS)


def test_an_input_read_in_place_that_changed_with_its_size_and_time_is_refused() -> None:
    """Read in place (the default), the user's file is the package's data: a rewrite that
    keeps size and modification time is caught by the hash of its first and last 64 KiB."""
    pipe = pipeline()
    source = write_input()
    pipe.extract(source, table_name="items")
    (package,) = pipe.list_pending_packages()
    (extracted,) = package.extracted_files()
    assert extracted.path == Path(source).absolute()  # nothing copied
    stat = Path(source).stat()
    data = Path(source).read_bytes()
    Path(source).write_bytes(data.replace(b'"id": 1,', b'"id": 7,', 1))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(LoadstoneError, match=r"items\.jsonl of package .* changed after extract"):
        pipeline().run()
    assert not Path("dmg.duckdb").exists() or counts() == (0, 0)


@pytest.mark.parametrize("damage", ["missing", "cut"])
def test_damaged_normalized_files_are_normalized_again(damage: str) -> None:
    _pipe, package = pending_after_normalize()
    parquet = next(package.normalized_dir.rglob("*.parquet"))
    if damage == "missing":
        parquet.unlink()
    else:
        cut(parquet, 100)
    pipeline().run()
    assert counts() == (ROWS, ROWS)


def test_failed_packages_are_listed_by_info_with_their_cause(capsys: Any) -> None:
    Path("bad.jsonl").write_text('{"id": 1}\n{"id": \n')
    with pytest.raises(LoadstoneError):
        pipeline().run(Path("bad.jsonl"), table_name="items")
    assert main(["pipeline", "dmg", "info"]) == 0
    out = capsys.readouterr().out
    assert "failed packages: 1" in out and "bad record in bad.jsonl line 2" in out
