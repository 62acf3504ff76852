"""Which local files ``filesystem`` lists: dlt 1.31's (recorded in
tests/fixtures/sources/filesystem_listing.json, differential program p463).

dlt lists a local folder as Python's ``glob.glob(recursive=True)`` does: hidden files and
folders are not listed (loadstone listed ``.dot.csv`` and ``.hid/h.csv`` and loaded their
rows), and the order is the folder's own (``os.listdir``), a folder's files before its
subfolders' for ``**/*.csv`` (loadstone sorted the paths, so a column the files disagree on
was typed by another file than under dlt, differential programs p461 and p471).
"""

from __future__ import annotations

import json
import os
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


def _in_folder_order(paths: list[str], folder: Path) -> list[str]:
    """``paths`` (files of ``folder``) in the order the folder lists them: dlt's order is the
    folder's, and the recording's folder listed its names in another order than this one."""
    order = {name: i for i, name in enumerate(os.listdir(folder))}
    return sorted(paths, key=lambda p: order[p.split("/")[-1]])


def test_a_folders_files_come_in_its_own_order_before_its_subfolders(root: Path) -> None:
    listed = [f["relative_path"] for f in filesystem(bucket_url=str(root), file_glob="**/*.csv")]
    top = [p for p in listed if p.count("/") == 1]
    assert listed[: len(top)] == _in_folder_order(top, root / "in")
    assert listed[len(top) :] == ["in/sub/m.csv", "in/sub/deeper/q.csv"]


def test_a_local_file_url_is_percent_encoded(tmp_path: Path) -> None:
    """dlt 1.31's ``file_url`` of a local file quotes its path (the table's primary key:
    ``s%20p/m%20n.csv``); ``local_file_path`` and ``open`` use the path itself."""
    names = ["a@b.csv", "c:d.csv", "e~f.csv", "g+h.csv", "r%s.csv", "s p/m n.csv", "ü.csv"]
    for name in names:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n1\n")
    items = sorted(filesystem(bucket_url=str(tmp_path), file_glob="**/*.csv"), key=str)
    base = "file://" + str(tmp_path).replace(" ", "%20")
    # dlt 1.31's outcome (differential program p1437)
    assert sorted(i["file_url"].removeprefix(base) for i in items) == [
        "/%C3%BC.csv",
        "/a%40b.csv",
        "/c%3Ad.csv",
        "/e~f.csv",
        "/g%2Bh.csv",
        "/r%25s.csv",
        "/s%20p/m%20n.csv",
    ]
    for item in items:
        assert item.local_file_path == str(tmp_path / item["relative_path"])
        with item.open() as handle:
            assert handle.read() == b"x\n1\n"
