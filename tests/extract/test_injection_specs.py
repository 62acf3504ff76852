"""An argument annotated with a configuration spec receives the spec, as in dlt 1.31.

``credentials: ConnectionStringCredentials = loadstone.secrets.value`` gets a
``ConnectionStringCredentials`` whether the configuration holds the connection string, its
fields one by one, or the caller passes a string or a dict; a ``Union``/``Optional`` with the
spec first does the same. The expected values are what dlt 1.31 handed the same functions
(run as a black box).
"""

from __future__ import annotations

import pytest

import loadstone
from loadstone.sources.credentials import ConnectionStringCredentials

URL = "postgresql://u:secret@localhost:5432/db"


def _received(source: object, **kwargs: object) -> object:
    seen: list[object] = []

    @loadstone.source(name="specs")
    def specs(credentials: ConnectionStringCredentials = loadstone.secrets.value) -> object:
        seen.append(credentials)
        return loadstone.resource([{"a": 1}], name="r")

    specs(**kwargs)
    return seen[0]


def _fields(value: object) -> tuple[object, ...]:
    assert isinstance(value, ConnectionStringCredentials)
    return (value.drivername, value.username, value.host, value.port, value.database)


def test_a_configured_connection_string_arrives_as_the_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCES__SPECS__CREDENTIALS", URL)
    received = _received(None)
    assert _fields(received) == ("postgresql", "u", "localhost", 5432, "db")
    assert received.to_native_representation() == URL  # type: ignore[attr-defined]


def test_fields_configured_one_by_one_make_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    for field, value in {"DRIVERNAME": "postgresql", "USERNAME": "u2", "PASSWORD": "pw"}.items():
        monkeypatch.setenv(f"SOURCES__SPECS__CREDENTIALS__{field}", value)
    monkeypatch.setenv("SOURCES__SPECS__CREDENTIALS__HOST", "h")
    monkeypatch.setenv("SOURCES__SPECS__CREDENTIALS__DATABASE", "d")
    received = _received(None)
    assert _fields(received) == ("postgresql", "u2", "h", None, "d")
    assert received.to_native_representation() == "postgresql://u2:pw@h/d"  # type: ignore[attr-defined]


def test_a_string_or_dict_passed_in_code_arrives_as_the_spec() -> None:
    assert _fields(_received(None, credentials="postgresql://e:x@eh/ed")) == (
        "postgresql",
        "e",
        "eh",
        None,
        "ed",
    )
    given = {"drivername": "mysql", "username": "m", "host": "mh", "database": "md"}
    received = _received(None, credentials=given)
    assert received.to_native_representation() == "mysql://m@mh/md"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "annotation", [ConnectionStringCredentials | str, ConnectionStringCredentials | None]
)
def test_a_union_with_the_spec_first_arrives_as_the_spec(
    annotation: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCES__UNIONS__CREDENTIALS", "postgresql://u3:x@h3/db3")
    seen: list[object] = []

    def unions(credentials=loadstone.secrets.value):  # type: ignore[no-untyped-def]  # annotated below
        seen.append(credentials)
        return loadstone.resource([{"a": 1}], name="r")

    unions.__annotations__["credentials"] = annotation
    loadstone.source(name="unions")(unions)()
    assert _fields(seen[0]) == ("postgresql", "u3", "h3", None, "db3")
