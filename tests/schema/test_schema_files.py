"""Specification of schema files: YAML/JSON, dlt compatibility, import/export folders."""

from __future__ import annotations

from pathlib import Path

import locations
import pytest
import yaml

from loadstone.schema import (
    Column,
    Schema,
    SchemaFileError,
    Table,
    export_schema,
    find_source_schema_file,
    import_schema,
    load_schema_file,
    save_schema_file,
)

FIXTURES = locations.FIXTURES / "schemas"
DLT_FILE = FIXTURES / "github_events.dlt.schema.yaml"
OUR_FILE = FIXTURES / "github_events.loadstone.schema.yaml"


def without_names(tables: dict) -> dict:
    return {
        name: {
            **{k: v for k, v in table.items() if k not in ("name", "columns")},
            "columns": {
                c: {k: v for k, v in col.items() if k != "name"}
                for c, col in table["columns"].items()
            },
        }
        for name, table in tables.items()
    }


@pytest.mark.oracle
def test_schema_exported_by_dlt_loads_with_same_tables_columns_types_and_hints() -> None:
    stored = yaml.safe_load(DLT_FILE.read_text())
    schema = load_schema_file(DLT_FILE)
    assert list(schema.tables) == list(stored["tables"])
    assert without_names(schema.to_dict(bump_version=False)["tables"]) == stored["tables"]
    events = schema.get_table("events")
    assert events.columns["created_at"].data_type == "timestamp"
    assert events.write_disposition == "append" and events.seen_data
    nested = schema.get_table("events__payload__commits")
    assert nested.parent == "events"
    assert nested.columns["_dlt_id"].row_key and nested.columns["_dlt_parent_id"].parent_key
    assert schema.settings.to_dict() == stored["settings"]
    assert schema.naming_name == "snake_case" and schema.json_normalizer == "relational"


@pytest.mark.oracle
def test_dlt_file_is_a_new_version_because_dlt_hashes_differently() -> None:
    stored = yaml.safe_load(DLT_FILE.read_text())
    schema = load_schema_file(DLT_FILE)
    assert schema.version == stored["version"] + 1
    assert schema.previous_hashes[0] == stored["version_hash"]


@pytest.mark.oracle
def test_our_saved_dlt_schema_differs_from_dlts_only_in_version_fields() -> None:
    ours = yaml.safe_load(OUR_FILE.read_text())
    theirs = yaml.safe_load(DLT_FILE.read_text())
    for key in ("version", "version_hash", "previous_hashes"):
        ours.pop(key), theirs.pop(key)
    assert ours == theirs
    assert OUR_FILE.read_text().splitlines()[2:-3] == DLT_FILE.read_text().splitlines()[2:-2]


def test_our_fixture_loads_without_a_new_version() -> None:
    stored = yaml.safe_load(OUR_FILE.read_text())
    schema = load_schema_file(OUR_FILE)
    assert (schema.version, schema.version_hash) == (stored["version"], stored["version_hash"])


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_save_and_load_round_trip(tmp_path: Path, suffix: str) -> None:
    schema = Schema("s")
    schema.update_table(
        Table("t", columns=[Column.from_dict({"data_type": "text", "x-hint": 1}, "a")])
    )
    path = save_schema_file(schema, tmp_path / f"s.schema.{suffix}")
    loaded = load_schema_file(path)
    assert loaded == schema and loaded.version_hash == schema.version_hash


def test_pretty_yaml_has_dlt_layout_without_repeated_names() -> None:
    text = Schema("s").to_pretty_yaml()
    data = yaml.safe_load(text)
    assert list(data)[:4] == ["version", "version_hash", "engine_version", "name"]
    assert data["engine_version"] == 11
    assert "name" not in data["tables"]["_dlt_loads"]
    assert list(data)[-1] == "previous_hashes"


def test_export_writes_name_schema_yaml_and_import_reads_it(tmp_path: Path) -> None:
    schema = Schema("github")
    path = export_schema(schema, tmp_path)
    assert path.name == "github.schema.yaml"
    imported = import_schema("github", tmp_path)
    assert imported is not None and imported == schema


def test_import_of_missing_schema_is_none(tmp_path: Path) -> None:
    assert import_schema("nothing", tmp_path) is None


def test_import_notices_hand_edits(tmp_path: Path) -> None:
    path = export_schema(Schema("github"), tmp_path)
    data = yaml.safe_load(path.read_text())
    data["settings"]["detections"].append("iso_date")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    imported = import_schema("github", tmp_path)
    assert imported is not None and imported.was_modified_on_load
    assert imported.version == data["version"] + 1
    assert "iso_date" in imported.settings.detections


def test_import_rejects_a_file_holding_another_schema(tmp_path: Path) -> None:
    export_schema(Schema("other"), tmp_path).rename(tmp_path / "github.schema.yaml")
    with pytest.raises(SchemaFileError, match="'other'"):
        import_schema("github", tmp_path)


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.schema.yaml"
    path.write_text("name: s\ntables:\n  t: [unclosed\n")
    with pytest.raises(SchemaFileError) as info:
        load_schema_file(path)
    assert str(path) in str(info.value) and info.value.line is not None


def test_invalid_content_names_file_and_table(tmp_path: Path) -> None:
    path = tmp_path / "bad.schema.yaml"
    path.write_text("name: s\ntables:\n  t:\n    columns:\n      a:\n        data_type: varchar\n")
    with pytest.raises(SchemaFileError, match=r"table 't', column 'a'.*varchar"):
        load_schema_file(path)


def test_newer_engine_version_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "new.schema.yaml"
    path.write_text("name: s\nengine_version: 99\ntables: {}\n")
    with pytest.raises(SchemaFileError, match="engine_version"):
        load_schema_file(path)


def test_source_schema_file_beside_module(tmp_path: Path) -> None:
    module = tmp_path / "my_source.py"
    module.write_text("")
    assert find_source_schema_file(module, "github") is None
    (tmp_path / "github_schema.yml").write_text(Schema("github").to_pretty_yaml())
    found = find_source_schema_file(module, "github")
    assert found == tmp_path / "github_schema.yml"
    assert load_schema_file(found).name == "github"
