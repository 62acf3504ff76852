"""Configuration replaces the plain defaults of a source's or resource's arguments, as in
dlt 1.31 (``page_size: int = 100`` is set by ``SOURCES__SHOP__PAGE_SIZE``); an argument
given in code wins; recorded from dlt as a black box (differential program p331)."""

from __future__ import annotations

from typing import Any

import pytest

import loadstone as dlt


@dlt.source
def shop(page_size: int = 10, region: str = "us", schema: str | None = None) -> Any:
    @dlt.resource
    def settings() -> Any:
        yield {"page_size": page_size, "region": region, "schema": schema}

    return settings


@dlt.resource
def standalone(limit: int = 3) -> Any:
    yield {"limit": limit}


def test_configuration_replaces_defaults_and_code_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__SHOP__PAGE_SIZE", "7")
    monkeypatch.setenv("SOURCES__REGION", "123")  # text, as the default is
    monkeypatch.setenv("SCHEMA__NAMING", "snake_case")  # another setting's section
    assert list(shop()) == [{"page_size": 7, "region": "123", "schema": None}]
    assert list(shop(page_size=3)) == [{"page_size": 3, "region": "123", "schema": None}]
    monkeypatch.setenv(f"SOURCES__{__name__.rsplit('.', 1)[-1].upper()}__STANDALONE__LIMIT", "5")
    assert list(standalone()) == [{"limit": 5}] and list(standalone(limit=1)) == [{"limit": 1}]
