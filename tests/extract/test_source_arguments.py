"""``@source`` arguments that exclude each other are refused where dlt 1.31 refuses them."""

from __future__ import annotations

import pytest

import loadstone
from loadstone.exceptions import ArgumentsOverloadException


def test_a_name_beside_a_schema_is_refused_when_decorating() -> None:
    """dlt 1.31: "`name` has no effect when `schema` argument is present", raised by the
    decorator call itself, before any function is decorated."""
    with pytest.raises(ArgumentsOverloadException, match="`name` has no effect") as refused:
        loadstone.source(name="second", schema=loadstone.Schema("second"))
    assert refused.value.func_name == "source"


def test_a_schema_alone_names_the_source() -> None:
    @loadstone.source(schema=loadstone.Schema("second"))
    def two() -> object:
        return loadstone.resource([{"k": 2}], name="r2")

    assert two().name == "second"
