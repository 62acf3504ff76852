"""``loadstone.sources.helpers.transform`` does what dlt 1.31's ``dlt.sources.helpers.transform``
does: the same filters, pivots and row hashes, the same rows loaded through ``add_filter``
(``tests/fixtures/sources/transform_helpers.json``, recorded under dlt 1.31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loadstone
from loadstone.sources.helpers import transform
from tests.sources.transform_cases import FIXTURE, PIVOTS, outcomes


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    found = outcomes(loadstone, transform, tmp_path_factory.mktemp("transform"))
    return json.loads(json.dumps(found))  # as the fixture holds it (tuples as lists)


@pytest.fixture(scope="module")
def dlts() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_take_first_and_skip_first_count_the_items_they_see(ours: Any, dlts: Any) -> None:
    assert (ours["take_first"], ours["skip_first"]) == (dlts["take_first"], dlts["skip_first"])


@pytest.mark.parametrize("case", range(len(PIVOTS)), ids=[repr(c[:2]) for c in PIVOTS])
def test_pivot_turns_lists_of_rows_into_dicts_as_dlt_does(ours: Any, dlts: Any, case: int) -> None:
    assert ours["pivot"][case] == dlts["pivot"][case], PIVOTS[case]


def test_row_hashes_are_dlts_values(ours: Any, dlts: Any) -> None:
    assert ours["hashes"] == dlts["hashes"]


def test_filters_keep_and_skip_the_first_rows_of_a_run(
    ours: Any, dlts: Any, tmp_path: Path
) -> None:
    assert ours["pipeline"] == dlts["pipeline"] == {"first": [1, 2, 3], "skipped": [4, 5]}
