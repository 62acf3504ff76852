"""The destination contract's value rules: state encoding, load-id time, row ids, schemas."""

from __future__ import annotations

import base64
import datetime as dt
import json
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    SchemaVersionRow,
    as_schema,
    decode_state,
    encode_state,
    load_id_timestamp,
    new_row_id,
)
from loadstone.schema import Schema
from tests.destinations.schema_support import stored_schema

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_state_round_trips_through_its_stored_form(state: dict) -> None:
    assert decode_state(encode_state(state)) == state


def test_state_is_stored_compressed_like_dlt() -> None:
    encoded = encode_state({"a": 1})
    assert base64.b64decode(encoded)[:2] == b"\x78\xda"  # zlib at level 9, as dlt writes
    assert json.loads(zlib.decompress(base64.b64decode(encoded))) == {"a": 1}


def test_plain_json_state_is_also_read() -> None:
    assert decode_state('{"a": [1, 2]}') == {"a": [1, 2]}


def test_load_id_time_is_the_unix_time_it_encodes_in_utc() -> None:
    at = load_id_timestamp("1695208720.2137215")
    assert at.tzinfo is not None
    assert at == dt.datetime.fromtimestamp(1695208720.2137215, tz=dt.timezone.utc)


def test_row_ids_are_14_base64_characters() -> None:
    ids = {new_row_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(len(i) == 14 and "=" not in i for i in ids)


def test_system_tables_have_the_columns_of_the_spec_in_order() -> None:
    assert [c.name for c in SYSTEM_TABLES["_dlt_loads"]] == [
        "load_id",
        "schema_name",
        "status",
        "inserted_at",
        "schema_version_hash",
    ]
    assert [c.name for c in SYSTEM_TABLES["_dlt_version"]] == [
        "version",
        "engine_version",
        "inserted_at",
        "schema_name",
        "version_hash",
        "schema",
    ]
    assert [c.name for c in SYSTEM_TABLES["_dlt_pipeline_state"]] == [
        "version",
        "engine_version",
        "pipeline_name",
        "state",
        "created_at",
        "version_hash",
        "_dlt_load_id",
        "_dlt_id",
    ]


def test_a_schemas_version_row_is_its_stored_document_with_final_version_and_hash() -> None:
    schema = Schema("s")
    row = SchemaVersionRow.of(schema)
    assert (row.schema_name, row.version, row.engine_version) == ("s", 1, 11)
    assert row.version_hash == schema.version_hash
    assert json.loads(row.schema_json) == json.loads(json.dumps(schema.to_dict(), default=str))


def test_a_stored_document_read_into_a_schema_keeps_its_name_and_version() -> None:
    schema = stored_schema({"name": "s", "version": 3, "version_hash": "h3", "tables": {}})
    row = SchemaVersionRow.of(schema)
    assert (row.schema_name, row.version, row.version_hash) == ("s", 3, schema.version_hash)


def test_a_load_without_a_schema_records_no_name_and_a_content_hash() -> None:
    row = SchemaVersionRow.of(None)
    assert (row.schema_name, row.version, row.engine_version) == ("", 1, 11)
    assert json.loads(row.schema_json) == {"name": "", "tables": {}}
    assert row == SchemaVersionRow.of(None)


def test_schemas_are_refused_in_any_other_form_instead_of_probed() -> None:
    class Model:
        def to_dict(self) -> dict:
            return {"name": "s", "tables": {}}

    with pytest.raises(TypeError, match="expected a loadstone Schema"):
        SchemaVersionRow.of(Model())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a loadstone Schema"):
        as_schema({"name": "s", "tables": {}})  # type: ignore[call-overload]
