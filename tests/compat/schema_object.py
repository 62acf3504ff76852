"""dlt's public ``Schema`` members, exercised the way users read a pipeline's schema.

Like the other compat scenarios this module imports neither library: :func:`schema_outcome`
gets ``dlt`` (``import dlt`` in :mod:`tests.compat.record_schema`, ``import loadstone as
dlt`` in ``tests/schema/test_schema_object_dlt.py``), runs one small pipeline with nested
data, a primary key and a merge disposition, and records what every member returns. Each
probe is recorded on its own (a failure is recorded as the error's shape), so one missing
member does not hide the others. Hash values are the same algorithm in both libraries but
are recorded as relations (equal to, changed), which is what user code relies on.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.compat.harness import plain


def as_plain(value: Any) -> Any:
    """JSON for a schema value: dict-like values (dlt's dicts, loadstone's stored-form
    views) become dicts with their key order kept as ``__keys__`` where it matters."""
    if hasattr(value, "keys") and hasattr(value, "__getitem__") and not isinstance(value, str):
        return {str(k): as_plain(value[k]) for k in value.keys()}
    if isinstance(value, (list, tuple)):
        return [as_plain(v) for v in value]
    return plain(value)


def keys(value: Any) -> list[str]:
    return [str(k) for k in value.keys()]


def _error(ex: BaseException) -> dict[str, Any]:
    return {
        "error": True,
        "key_error": isinstance(ex, KeyError),
        "value_error": isinstance(ex, ValueError),
    }


def _probe(out: dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    try:
        out[name] = fn()
    except Exception as ex:  # a missing member is an outcome, not a crash of the recorder
        out[name] = _error(ex)


def _run(dlt: Any, workdir: Path) -> Any:
    @dlt.resource(
        primary_key="id",
        write_disposition="merge",
        columns={"note": {"nullable": True, "description": "never filled"}},
    )
    def users() -> Any:
        yield [
            {"id": 1, "name": "a", "tags": [{"t": "x"}], "addr": {"city": "c"}},
            {"id": 2, "name": None, "tags": []},
        ]

    @dlt.resource
    def empties() -> Any:
        yield [{"nothing": None}]

    pipeline = dlt.pipeline(
        "schema_object",
        destination=dlt.destinations.duckdb(str(workdir / "schema_object.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(workdir / "pipelines"),
    )
    pipeline.run([users(), empties()])
    return pipeline.default_schema


def _lookups(out: dict[str, Any], schema: Any) -> None:
    _probe(out, "name", lambda: schema.name)
    _probe(out, "tables_keys", lambda: keys(schema.tables))
    _probe(out, "tables_is_dict", lambda: isinstance(schema.tables, dict))
    _probe(out, "table_users", lambda: as_plain(schema.tables["users"]))
    _probe(out, "table_users_keys", lambda: keys(schema.tables["users"]))
    _probe(out, "get_table_users", lambda: as_plain(schema.get_table("users")))
    _probe(out, "get_table_nested", lambda: as_plain(schema.get_table("users__tags")))
    _probe(out, "get_table_missing", lambda: schema.get_table("nope"))
    _probe(out, "get_table_columns", lambda: as_plain(schema.get_table_columns("users")))
    _probe(
        out,
        "get_table_columns_incomplete",
        lambda: as_plain(schema.get_table_columns("users", include_incomplete=True)),
    )
    _probe(out, "get_table_columns_missing", lambda: schema.get_table_columns("nope"))
    _probe(out, "data_tables", lambda: as_plain(schema.data_tables()))
    _probe(
        out, "data_tables_incomplete", lambda: as_plain(schema.data_tables(include_incomplete=True))
    )
    _probe(out, "data_table_names", lambda: schema.data_table_names())
    _probe(out, "data_table_names_seen", lambda: schema.data_table_names(seen_data_only=True))
    _probe(
        out, "data_table_names_incomplete", lambda: schema.data_table_names(include_incomplete=True)
    )
    _probe(out, "dlt_tables", lambda: [t["name"] for t in schema.dlt_tables()])
    _probe(out, "dlt_table_names", lambda: schema.dlt_table_names())
    _probe(out, "version_table_name", lambda: schema.version_table_name)
    _probe(out, "loads_table_name", lambda: schema.loads_table_name)
    _probe(out, "state_table_name", lambda: schema.state_table_name)
    _probe(
        out, "is_new_table", lambda: [schema.is_new_table(n) for n in ("users", "nope", "empties")]
    )
    _probe(out, "references", lambda: as_plain(schema.references))
    _probe(
        out,
        "filter_row_with_hint",
        lambda: [
            as_plain(
                schema.filter_row_with_hint("users", hint, {"id": 1, "name": "x", "_dlt_id": "i"})
            )
            for hint in ("primary_key", "not_null", "unique", "row_key")
        ],
    )
    _probe(
        out,
        "get_new_table_columns",
        lambda: as_plain(
            schema.get_new_table_columns(
                "users", {"id": {"name": "id", "data_type": "bigint"}}, True
            )
        ),
    )
    _probe(
        out,
        "get_new_table_columns_incomplete",
        lambda: as_plain(
            schema.get_new_table_columns(
                "users", {"ID": {"name": "ID"}}, False, include_incomplete=True
            )
        ),
    )


def _naming(out: dict[str, Any], schema: Any) -> None:
    naming = schema.naming
    _probe(out, "naming_name", lambda: naming.name())
    _probe(out, "naming_max_length", lambda: naming.max_length)
    _probe(out, "naming_is_case_sensitive", lambda: naming.is_case_sensitive)
    _probe(out, "naming_path_separator", lambda: naming.PATH_SEPARATOR)
    _probe(out, "naming_identifier", lambda: naming.normalize_identifier("FooBar Baz"))
    _probe(out, "naming_table", lambda: naming.normalize_table_identifier("Foo Bar"))
    _probe(out, "naming_path", lambda: naming.normalize_path("Foo__BarBaz"))
    _probe(out, "naming_tables_path", lambda: naming.normalize_tables_path("Foo__BarBaz"))
    _probe(out, "naming_make_path", lambda: naming.make_path("a", "b", "c"))
    _probe(out, "naming_break_path", lambda: list(naming.break_path("a__b__c")))


def _versions(out: dict[str, Any], schema: Any) -> None:
    _probe(out, "engine_version", lambda: schema.ENGINE_VERSION)
    _probe(out, "version", lambda: schema.version)
    _probe(out, "stored_version", lambda: schema.stored_version)
    _probe(out, "hash_is_str", lambda: isinstance(schema.version_hash, str))
    _probe(out, "stored_hash_equal", lambda: schema.stored_version_hash == schema.version_hash)
    _probe(out, "previous_hashes", lambda: len(schema.previous_hashes))
    _probe(out, "is_modified", lambda: schema.is_modified)
    _probe(out, "is_new", lambda: schema.is_new)
    _probe(
        out,
        "repr",
        lambda: repr(schema).replace(schema.version_hash, "<hash>").replace("loadstone.", "dlt."),
    )


def _documents(out: dict[str, Any], schema: Any) -> None:
    _probe(out, "to_dict_keys", lambda: keys(schema.to_dict()))
    _probe(out, "to_dict_table_keys", lambda: keys(schema.to_dict()["tables"]))
    _probe(out, "to_dict_users", lambda: as_plain(schema.to_dict()["tables"]["users"]))
    _probe(
        out,
        "to_dict_remove_defaults",
        lambda: as_plain(schema.to_dict(remove_defaults=True)["tables"]["users__tags"]),
    )
    _probe(
        out,
        "to_dict_remove_processing_hints",
        lambda: keys(schema.to_dict(remove_processing_hints=True)["tables"]["users"]),
    )
    _probe(out, "to_dict_settings", lambda: as_plain(schema.to_dict()["settings"]))
    _probe(out, "to_dict_normalizers", lambda: as_plain(schema.to_dict()["normalizers"]))
    _probe(
        out,
        "to_pretty_yaml",
        lambda: as_plain(yaml.safe_load(schema.to_pretty_yaml())["tables"]["users"]),
    )
    _probe(
        out,
        "to_pretty_yaml_keys",
        lambda: keys(yaml.safe_load(schema.to_pretty_yaml())),
    )
    _probe(
        out,
        "to_pretty_json",
        lambda: as_plain(json.loads(schema.to_pretty_json())["tables"]["users__tags"]),
    )
    _probe(
        out,
        "from_dict_round_trip",
        lambda: type(schema).from_dict(schema.to_dict()).version_hash == schema.version_hash,
    )
    _probe(out, "settings", lambda: as_plain(schema.settings))
    _probe(out, "settings_keys", lambda: keys(schema.settings))


def _clones(out: dict[str, Any], schema: Any) -> None:
    def clone() -> Any:
        twin = schema.clone()
        return {
            "same_object": twin is schema,
            "name": twin.name,
            "same_hash": twin.version_hash == schema.version_hash,
            "same_stored_hash": twin.stored_version_hash == schema.stored_version_hash,
            "version": twin.version,
            "tables": keys(twin.tables),
        }

    def renamed() -> Any:
        twin = schema.clone(with_name="other")
        return {"name": twin.name, "same_hash": twin.version_hash == schema.version_hash}

    def without_hints() -> Any:
        twin = schema.clone(remove_processing_hints=True)
        return keys(twin.tables["users"])

    _probe(out, "clone", clone)
    _probe(out, "clone_renamed", renamed)
    _probe(out, "clone_without_processing_hints", without_hints)


def _changes(out: dict[str, Any], schema: Any) -> None:
    """Changes go to clones, so each probe starts from the pipeline's schema."""

    def merge_hints() -> Any:
        twin = schema.clone()
        twin.merge_hints({"partition": ["re:^name$"], "not_null": ["note"]})
        added = as_plain(twin.settings["default_hints"])
        twin.merge_hints({"partition": ["created"]}, replace=True)
        return {"added": added, "replaced": as_plain(twin.settings["default_hints"])}

    def update_table() -> Any:
        twin = schema.clone()
        before = twin.version_hash
        returned = twin.update_table(
            {"name": "NewTable", "columns": {"ColA": {"name": "ColA", "data_type": "text"}}}
        )
        return {
            "returned": as_plain(returned),
            "tables": keys(twin.tables),
            "hash_changed": twin.version_hash != before,
            "is_modified": twin.is_modified,
        }

    def update_missing_parent() -> Any:
        return schema.clone().update_table({"name": "orphan", "parent": "nope", "columns": {}})

    def contract() -> Any:
        twin = schema.clone()
        twin.set_schema_contract("freeze")
        return as_plain(twin.settings.get("schema_contract"))

    def preferred() -> Any:
        twin = schema.clone()
        twin.update_preferred_types({"re:_at$": "timestamp"})
        twin.add_type_detection("iso_date")
        twin.remove_type_detection("iso_timestamp")
        return {
            "settings": as_plain(twin.settings),
            "created_at": twin.get_preferred_type("created_at"),
            "other": twin.get_preferred_type("other"),
        }

    def drop() -> Any:
        twin = schema.clone()
        dropped = twin.drop_tables(["users__tags", "nope"])
        return {"dropped": [t["name"] for t in dropped], "tables": keys(twin.tables)}

    def bump() -> Any:
        twin = schema.clone()
        twin.update_table(
            {"name": "users", "columns": {"extra": {"name": "extra", "data_type": "bigint"}}}
        )
        version = twin.version
        twin.to_dict()
        return {"before": version, "after": twin.version, "modified": twin.is_modified}

    for name, fn in {
        "merge_hints": merge_hints,
        "update_table": update_table,
        "update_table_missing_parent": update_missing_parent,
        "set_schema_contract": contract,
        "preferred_types": preferred,
        "drop_tables": drop,
        "bump_on_to_dict": bump,
    }.items():
        _probe(out, name, fn)


def _contracts(out: dict[str, Any], schema: Any) -> None:
    """Contract settings as dlt resolves them, and the members that replace content."""
    expand = type(schema).expand_schema_contract_settings

    def resolved_with_schema_contract() -> Any:
        twin = schema.clone()
        twin.set_schema_contract({"columns": "freeze"})
        return twin.resolve_contract_settings_for_table("users__tags")

    def resolved_from_root() -> Any:
        twin = schema.clone()
        twin.update_table({"name": "users", "columns": {}, "schema_contract": "discard_row"})
        return [twin.resolve_contract_settings_for_table(n) for n in ("users__tags", "users")]

    def replaced(link: bool) -> Any:
        other = type(schema)("other")
        other.replace_schema_content(schema, link_to_replaced_schema=link)
        return {
            "name": other.name,
            "tables": keys(other.tables),
            "version": other.version,
            "stored_version": other.stored_version,
            "is_modified": other.is_modified,
            "previous_hashes": len(other.previous_hashes),
        }

    probes: dict[str, Callable[[], Any]] = {
        "expand_contract": lambda: [
            expand("freeze"),
            expand({"columns": "freeze"}),
            expand(None),
            expand(None, default={"tables": "freeze"}),
        ],
        "resolve_contract": lambda: [
            schema.resolve_contract_settings_for_table(n) for n in ("users", "nope")
        ],
        "resolve_contract_schema_wide": resolved_with_schema_contract,
        "resolve_contract_from_root": resolved_from_root,
        "resolve_contract_new_table": lambda: schema.resolve_contract_settings_for_table(
            "nope", {"name": "nope", "schema_contract": "freeze"}
        ),
        "will_update_normalizers": lambda: [
            schema.will_update_normalizers(),
            schema.update_normalizers(),
        ],
        "replace_schema_content": lambda: replaced(False),
        "replace_schema_content_linked": lambda: replaced(True),
    }
    for name, fn in probes.items():
        _probe(out, name, fn)


def _fresh(out: dict[str, Any], dlt: Any) -> None:
    def fresh() -> Any:
        schema = dlt.Schema("fresh")
        return {
            "tables": keys(schema.tables),
            "data_table_names": schema.data_table_names(),
            "settings": as_plain(schema.settings),
            "version": schema.version,
            "stored_version": schema.stored_version,
            "is_new": schema.is_new,
            "is_modified": schema.is_modified,
            "references": as_plain(schema.references),
        }

    _probe(out, "fresh_schema", fresh)


def _names(tables: Any) -> list[str]:
    return [t["name"] for t in tables]


def helper_outcome(utils: Any, schema: Any) -> dict[str, Any]:
    """dlt's column and table hint helpers (``dlt.common.schema.utils``; loadstone's
    ``loadstone.schema.utils``) on ``schema``'s tables."""
    tables = schema.tables
    users, tags = tables["users"], tables["users__tags"]
    out: dict[str, Any] = {}
    probes: dict[str, Callable[[], Any]] = {
        "columns_with_primary_key": lambda: utils.get_columns_names_with_prop(users, "primary_key"),
        "columns_not_nullable": lambda: utils.get_columns_names_with_prop(users, "nullable"),
        "columns_with_description_incomplete": lambda: utils.get_columns_names_with_prop(
            users, "description", include_incomplete=True
        ),
        "has_row_key": lambda: utils.has_column_with_prop(users, "row_key"),
        "has_merge_key": lambda: utils.has_column_with_prop(users, "merge_key"),
        "first_parent_key": lambda: utils.get_first_column_name_with_prop(tags, "parent_key"),
        "first_merge_key": lambda: utils.get_first_column_name_with_prop(users, "merge_key"),
        "write_disposition_nested": lambda: utils.get_write_disposition(tables, "users__tags"),
        "merge_strategy_nested": lambda: utils.get_merge_strategy(tables, "users__tags"),
        "table_format": lambda: utils.get_table_format(tables, "users__tags"),
        "file_format": lambda: utils.get_file_format(tables, "_dlt_pipeline_state"),
        "is_nested": lambda: [utils.is_nested_table(tags), utils.is_nested_table(users)],
        "root_table": lambda: utils.get_root_table(tables, "users__tags")["name"],
        "nested_tables": lambda: _names(utils.get_nested_tables(tables, "users")),
        "nested_tables_without_self": lambda: _names(
            utils.get_nested_tables(tables, "users", include_self=False)
        ),
        "seen_data": lambda: [
            utils.has_table_seen_data(tables[n]) for n in ("users", "_dlt_loads")
        ],
        "complete_column": lambda: [
            utils.is_complete_column(users["columns"][n]) for n in ("id", "name")
        ],
        "nullable_column": lambda: [
            utils.is_nullable_column(users["columns"][n]) for n in ("id", "name")
        ],
        "validity_columns": lambda: utils.get_validity_column_names(users),
        "inherited_hint": lambda: utils.get_inherited_table_hint(
            tables, "users__tags", "write_disposition"
        ),
        "inherited_hint_none": lambda: utils.get_inherited_table_hint(
            tables, "users__tags", "table_format", allow_none=True
        ),
        "inherited_hint_missing": lambda: utils.get_inherited_table_hint(
            tables, "users__tags", "table_format"
        ),
        "data_and_dlt_tables": lambda: [
            _names(part) for part in utils.get_data_and_dlt_tables(tables)
        ],
        "tables_by_resource": lambda: {
            k: _names(v) for k, v in utils.group_tables_by_resource(tables).items()
        },
    }
    for name, fn in probes.items():
        _probe(out, name, fn)
    return out


def _probes(schema: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # replacing content reads previous_hashes: before the probes that change clones (a dlt
    # clone shares that list with its original)
    for part in (_lookups, _naming, _versions, _contracts, _documents, _clones, _changes):
        part(out, schema)
    return out


def schema_outcome(
    dlt: Any, workdir: Path, document: dict[str, Any] | None = None, utils: Any = None
) -> dict[str, Any]:
    """What each of dlt's public ``Schema`` members gives, on two schemas: the pipeline's
    ``default_schema`` after a run, and ``Schema.from_dict(document)`` where ``document`` is
    the stored form of dlt's pipeline schema (the recorder takes it from its own run; the
    test passes the recorded one, so both libraries answer on the same content). ``utils``:
    the module of column and table hint helpers, asked on the second schema."""
    schema = _run(dlt, workdir)
    if document is None:
        document = json.loads(json.dumps(schema.to_dict(bump_version=False), default=str))
    loaded = dlt.Schema.from_dict(copy.deepcopy(document), bump_version=False)
    stored = type(loaded).from_stored_schema(copy.deepcopy(document))
    out: dict[str, Any] = {
        "from_stored_schema": [stored.version, stored.stored_version, stored.is_modified],
        "document": document,
        "pipeline": _probes(schema),
        "from_document": _probes(loaded),
        "helpers": {} if utils is None else helper_outcome(utils, loaded),
    }
    _fresh(out, dlt)
    return json.loads(json.dumps(out, default=str))
