"""A loader names its system tables with the convention it is given and resolves none itself.

The caller (the pipeline) resolves the convention once and hands it over: on the client
(``Destination.client(naming=...)``) and on a package (``LoadRequest.naming``). Without one,
``Destination.client`` resolves it the one way there is: the destination's override, else the
schema's own convention.
"""

from __future__ import annotations

from pathlib import Path

from loadstone.destinations.contract import LoadRequest
from loadstone.plugin_manager import naming_convention
from loadstone.schema import Schema
from tests.destinations.duckdb.test_duckdb_support import (
    duckdb_destination,
    parquet,
    request,
    schema,
    table,
)
from tests.destinations.schema_support import stored_schema

USERS = schema(users=table({"id": {"data_type": "bigint"}}))


def _users(tmp: Path) -> list[Path]:
    return [parquet(tmp, [{"id": 1, "_dlt_id": "a", "_dlt_load_id": "1"}])]


def test_the_convention_a_client_is_opened_with_names_its_system_tables(tmp_path: Path) -> None:
    given = naming_convention("s3_tables")
    with duckdb_destination(tmp_path / "db.duckdb").client(
        stored_schema(USERS), "mydata", naming=given
    ) as client:
        client.update_stored_schema()
        assert {"dlt_loads", "dlt_version"} <= set(client.table_names())
        assert "_dlt_loads" not in client.table_names()


def test_a_package_brings_the_convention_its_caller_resolved(tmp_path: Path) -> None:
    with duckdb_destination(tmp_path / "db.duckdb").client(None, "mydata") as client:
        plain = request(USERS, {"users": _users(tmp_path / "u")})
        given = LoadRequest(
            plain.load_id, plain.schema, plain.tables, naming=naming_convention("s3_tables")
        )
        client.load_package(given)
        assert "dlt_loads" in client.table_names()


def test_without_one_the_destination_resolves_its_override_before_the_schemas() -> None:
    schema_of_snake_case = Schema("shop")
    override = duckdb_destination().configured(naming_convention="s3_tables")
    assert override.naming_for(schema_of_snake_case).name() == "s3_tables"  # type: ignore[union-attr]
    plain = duckdb_destination()
    assert plain.naming_for(schema_of_snake_case).name() == "snake_case"  # type: ignore[union-attr]
    assert plain.naming_for(None) is None
