"""A model given as ``columns=`` validates the resource's items by the resource's contract,
the one it has when it runs (dlt 1.31's; recorded in
``tests/fixtures/compat/pydantic_contract_given_by_apply_hints.json``)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

import loadstone


class Item(BaseModel):
    id: int
    name: str


ROWS = [{"id": 1, "name": "a", "more": 5}, {"id": "bad", "name": "b"}, {"id": 3, "name": "c"}]


def test_a_contract_given_by_apply_hints_validates_the_items() -> None:
    res = loadstone.resource(list(ROWS), name="items", columns=Item)
    res.apply_hints(schema_contract={"columns": "evolve", "data_type": "discard_row"})
    assert list(res) == [{"id": 1, "name": "a", "more": 5}, {"id": 3, "name": "c"}]


def test_the_items_are_validated_once() -> None:
    """apply_hints makes the validating step again in its place: one step, not two."""
    seen: list[Any] = []
    res = loadstone.resource(list(ROWS[:1]), name="items", columns=Item)
    res.add_map(lambda item: seen.append(item) or item)
    res.apply_hints(schema_contract={"columns": "discard_value"})
    res.apply_hints(schema_contract={"columns": "evolve"})
    assert list(res) == [{"id": 1, "name": "a", "more": 5}] == seen


def test_a_violation_is_the_resources_extraction_error() -> None:
    res = loadstone.resource(list(ROWS[1:]), name="items", columns=Item, schema_contract="freeze")
    with pytest.raises(loadstone.ResourceExtractionError) as raised:
        list(res)
    assert isinstance(raised.value.__cause__, loadstone.DataValidationError)
