"""Which local files ``filesystem`` lists: dlt 1.31's (recorded in
tests/fixtures/sources/filesystem_listing.json, differential program p463).

dlt lists the files Python's ``glob.glob(recursive=True)`` finds, so hidden files and folders
are not listed (loadstone listed ``.dot.csv`` and ``.hid/h.csv`` and loaded their rows).
dlt keeps the folder's own order; loadstone sorts by path (docs/sources/filesystem.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadstone.sources.filesystem import filesystem

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/filesystem_listing.json").read_text()
)
NAMES = ["zeta.csv", ".dot.csv", "a.csv", ".hid/h.csv", "sub/deeper/q.csv", "sub/m.csv", "B.csv"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in NAMES:
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("id\n1\n")
    return tmp_path


@pytest.mark.parametrize("glob", sorted(DLT["globs"]))
def test_hidden_files_and_folders_are_not_listed(root: Path, glob: str) -> None:
    listed = [f["relative_path"] for f in filesystem(bucket_url=str(root), file_glob=glob)]
    assert sorted(listed) == sorted(DLT["globs"][glob])


def test_the_files_are_listed_sorted_by_path(root: Path) -> None:
    listed = [f["relative_path"] for f in filesystem(bucket_url=str(root), file_glob="**/*.csv")]
    assert listed == sorted(DLT["globs"]["**/*.csv"])
