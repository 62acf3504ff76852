"""``loadstone.config[...]`` / ``loadstone.secrets[...]``: dlt's item access on the accessors.

The outcomes asserted here were observed on dlt 1.31 with the same programs (``import dlt``):
a value is read from the environment or the project files, a missing key raises
``ConfigFieldMissingException`` (a ``KeyError``), a value set in code is seen by both
accessors and by injected arguments, the environment still wins over it, a file does not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import loadstone as dlt
from loadstone import config
from loadstone.exceptions import ConfigFieldMissingException, ConfigValueCannotBeCoercedException


@pytest.fixture(autouse=True)
def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOADSTONE_HOME", str(tmp_path / "home"))
    for name in list(os.environ):
        if name.startswith(("SOURCES__", "NESTED__")):
            monkeypatch.delenv(name)
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text(
        '[sources.f]\nz = 3\n[sources.g]\nq = "fromfile"\n', encoding="utf-8"
    )
    monkeypatch.setenv("SOURCES__X__Y", "envval")
    config.clear_assigned()
    yield tmp_path
    config.clear_assigned()


@pytest.mark.parametrize("accessor", [dlt.config, dlt.secrets], ids=["config", "secrets"])
def test_item_read_contains_and_get(accessor: object) -> None:
    # dlt 1.31: 'envval'; True False; .get -> 'envval' / None
    assert accessor["sources.x.y"] == "envval"
    assert "sources.x.y" in accessor
    assert "sources.x.nope" not in accessor
    assert accessor.get("sources.x.y") == "envval"
    assert accessor.get("sources.x.nope") is None


def test_config_reads_config_toml_and_secrets_do_not() -> None:
    # dlt 1.31: config: 3; {'z': 3}; True; secrets: ConfigFieldMissingException, None, False
    assert dlt.config["sources.f.z"] == 3
    assert dlt.config["sources.f"] == {"z": 3}
    assert "sources.f" in dlt.config
    with pytest.raises(ConfigFieldMissingException):
        dlt.secrets["sources.f.z"]
    assert dlt.secrets.get("sources.f.z") is None
    assert "sources.f" not in dlt.secrets


# dlt 1.31's answers for an environment value: config.get(key) is the text as set,
# config[key] casts it, config.get(key, type) coerces it
ENV_READS = [
    ("7", "7", 7),
    ("True", "True", True),
    ("[1, 2, 3]", "[1, 2, 3]", [1, 2, 3]),
    ('{"a": 1, "b": [2]}', '{"a": 1, "b": [2]}', {"a": 1, "b": [2]}),
    ("{a = 1}", "{a = 1}", "{a = 1}"),
    ("2.5", "2.5", 2.5),
    ('"quoted"', '"quoted"', '"quoted"'),
    ("2024-01-02", "2024-01-02", "2024-01-02"),
    ("0x10", "0x10", 16),
    ("01", "01", 1),
    ("1e3", "1e3", 1000.0),
    ("null", "null", "null"),
    ("yes", "yes", "yes"),
]


@pytest.mark.parametrize(("raw", "got", "cast"), ENV_READS)
def test_environment_values_as_dlts_accessors_give_them(
    monkeypatch: pytest.MonkeyPatch, raw: str, got: object, cast: object
) -> None:
    monkeypatch.setenv("SOURCES__X__V", raw)
    assert dlt.config.get("sources.x.v") == got
    assert dlt.secrets.get("sources.x.v") == got
    assert dlt.config["sources.x.v"] == cast
    assert dlt.secrets["sources.x.v"] == cast


# (configured text, type) -> dlt 1.31's config.get(key, type); None: it cannot be coerced
TYPED_READS = [
    ("7", int, 7),
    ("0x10", int, 16),
    ("5.0", int, None),
    ("True", int, None),
    ("0x10", float, 16.0),
    ("1e3", float, 1000.0),
    ("yes", bool, True),
    ("f", bool, False),
    ("on", bool, None),
    ("[1, 2]", list, [1, 2]),
    ("{}", list, None),
    ("{a = 1}", dict, None),
    ('"quoted"', str, '"quoted"'),
]


@pytest.mark.parametrize(("raw", "hint", "expected"), TYPED_READS)
def test_get_with_a_type_coerces_as_dlt(
    monkeypatch: pytest.MonkeyPatch, raw: str, hint: type, expected: object
) -> None:
    monkeypatch.setenv("SOURCES__X__V", raw)
    if expected is None:
        with pytest.raises(ConfigValueCannotBeCoercedException, match=r"field `sources\.x\.v`"):
            dlt.config.get("sources.x.v", hint)
    else:
        assert dlt.config.get("sources.x.v", hint) == expected


def test_get_with_a_type_coerces_file_values_as_dlt() -> None:
    # dlt 1.31 for [sources.f] z = 3 and a list: '3', 3.0, True; '[1,"a"]'; a list for dict
    (Path.cwd() / ".dlt" / "config.toml").write_text(
        '[sources.f]\nz = 3\nl = [1, "a"]\n', encoding="utf-8"
    )
    assert dlt.config.get("sources.f.z", str) == "3"
    assert dlt.config.get("sources.f.z", float) == 3.0
    assert dlt.config.get("sources.f.z", bool) is True
    assert dlt.config.get("sources.f.l", str) == '[1,"a"]'
    assert dlt.config.get("sources.f.l", dict) == [1, "a"]


def test_a_type_as_second_argument_of_get_is_dlts_expected_type() -> None:
    # dlt 1.31: config.get("sources.f.z", int) == 3; a missing key with a type gives None
    assert dlt.config.get("sources.f.z", int) == 3
    assert dlt.config.get("sources.f.nope", int) is None
    assert dlt.secrets.get("sources.f.nope", expected_type=str) is None


def test_a_default_is_returned_for_a_missing_key() -> None:
    """A deliberate difference: dlt reads the second argument as a type and returns None."""
    assert dlt.config.get("sources.x.nope", "fallback") == "fallback"


@pytest.mark.parametrize("accessor", [dlt.config, dlt.secrets], ids=["config", "secrets"])
def test_a_missing_item_raises_config_field_missing_a_key_error(accessor: object) -> None:
    with pytest.raises(ConfigFieldMissingException) as raised:
        accessor["sources.x.nope"]
    assert isinstance(raised.value, KeyError)
    assert "sources.x.nope" in str(raised.value)
    assert not str(raised.value).startswith('"')  # the message, not a quoted repr


def test_assigned_values_are_seen_by_both_accessors() -> None:
    # dlt 1.31: 5 5, and os.environ is not touched; a dict's members are keys too
    dlt.config["sources.a.b"] = 5
    assert dlt.config["sources.a.b"] == 5
    assert dlt.secrets["sources.a.b"] == 5
    assert dlt.secrets.get("sources.a.b") == 5
    assert "SOURCES__A__B" not in os.environ
    dlt.secrets["nested.k"] = {"p": 1}
    assert dlt.config["nested.k"] == {"p": 1}
    assert dlt.config["nested.k.p"] == 1


def test_environment_wins_over_an_assigned_value_which_wins_over_files() -> None:
    # dlt 1.31: "override env? envval", "override file? setq"
    dlt.config["sources.x.y"] = "setval"
    dlt.config["sources.g.q"] = "setq"
    assert dlt.config["sources.x.y"] == "envval"
    assert dlt.config["sources.g.q"] == "setq"


def test_an_assigned_none_is_missing() -> None:
    # dlt 1.31: "k.v" in secrets is False; secrets["k.v"] raises; get gives None
    dlt.secrets["k.v"] = None
    assert "k.v" not in dlt.secrets
    assert dlt.secrets.get("k.v") is None
    with pytest.raises(ConfigFieldMissingException):
        dlt.secrets["k.v"]


def test_an_assigned_value_is_injected_into_a_source_argument() -> None:
    # dlt 1.31: [{'q': 'setq'}]
    dlt.config["sources.g.q"] = "setq"

    @dlt.source
    def g(q: str = dlt.config.value) -> object:
        @dlt.resource
        def r() -> object:
            yield {"q": q}

        return r

    assert list(g()) == [{"q": "setq"}]


def test_the_module_functions_keep_working() -> None:
    assert config.get("sources.f.z") == 3
    assert config.get_int("sources.f.z", 0) == 3
    assert config.resolve("sources.nope", default=7) == 7
    assert repr(dlt.config.value) == "ConfigValue(loadstone.config.value) awaiting injection"
    assert dlt.secrets.value is dlt.config.value


def test_secret_value_types_are_dlts() -> None:
    # dlt 1.31: TSecretValue("abc") == "abc"; an Annotated type
    assert dlt.TSecretValue("abc") == "abc"
    assert dlt.TSecretStrValue("abc") == "abc"
    assert hasattr(dlt.TSecretValue, "__metadata__")


def test_a_missing_field_names_dlts_fields_and_spec() -> None:
    # dlt 1.31 (p1246, p1205): fields ['token'], spec_name 'NeedsRConfiguration'; item access
    # reads 'BaseConfiguration'
    @dlt.resource
    def needs_r(token: str = dlt.secrets.value) -> object:
        yield {"t": token}

    with pytest.raises(ConfigFieldMissingException) as raised:
        list(needs_r())
    assert (raised.value.fields, raised.value.spec_name) == (["token"], "NeedsRConfiguration")
    with pytest.raises(ConfigFieldMissingException) as raised:
        dlt.config["sources.x.nope"]
    assert (raised.value.fields, raised.value.spec_name) == (
        ["sources.x.nope"],
        "BaseConfiguration",
    )
