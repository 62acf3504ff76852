"""Local worker processes: every core without a JVM, the same output as one process.

The chunk-split properties in ``test_normalizer_properties.py`` run through the pool too
(no Spark there, several chunks, the default worker count); these tests pin what the pool
adds: the worker count, the first malformed line, and a worker that dies.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.exceptions import BadRecordError, ConfigValueError, NormalizeError
from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer, local_pool
from loadstone.plugins.normalizers.relational.chunk_plan import plan_chunks
from loadstone.plugins.normalizers.relational.engine import run_chunk

SMALL_CHUNKS = 16 * 1024
#: the GitHub events (1.35 MB) in a dozen chunks: several per worker, each with tables of its
#: own to merge; smaller chunks add Parquet files, not cases
EVENT_CHUNKS = 128 * 1024
DROP = {"_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_load_id"}


def _events_package(tmp_path: Path, cases_dir: Path, name: str) -> StandInPackage:
    events = json.loads((cases_dir / "github_events.json").read_text(encoding="utf-8"))
    package = StandInPackage(tmp_path / name)
    package.add_jsonl("events", events)
    return package


def _rows_package(tmp_path: Path, name: str, chunks: int) -> StandInPackage:
    """One flat table of about ``chunks`` times :data:`SMALL_CHUNKS` bytes."""
    package = StandInPackage(tmp_path / name)
    package.add_jsonl("t", [{"n": n, "text": "x" * 100} for n in range(150 * chunks)])
    return package


def _normalize(
    package: StandInPackage, workers: int | None, chunk_bytes: int = SMALL_CHUNKS
) -> tuple[Any, RelationalNormalizer]:
    normalizer = RelationalNormalizer(chunk_bytes=chunk_bytes, workers=workers)
    context = NormalizeContext(spark=None, naming=snake_case())
    return normalizer.normalize(package, schema_of(), context), normalizer


def _content(result: Any) -> tuple[Any, dict[str, list[str]]]:
    values = {
        name: sorted(
            json.dumps({k: v for k, v in row.items() if k not in DROP}, sort_keys=True, default=str)
            for row in read_table(result, name)
        )
        for name in result.tables
    }
    return json.loads(json.dumps(schema_tables(result), default=str)), values


def test_workers_give_the_schema_and_rows_of_one_process(tmp_path: Path, cases_dir: Path) -> None:
    pooled, normalizer = _normalize(
        _events_package(tmp_path, cases_dir, "pooled"), workers=2, chunk_bytes=EVENT_CHUNKS
    )
    alone, _ = _normalize(
        _events_package(tmp_path, cases_dir, "alone"), workers=1, chunk_bytes=EVENT_CHUNKS
    )

    assert normalizer.last_stats["chunks"] > 8
    assert normalizer.last_stats["workers"] == 2
    assert _content(pooled) == _content(alone)


@pytest.mark.parametrize("workers", [2, 3])
def test_a_large_file_splits_into_chunks_the_workers_share_evenly(
    tmp_path: Path, workers: int
) -> None:
    package = StandInPackage(tmp_path / "even")
    package.add_jsonl("t", [{"n": n} for n in range(1000, 2000)])
    files = list(package.extracted_files())
    size = os.path.getsize(files[0].path)

    chunks = plan_chunks(files, size // 5 + 1, workers)  # five chunks, were it not for them

    assert len(chunks) == 6
    assert (chunks[0].start, chunks[-1].end) == (0, size)


def test_workers_default_to_the_cores_this_process_may_use(tmp_path: Path) -> None:
    package = _rows_package(tmp_path, "p", chunks=local_pool.default_workers() + 1)

    _, normalizer = _normalize(package, workers=None)

    assert normalizer.last_stats["chunks"] > local_pool.default_workers()
    assert normalizer.last_stats["workers"] == local_pool.default_workers()


def test_normalize_workers_comes_from_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NORMALIZE__WORKERS", "1")

    _, normalizer = _normalize(_rows_package(tmp_path, "p", chunks=4), workers=None)

    assert normalizer.last_stats["workers"] == 1


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_a_worker_count_below_one_is_an_error_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("NORMALIZE__WORKERS", value)

    with pytest.raises(ConfigValueError, match=r"normalize\.workers must be an integer >= 1"):
        _normalize(_rows_package(tmp_path, "p", chunks=4), workers=None)


def test_the_first_malformed_line_is_reported_as_one_process_reports_it(tmp_path: Path) -> None:
    lines = [json.dumps({"id": i, "text": "x" * 200}) for i in range(400)]
    lines[250] = '{"id": 250, broken'
    lines[390] = "{also broken"
    errors = []
    for workers in (2, 1):
        package = StandInPackage(tmp_path / f"w{workers}")
        package.add_raw("items", "\n".join(lines) + "\n", name="items.jsonl")
        with pytest.raises(BadRecordError) as caught:
            _normalize(package, workers=workers)
        errors.append(str(caught.value).replace(f"/w{workers}/", "/w/"))
        assert not any(package.normalized_dir.rglob("*.parquet"))

    assert errors[0] == errors[1]
    assert "items.jsonl" in errors[0] and "line 251" in errors[0]


def _killed_on_chunk_two(config: Any, chunk: Any, forced: Any, attempt: int) -> Any:
    if chunk.index == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return run_chunk(config, chunk, forced, attempt)


def test_a_worker_that_dies_fails_the_package_and_keeps_no_output(
    tmp_path: Path, cases_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_pool, "run_chunk", _killed_on_chunk_two)
    package = _events_package(tmp_path, cases_dir, "killed")

    with pytest.raises(NormalizeError, match="a normalize worker process died"):
        _normalize(package, workers=2)

    assert not any(package.normalized_dir.rglob("*.parquet"))


_PROBE = """
import sys
import pyarrow as pa
from loadstone.plugins.normalizers.relational.local_pool import skip_pandas_probe
skip_pandas_probe()
pa.array([1, 2])
print("pandas" in sys.modules, type(pa.table({"a": [1]}).to_pandas()).__name__)
"""


def test_a_worker_builds_arrow_arrays_without_importing_pandas() -> None:
    """pyarrow's probe for pandas objects costs each worker an import of pandas it never uses;
    a worker tells pyarrow pandas is absent, and ``to_pandas`` still finds it when asked."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "DataFrame"]
