"""The normalizer inside a real pipeline run: bad lines stop the load, a fixed file loads."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

import loadstone
from loadstone.exceptions import BadRecordError


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_bad_line_fails_the_run_naming_the_users_file_and_line_and_a_fixed_file_loads(
    tmp_path: Path,
) -> None:
    good = json.dumps({"id": 1, "tags": ["a", "b"]})
    source = _write(tmp_path / "users.jsonl", [good, good, "{not json", good])
    database = tmp_path / "p.duckdb"
    pipeline = loadstone.pipeline(
        "bad_lines", destination=loadstone.destinations.duckdb(str(database)), dataset_name="d"
    )
    with pytest.raises(loadstone.LoadstoneError) as info:
        pipeline.run(source, table_name="users")
    error = info.value if isinstance(info.value, BadRecordError) else info.value.__cause__
    assert isinstance(error, BadRecordError), info.value
    assert error.line == 3
    assert error.file.endswith("users.jsonl")

    with duckdb.connect(str(database)) as con:
        tables = {
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
    assert "users" not in tables, "nothing of a failed package reaches the destination"

    # the failed package (a copy of the bad input) is set aside: fix the file and run again
    assert pipeline.list_pending_packages() == []
    assert len(list(pipeline.failed_packages_dir.iterdir())) == 1
    _write(source, [good, good, good])
    pipeline = loadstone.pipeline(
        "bad_lines", destination=loadstone.destinations.duckdb(str(database)), dataset_name="d"
    )
    pipeline.run(source, table_name="users")
    with duckdb.connect(str(database)) as con:
        assert con.execute("SELECT count(*) FROM d.users").fetchone() == (3,)
        assert con.execute("SELECT count(*) FROM d.users__tags").fetchone() == (6,)
