"""The filesystem destination writes dlt 1.31's layout and rows for the same input.

``tests/fixtures/filesystem/dlt_layout.json`` was recorded by running dlt 1.31 as a black box
(``record_dlt.py`` beside it) on every shared case, parquet and jsonl, loading twice with
append and once with replace. Here loadstone runs the same steps and must produce the same
files (load ids, file ids, hashes and times masked), the same rows per table, the same
``_dlt_loads`` records and bookkeeping keys, and the same ``init`` marker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import locations
import pytest
from filesystem_support import DATASET, files_of, fs_pipeline, load_case, rows_per_table

FIXTURE = json.loads((locations.FIXTURES / "filesystem" / "dlt_layout.json").read_text())
CASES = {key: case for key, case in FIXTURE["cases"].items() if not case["dlt_failed"]}


def _mask(relative: str, load_ids: list[str]) -> str:
    for load_id in sorted(load_ids, key=len, reverse=True):
        relative = relative.replace(load_id, "{load_id}")
    relative = re.sub(r"[0-9a-f]{64}", "{hash}", relative)
    relative = re.sub(r"\{load_id\}\.[0-9a-f]{10}\.", "{load_id}.{file_id}.", relative)
    return re.sub(r"__\d{10}\.\d+__", "__{ts}__", relative)


def _loads(dataset_dir: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted((dataset_dir / "_dlt_loads").iterdir()):
        record = json.loads(path.read_text())
        masked = ("load_id", "inserted_at", "schema_version_hash")
        records.append({k: ("{masked}" if k in masked else v) for k, v in record.items()})
    return sorted(records, key=json.dumps)


def _first_keys(folder: Path) -> list[str]:
    first = sorted(folder.iterdir())[0]
    return list(json.loads(first.read_text().splitlines()[0]))


@pytest.mark.oracle
@pytest.mark.parametrize("key", sorted(CASES))
def test_same_layout_rows_and_records_as_dlt(tmp_path: Path, cases_dir: Path, key: str) -> None:
    expected = CASES[key]
    file_name = key.split(":")[0]
    data = load_case(cases_dir, file_name)
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"rec_{expected['table']}", str(bucket))
    dataset_dir = bucket / DATASET
    load_ids: list[str] = []
    for step in expected["steps"]:
        info = pipeline.run(
            data,
            table_name=expected["table"],
            loader_file_format=expected["format"],
            write_disposition=step["write_disposition"],
        )
        load_ids += info.loads_ids
        layout = [_mask(r, load_ids) for r in files_of(dataset_dir)]
        assert sorted(set(layout)) == step["layout"]
        assert {m: layout.count(m) for m in set(layout)} == step["layout_counts"]
        assert rows_per_table(dataset_dir) == step["rows"]
        assert _loads(dataset_dir) == step["loads"]
        for folder, keys in step["system_keys"].items():
            assert _first_keys(dataset_dir / folder) == keys
        assert (dataset_dir / "init").read_text() == step["init"]
