"""``section=`` of ``@resource`` and ``@source`` is where their arguments are configured, as
dlt 1.31 reads it: ``sources.<section>.<name>.<argument>`` (differential program p689: a
standalone resource with ``section="customsec"`` failed, its secret looked up under the
module's section)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import loadstone as dlt


def test_a_resource_section_names_where_its_arguments_are_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCES__CUSTOMSEC__TOKENS__TOKEN", "tok")

    @dlt.resource(standalone=True, section="customsec")
    def tokens(token: str = dlt.secrets.value) -> Iterator[Any]:
        yield {"token": token}

    assert list(tokens()) == [{"token": "tok"}]


def test_a_source_section_names_where_its_arguments_are_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCES__SEC__KEYED__KEY", "from_sec")

    @dlt.source(section="sec")
    def keyed(key: str = dlt.config.value) -> Any:
        return dlt.resource([{"key": key}], name="k")

    assert list(keyed()) == [{"key": "from_sec"}]
