"""``filesystem`` / ``readers`` arguments from configuration, and a reader of ``readers``
called with its own arguments, as dlt 1.31 (tests/fixtures/sources/filesystem_configured.json,
differential program p474).

loadstone read only ``bucket_url`` and the credentials from configuration: ``file_glob`` in
``[sources.filesystem]`` was ignored (every file of the folder listed); and
``readers(...).read_jsonl()`` (dlt's documented call) raised "resource 'read_jsonl' is not a
function and cannot be called".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loadstone
from loadstone.sources.filesystem import filesystem, readers

DLT = json.loads(
    (
        Path(__file__).resolve().parents[1] / "fixtures/sources/filesystem_configured.json"
    ).read_text()
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "bk"
    (root / "s").mkdir(parents=True)
    (root / "a.csv").write_text("id,v\n1,x\n")
    (root / "b.csv").write_text("id,v\n2,y\n")
    (root / "c.jsonl").write_text('{"id": 3}\n')
    (root / "s" / "d.csv").write_text("id,v\n4,z\n")
    monkeypatch.setenv("SOURCES__FILESYSTEM__BUCKET_URL", str(root))
    monkeypatch.setenv("SOURCES__FILESYSTEM__FILE_GLOB", "*.csv")
    return root


def _listed(files: object) -> list[str]:
    return sorted(f["relative_path"] for f in files)  # type: ignore[attr-defined]  # items


def test_file_glob_comes_from_configuration_and_code_wins(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _listed(filesystem()) == DLT["config_glob"]
    assert _listed(filesystem(file_glob="**/*.csv")) == DLT["code_glob"]
    monkeypatch.setenv("SOURCES__FILESYSTEM__FILE_GLOB", "*.jsonl")
    assert _listed(filesystem()) == DLT["env_glob"]


def test_a_reader_of_readers_is_called_with_its_arguments(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCES__FILESYSTEM__FILE_GLOB", "*.jsonl")
    pipeline = loadstone.pipeline(
        "readers_called",
        destination=loadstone.destinations.duckdb(str(tmp_path / "out.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(readers().read_jsonl(chunksize=10))
    counts = sorted(pipeline.last_trace.last_normalize_info.row_counts.items())
    assert [list(c) for c in counts] == DLT["readers_read_jsonl_called"]
