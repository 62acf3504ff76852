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


@dlt.resource
def documents(
    tags: dict[str, str] = dlt.config.value,
    ids: list[int] = dlt.config.value,
    extra: dict = {},  # noqa: B006 -- a default configuration replaces, never mutated
) -> Any:
    yield {"tags": tags, "ids": ids, "extra": extra, "note": "x"}


def test_json_text_configured_for_a_dict_or_list_argument_is_the_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As dlt 1.31 reads it (p768): an environment variable holds JSON, not TOML."""
    monkeypatch.setenv("SOURCES__DOCUMENTS__TAGS", '{"team": "data"}')
    monkeypatch.setenv("SOURCES__DOCUMENTS__IDS", "[4, 5]")
    monkeypatch.setenv("SOURCES__DOCUMENTS__EXTRA", '{"k": [1]}')
    [row] = list(documents())
    assert row == {"tags": {"team": "data"}, "ids": [4, 5], "extra": {"k": [1]}, "note": "x"}


def test_configured_values_are_coerced_to_the_arguments_type(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # dlt 1.31 (p1248): a TOML "6" for an int is 6, '"quoted"' for a str keeps its quotes,
    # an argument without a type gets the environment's text
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text('[sources.typed]\nnum = "6"\n')
    monkeypatch.setenv("SOURCES__TYPED__TEXT", '"quoted"')
    monkeypatch.setenv("SOURCES__TYPED__ANY", "42")
    monkeypatch.setenv("SOURCES__TYPED__BAD", "abc")

    @dlt.source(name="typed")
    def typed(
        num: int = dlt.config.value, text: str = dlt.config.value, any=dlt.config.value
    ) -> Any:
        return dlt.resource([{"num": num, "text": text, "any": any}], name="r")

    assert list(typed()) == [{"num": 6, "text": '"quoted"', "any": "42"}]

    @dlt.source(name="typed")
    def bad(bad: int = dlt.config.value) -> Any:
        return dlt.resource([{"bad": bad}], name="r")

    with pytest.raises(dlt.ConfigValueCannotBeCoercedException):
        bad()
