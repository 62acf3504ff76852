"""Replay of dlt's recorded naming outputs: loadstone must produce the very same strings.

``fixtures/naming/dlt_cases.json.gz`` holds thousands of seeded random identifiers (Unicode,
emoji, punctuation, camelCase, digits first, 100-400 character strings, ``__`` inside, white
space around, ``▶``, newlines, quotes), paths and fragment lists, and what dlt 1.31 returned
for every operation of every built-in convention at every tested ``max_length``. It was
recorded from dlt used as a black box (``bench/naming_differential.py`` runs the same check
live). Errors compare by having happened: loadstone raises its own ``ValueError`` classes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from functools import cache
from importlib.metadata import entry_points
from typing import Any

import locations
import pytest

from loadstone.naming import NamingConvention

FIXTURE = locations.FIXTURES / "naming" / "dlt_cases.json.gz"
ERROR = "<error>"


@cache
def fixture() -> dict[str, Any]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as file:
        return json.load(file)


def text(index: int | None) -> str | None:
    return None if index is None else fixture()["strings"][index]


def expected(outcome: Any) -> Any:
    """Decode a recorded outcome: string index, list of indexes, None, or an error."""
    if isinstance(outcome, dict):
        return ERROR
    if isinstance(outcome, int):
        return text(outcome)
    if isinstance(outcome, list):
        return [text(index) for index in outcome]
    return outcome


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:
        return ERROR


def convention_class(name: str) -> type[NamingConvention]:
    """The class as users get it: entry point -> plugin module -> pluggy hook."""
    (entry_point,) = [ep for ep in entry_points(group="loadstone.naming") if ep.name == name]
    return entry_point.load().loadstone_naming_convention()


def inputs() -> dict[str, list[Any]]:
    cases = fixture()["cases"]
    identifiers = [text(index) for index in cases["identifiers"]]
    return {
        "identifiers": identifiers,
        "paths": [text(index) for index in cases["paths"]],
        "fragments": [[text(index) for index in parts] for parts in cases["fragments"]],
        "fragment_indexes": [
            [identifiers[index] for index in indexes] for indexes in cases["fragment_indexes"]
        ],
    }


def call_for(convention: NamingConvention, op: str, item: Any) -> Callable[[], Any]:
    if op in ("make_path", "shorten_fragments"):
        return lambda: getattr(convention, op)(*item)
    if op == "shorten_normalized_fragments":
        return lambda: convention.shorten_fragments(
            *(convention.normalize_identifier(part) for part in item)
        )
    return lambda: getattr(convention, op)(item)


def replay(name: str) -> tuple[int, list[str]]:
    """(outcomes compared, differences) for one convention over every max_length."""
    data = fixture()
    cls = convention_class(name)
    lengths = data["max_lengths"][name]
    conventions = [cls(max_length) for max_length in lengths]
    recorded = data["results"][name]
    all_inputs = inputs()
    compared = 0
    differences: list[str] = []
    for convention, properties in zip(conventions, recorded["properties"], strict=True):
        actual = {
            "name": convention.name(),
            "class_name": cls.name(),
            "str": str(convention),
            "is_case_sensitive": convention.is_case_sensitive,
            "max_length": convention.max_length,
            "path_separator": convention.PATH_SEPARATOR,
        }
        for key, want in properties.items():
            compared += 1
            if actual[key] != want:
                differences.append(f"{convention}.{key}: dlt={want!r} loadstone={actual[key]!r}")
    for op, source in data["operations"]:
        for item, row in zip(all_inputs[source], recorded[op], strict=True):
            for convention, max_length, want in zip(conventions, lengths, row, strict=True):
                compared += 1
                got = outcome(call_for(convention, op, item))
                if got != expected(want):
                    differences.append(
                        f"{name}({max_length}).{op}({item!r}): "
                        f"dlt={expected(want)!r} loadstone={got!r}"
                    )
    return compared, differences


def test_fixture_was_recorded_from_dlt_1_31_with_thousands_of_identifiers() -> None:
    data = fixture()
    assert data["dlt_version"].startswith("1.31")
    assert len(data["cases"]["identifiers"]) > 2000
    assert FIXTURE.stat().st_size < 3_000_000


@pytest.mark.oracle
@pytest.mark.parametrize(
    "name", ["snake_case", "sql_ci_v1", "sql_cs_v1", "direct", "duck_case", "s3_tables"]
)
def test_every_operation_matches_dlt_byte_for_byte(name: str) -> None:
    compared, differences = replay(name)
    print(f"{name}: {compared} outcomes compared, {len(differences)} differences")
    assert compared > 50_000
    assert differences == [], "\n".join(differences[:20])


@pytest.mark.oracle
def test_shorten_identifier_matches_dlt_including_too_small_max_lengths() -> None:
    data = fixture()
    shorten = convention_class("snake_case").shorten_identifier
    differences = []
    for (normalized, source, max_length), want in zip(
        data["cases"]["shorten"], data["results"]["shorten_identifier"], strict=True
    ):
        got = outcome(lambda n=normalized, s=source, m=max_length: shorten(text(n), text(s), m))
        if got != expected(want):
            differences.append((text(normalized), text(source), max_length, expected(want), got))
    assert len(data["cases"]["shorten"]) > 500
    assert differences == []


@pytest.mark.oracle
def test_s3_tables_refuses_max_length_above_255_like_dlt() -> None:
    cls = convention_class("s3_tables")
    recorded = [expected(want) for want in fixture()["results"]["too_long_s3_tables"]]
    assert recorded == [ERROR, ERROR]
    assert [outcome(lambda m=m: cls(m).max_length) for m in (256, 1000)] == recorded
