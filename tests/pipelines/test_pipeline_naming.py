"""Naming in the pipeline: config and destination choose the convention, dataset names are
normalized, and a case collision on a case-insensitive destination stops before data moves."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

import loadstone as dlt
from loadstone import schema

#: the normalizer and the schema's final check each have their own collision error
COLLISION_ERRORS = (schema.IdentifierCollisionError,)

pytestmark = pytest.mark.spark


def tables(db: str, dataset: str) -> list[str]:
    with duckdb.connect(db, read_only=True) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
                "ORDER BY table_name",
                [dataset],
            ).fetchall()
        ]


def test_schema_naming_from_config_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "direct")
    pipe = dlt.pipeline("direct_names", destination="duckdb", dataset_name="d")
    pipe.run([{"createdAt": 1}], table_name="CamelCase")
    assert pipe.default_schema.naming_name == "direct"
    assert "CamelCase" in tables("direct_names.duckdb", "d")


def test_destination_factory_naming_convention_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "direct")
    pipe = dlt.pipeline(
        "factory_names",
        destination=dlt.destinations.duckdb("factory.duckdb", naming_convention="snake_case"),
        dataset_name="d",
    )
    pipe.run([{"createdAt": 1}], table_name="CamelCase")
    assert "camel_case" in tables("factory.duckdb", "d")


def test_case_collision_on_a_case_insensitive_destination_stops_before_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "sql_cs_v1")
    pipe = dlt.pipeline("collide", destination="duckdb", dataset_name="d")
    with pytest.raises(COLLISION_ERRORS, match="collision"):
        pipe.run([{"Deal": 1, "deal": 2}], table_name="t")
    with duckdb.connect("collide.duckdb", read_only=True) as conn:
        schemas = {
            r[0]
            for r in conn.execute("SELECT schema_name FROM information_schema.schemata").fetchall()
        }
    assert "d" not in schemas
    # a collision is in the package's own data: it is set aside, never blocking the next run
    assert pipe.list_pending_packages() == []
    assert len(list(pipe.failed_packages_dir.iterdir())) == 1


def test_dataset_name_is_kept_as_given_and_normalized_in_the_destination() -> None:
    pipe = dlt.pipeline("ds_names", destination="duckdb", dataset_name="My Data")
    assert pipe.dataset_name == "My Data"  # as dlt's
    assert pipe.destination_dataset_name == "my_data"


def test_dataset_name_normalization_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__ENABLE_DATASET_NAME_NORMALIZATION", "false")
    pipe = dlt.pipeline("ds_kept", destination="duckdb", dataset_name="My Data")
    assert pipe.destination_dataset_name == "My Data"


def test_dev_mode_dataset_suffix_follows_the_normalized_name() -> None:
    pipe: Any = dlt.pipeline("dev", destination="duckdb", dataset_name="My Data", dev_mode=True)
    assert (
        pipe.destination_dataset_name.startswith("my_data_")
        and len(pipe.destination_dataset_name) == len("my_data_") + 14
    )


def test_a_configured_naming_change_that_renames_loaded_tables_fails_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loadstone.exceptions import NamingChangeError

    monkeypatch.setenv("SCHEMA__NAMING", "direct")
    dlt.pipeline("renaming", dataset_name="d").run([{"DealFlow": 1}], table_name="Deals")
    monkeypatch.setenv("SCHEMA__NAMING", "snake_case")
    with pytest.raises(NamingChangeError) as info:
        dlt.pipeline("renaming", dataset_name="d").run([{"DealFlow": 2}], table_name="Deals")
    assert "'Deals'" in str(info.value) and "'deal_flow'" in str(info.value)
    with duckdb.connect("renaming.duckdb") as con:
        assert con.execute('SELECT count(*) FROM d."Deals"').fetchone() == (1,)


def test_a_configured_naming_change_that_keeps_loaded_identifiers_is_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pipeline = dlt.pipeline("renaming_ok", dataset_name="d")
    pipeline.run([{"a": 1}], table_name="t")
    monkeypatch.setenv("SCHEMA__NAMING", "sql_ci_v1")
    pipeline = dlt.pipeline("renaming_ok", dataset_name="d")
    pipeline.run([{"a": 2, "New Column": 3}], table_name="t")
    assert pipeline.default_schema.naming_name == "sql_ci_v1"
    assert "new_column" in pipeline.default_schema.tables["t"].columns
    with duckdb.connect("renaming_ok.duckdb") as con:
        assert con.execute("SELECT count(*) FROM d.t").fetchone() == (2,)


@pytest.mark.parametrize("name", ["a.b", "a:b", "p<dl", "x*", "a/b", "con", "COM3", "NUL", "a\tb"])
def test_a_pipeline_name_no_folder_can_have_is_refused_as_dlt_refuses_it(name: str) -> None:
    # dlt 1.31 raises InvalidPipelineName for each; "a b", "a-b", "ä" and "conx" it takes
    from loadstone.pipeline.exceptions import InvalidPipelineName

    with pytest.raises(InvalidPipelineName, match="working folder"):
        dlt.pipeline(name, destination="duckdb")


@pytest.mark.parametrize("name", ["a b", "a-b", "ä", "conx", "x_1"])
def test_a_pipeline_name_any_folder_can_have_is_taken(name: str) -> None:
    assert dlt.pipeline(name, destination="duckdb").pipeline_name == name
