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
    decode_state,
    encode_state,
    load_id_timestamp,
    new_row_id,
    schema_dict,
)
from loadstone.schema import Schema

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


def test_schema_dict_accepts_a_stored_dict_or_a_schema() -> None:
    stored = {"name": "s", "tables": {}}
    assert schema_dict(stored) == stored
    assert schema_dict(Schema("s"))["name"] == "s"


def test_schema_dict_refuses_other_objects_instead_of_probing_them() -> None:
    class Model:
        def to_dict(self) -> dict:
            return {"name": "s", "tables": {}}

    with pytest.raises(TypeError, match="Schema or a stored-schema dict"):
        schema_dict(Model())
