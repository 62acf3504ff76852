"""Run on Spark in many chunks, the normalizer gives exactly the sequential result.

"First value fixes the type" means first in source order; a chunk that guessed another type
for a new column is re-run with the decided type, so the output never depends on how the
input was split or which task finished first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer

SMALL_CHUNKS = 256


def _run(
    tmp_path: Path,
    name: str,
    files: list[tuple[str, list[Any]]],
    context: NormalizeContext,
    chunk_bytes: int,
    gz: bool = False,
) -> Any:
    package = StandInPackage(tmp_path / name)
    for table, records in files:
        package.add_jsonl(table, records, gz=gz)
    return RelationalNormalizer(chunk_bytes=chunk_bytes).normalize(package, schema_of(), context)


def _columns(result: Any) -> dict[str, list[tuple[str, str | None]]]:
    return {
        name: [(c["name"], c.get("data_type")) for c in table["columns"].values()]
        for name, table in schema_tables(result).items()
    }


def _values(result: Any, table: str) -> list[str]:
    drop = {"_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_load_id"}
    return sorted(
        json.dumps(
            {k: v for k, v in row.items() if k not in drop and v is not None},
            sort_keys=True,
            default=str,
        )
        for row in read_table(result, table)
    )


def test_a_chunk_that_guessed_another_type_is_rerun_with_the_first_values_type(
    spark: Any, tmp_path: Path
) -> None:
    records = [{"n": i, "v": i} for i in range(20)] + [
        {"n": 100 + i, "v": f"text {i}"} for i in range(20)
    ]
    context = NormalizeContext(spark=spark, naming=snake_case())
    normalizer = RelationalNormalizer(chunk_bytes=SMALL_CHUNKS)
    package = StandInPackage(tmp_path / "p")
    package.add_jsonl("t", records)
    result = normalizer.normalize(package, schema_of(), context)
    assert normalizer.last_stats["reruns"] >= 1
    columns = dict(_columns(result)["t"])
    assert columns["v"] == "bigint"
    assert columns["v__v_text"] == "text"
    rows = read_table(result, "t")
    assert sorted(r["v__v_text"] for r in rows if r.get("v__v_text")) == sorted(
        f"text {i}" for i in range(20)
    )
    assert {r["v"] for r in rows if r.get("v") is not None} == set(range(20))


def test_many_chunks_on_spark_equal_one_sequential_pass(
    spark: Any, tmp_path: Path, cases_dir: Path
) -> None:
    events = json.loads((cases_dir / "github_events.json").read_text(encoding="utf-8"))
    mixed = [
        {"id": i, "x": [1, "a", 2.5, None, True][i % 5], "l": [[i]] * (i % 3)} for i in range(60)
    ]
    files = [("events", events), ("mixed", mixed)]
    sequential = _run(
        tmp_path,
        "seq",
        files,
        NormalizeContext(spark=None, naming=snake_case()),
        chunk_bytes=1 << 30,
    )
    parallel = _run(
        tmp_path,
        "par",
        files,
        NormalizeContext(spark=spark, naming=snake_case()),
        chunk_bytes=64 * 1024,
    )
    assert _columns(parallel) == _columns(sequential)
    assert list(_columns(parallel)) == list(_columns(sequential))
    for table in schema_tables(sequential):
        assert parallel.tables[table].row_count == sequential.tables[table].row_count
        assert _values(parallel, table) == _values(sequential, table)


def test_gzip_files_are_read_as_one_chunk_each(spark: Any, tmp_path: Path) -> None:
    context = NormalizeContext(spark=spark, naming=snake_case())
    files = [("t", [{"a": i, "kids": [i, i]} for i in range(10)]), ("t", [{"a": "x", "b": 1}])]
    result = _run(tmp_path, "gz", files, context, chunk_bytes=SMALL_CHUNKS, gz=True)
    assert _columns(result)["t"][:1] == [("a", "bigint")]
    assert ("a__v_text", "text") in _columns(result)["t"]
    assert result.tables["t"].row_count == 11
    assert result.tables["t__kids"].row_count == 20


def test_nested_rows_link_to_their_parents_across_chunks(spark: Any, tmp_path: Path) -> None:
    context = NormalizeContext(spark=spark, naming=snake_case())
    records = [{"id": i, "kids": [{"k": j} for j in range(i % 4)]} for i in range(40)]
    result = _run(tmp_path, "links", [("t", records)], context, chunk_bytes=SMALL_CHUNKS)
    parents = {r["_dlt_id"]: r["id"] for r in read_table(result, "t")}
    kids = read_table(result, "t__kids")
    assert len(kids) == sum(i % 4 for i in range(40))
    assert all(parents[k["_dlt_parent_id"]] % 4 > k["_dlt_list_idx"] for k in kids)


def test_a_lazy_session_starts_in_the_background_and_takes_over_remaining_chunks(
    spark: Any, tmp_path: Path
) -> None:
    calls: list[int] = []

    def lazy() -> Any:
        calls.append(1)
        return spark

    context = NormalizeContext(spark=lazy, naming=snake_case())
    records = [{"a": i, "b": [i] * (i % 3)} for i in range(300)]
    sequential = _run(tmp_path, "seq", [("t", records)], context, chunk_bytes=1 << 20)
    assert calls == []
    package = StandInPackage(tmp_path / "many")
    package.add_jsonl("t", records)
    normalizer = RelationalNormalizer(chunk_bytes=SMALL_CHUNKS, lazy_spark_bytes=1)
    parallel = normalizer.normalize(package, schema_of(), context)
    assert calls == [1]
    assert normalizer.last_stats["chunks"] > 2
    assert _columns(parallel) == _columns(sequential)
    for table in ("t", "t__b"):
        assert _values(parallel, table) == _values(sequential, table)


def test_a_small_package_with_a_lazy_session_never_starts_spark(tmp_path: Path) -> None:
    def lazy() -> Any:
        raise AssertionError("Spark must not start for a small package")

    context = NormalizeContext(spark=lazy, naming=snake_case())
    records = [{"a": i} for i in range(100)]
    result = _run(tmp_path, "small", [("t", records)], context, chunk_bytes=SMALL_CHUNKS)
    assert result.tables["t"].row_count == 100


def _progress_of(tmp_path: Path, spark: Any) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    context = NormalizeContext(
        spark=spark, naming=snake_case(), progress=lambda done, total: seen.append((done, total))
    )
    records = [{"n": i, "pad": "x" * 40} for i in range(200)]
    package = StandInPackage(tmp_path / "p")
    package.add_jsonl("t", records)
    RelationalNormalizer(chunk_bytes=2048).normalize(package, schema_of(), context)
    return seen


def test_chunks_done_are_reported_as_they_finish_in_the_driver(tmp_path: Path) -> None:
    seen = _progress_of(tmp_path, None)
    total = seen[-1][1]
    assert total > 5
    assert seen == [(done, total) for done in range(1, total + 1)]


def test_chunks_done_on_spark_are_reported_up_to_all_of_them(spark: Any, tmp_path: Path) -> None:
    seen = _progress_of(tmp_path, spark)
    dones = [done for done, _total in seen]
    # the status tracker is polled: values only grow, the job's end may come before a last poll
    assert dones == sorted(dones)
    assert all(total == seen[0][1] for _done, total in seen)
    assert not seen or dones[-1] <= seen[0][1]


def test_chunks_on_a_cluster_are_planned_for_the_executors_it_waits_for(
    monkeypatch: Any,
) -> None:
    from loadstone.plugins.normalizers.relational.settings import cluster_slots

    monkeypatch.setenv("NORMALIZE__MIN_EXECUTORS", "3")
    monkeypatch.setenv("SPARK__MASTER", "spark://127.0.0.1:7077")
    assert cluster_slots() == 3  # chunks in a multiple of 3 (balanced_chunk_bytes)
    monkeypatch.setenv("SPARK__MASTER", "local[2]")
    assert cluster_slots() == 1  # a local master: the local worker processes decide
