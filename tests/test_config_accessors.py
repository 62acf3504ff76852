"""Typed configuration accessors: every caller reads a setting parsed and validated the same way.

A value that does not parse is an error naming the key and where the value came from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loadstone import config
from loadstone.exceptions import ConfigValueError


@pytest.mark.parametrize("raw", ["False", "false", "FALSE", "0", "no", "off"])
def test_false_in_any_spelling_reads_as_false(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("LOAD__KEEP_COMPLETED_PACKAGES", raw)
    assert config.get_bool("load.keep_completed_packages", True) is False


@pytest.mark.parametrize("raw", ["True", "true", "1", "yes", "on"])
def test_true_in_any_spelling_reads_as_true(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("LOAD__KEEP_COMPLETED_PACKAGES", raw)
    assert config.get_bool("load.keep_completed_packages", False) is True


def test_a_bad_boolean_names_the_key_and_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMALIZE__NATIVE", "maybe")
    with pytest.raises(ConfigValueError, match=r"normalize\.native.*'maybe'.*NORMALIZE__NATIVE"):
        config.get_bool("normalize.native", True)


def test_a_bad_value_in_a_file_names_the_file() -> None:
    folder = Path.cwd() / ".loadstone"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text('[normalize]\non_bad_record = "ignore"\n')
    with pytest.raises(ConfigValueError, match=r"one of fail, skip, quarantine.*config\.toml"):
        config.get_choice("normalize.on_bad_record", ("fail", "skip", "quarantine"), "fail")


def test_defaults_apply_when_nothing_is_configured() -> None:
    assert config.get_bool("load.keep_completed_packages", False) is False
    assert config.get_int("x.count", 3) == 3
    assert config.get_size("x.bytes", 10) == 10


@pytest.mark.parametrize(
    ("raw", "size"),
    [("1073741824", 2**30), ("1 GiB", 2**30), ("512MB", 512 * 10**6), ("2kib", 2048)],
)
def test_sizes_take_plain_bytes_and_units(
    monkeypatch: pytest.MonkeyPatch, raw: str, size: int
) -> None:
    monkeypatch.setenv("NORMALIZE__SPARK_MIN_BYTES", raw)
    assert config.get_size("normalize.spark_min_bytes", 0) == size


def test_integers_are_checked_against_their_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X__COUNT", "-1")
    with pytest.raises(ConfigValueError, match=r"x\.count must be an integer >= 0"):
        config.get_int("x.count", 1, minimum=0)
    monkeypatch.setenv("X__COUNT", "7")
    assert config.get_int("x.count", 1, minimum=0) == 7


def test_the_first_candidate_names_a_list_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__ENABLE_DATASET_NAME_NORMALIZATION", "False")
    keys = [
        "destination.duckdb.enable_dataset_name_normalization",
        "destination.enable_dataset_name_normalization",
    ]
    assert config.get_bool(keys, True) is False


@pytest.mark.parametrize(("raw", "kept"), [("False", False), ("True", True)])
def test_keep_completed_packages_is_read_as_written(
    monkeypatch: pytest.MonkeyPatch, raw: str, kept: bool
) -> None:
    """``LOAD__KEEP_COMPLETED_PACKAGES=False`` used to read as the (true) string "False"."""
    import loadstone as dlt

    monkeypatch.setenv("LOAD__KEEP_COMPLETED_PACKAGES", raw)
    pipe = dlt.pipeline(f"keep_{raw.lower()}", destination="duckdb", dataset_name="d")
    pipe.run([{"id": 1}], table_name="t")
    parquet = list(pipe.packages_dir.rglob("*.parquet"))
    assert bool(parquet) is kept
