"""``spec=``: a class whose attributes default a resource's or source's configured arguments
(dlt's ``@configspec`` class; a dataclass of the same fields ports it). Under dlt 1.31 the
same resource yields ``[{'n': 0, 'key': 'k'}, {'n': 1, 'key': 'k'}]``: ``limit`` from the
spec, ``api_key`` from configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import ConfigFieldMissingException


@dataclass
class NumbersSpec:
    limit: int = 2
    api_key: str | None = None


def test_a_spec_defaults_what_configuration_does_not_give(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__NUMBERS__API_KEY", "k")

    @dlt.resource(spec=NumbersSpec)
    def numbers(api_key: str = dlt.secrets.value, limit: int = dlt.config.value) -> Any:
        yield from ({"n": n, "key": api_key} for n in range(limit))

    assert list(numbers()) == [{"n": 0, "key": "k"}, {"n": 1, "key": "k"}]
    monkeypatch.setenv("SOURCES__NUMBERS__LIMIT", "3")
    assert len(list(numbers())) == 3  # configuration wins over the spec


def test_a_spec_default_of_none_is_still_missing() -> None:
    @dlt.source(spec=NumbersSpec)
    def numbers_source(api_key: str = dlt.secrets.value) -> Any:
        return dlt.resource([{"key": api_key}], name="keys")

    with pytest.raises(ConfigFieldMissingException, match="api_key"):
        numbers_source()


def test_a_spec_that_is_not_a_class_is_refused() -> None:
    with pytest.raises(TypeError, match="spec= takes a class"):

        @dlt.resource(spec=NumbersSpec())
        def numbers(limit: int = dlt.config.value) -> Any:
            yield limit
