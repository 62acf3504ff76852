"""The Schema: tables, settings and naming of one source, with its version.

A thin mutable holder around frozen values (:class:`~loadstone.schema.model.Table`,
:class:`~loadstone.schema.settings.SchemaSettings`): the pipeline evolves one schema over a
run, while every part it hands to a Spark worker is an immutable, picklable value. The class
is assembled from its parts: what it holds and its versions (:mod:`loadstone.schema.state`),
lookups (:mod:`loadstone.schema.lookups`), changes (:mod:`loadstone.schema.evolution`);
this module adds the stored form.

Stored form: dlt's engine_version 11 document (``to_dict`` / ``from_dict``), so files move
between dlt and loadstone in both directions.

``normalizers.json.module``: dlt writes ``dlt.common.normalizers.json.relational``; dlt
imports that module by name, so loadstone keeps writing exactly that value (a file we save
loads in dlt) and maps it to its own ``relational`` normalizer plugin when reading
(:attr:`Schema.json_normalizer`). Any other module name is kept as written and names a
loadstone normalizer plugin directly.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Final

import attrs

from loadstone.exceptions import InvalidSchemaError
from loadstone.schema.evolution import SchemaEvolution
from loadstone.schema.lookups import TableLookups
from loadstone.schema.model import Table
from loadstone.schema.settings import SchemaSettings
from loadstone.schema.state import DLT_JSON_NORMALIZER_MODULE, default_normalizers
from loadstone.schema.stored import TStoredSchema
from loadstone.schema.system_tables import (
    LOADS_TABLE_NAME,
    STATE_TABLE_NAME,
    VERSION_TABLE_NAME,
    loads_table,
    state_table,
    version_table,
)
from loadstone.schema.versioning import ENGINE_VERSION, MAX_PREVIOUS_HASHES
from loadstone.schema.versioning import bump_version as _next_version

__all__ = [
    "DLT_JSON_NORMALIZER_MODULE",
    "LOADS_TABLE_NAME",
    "STATE_TABLE_NAME",
    "VERSION_TABLE_NAME",
    "Schema",
    "loads_table",
    "state_table",
    "version_table",
]

#: table hints that record processing, not data (``clone(remove_processing_hints=True)``)
PROCESSING_HINTS: Final = ("x-normalizer", "x-loader", "x-extractor")

#: the keys of the stored document the schema reads itself; others are kept as written
_DOCUMENT_KEYS: Final = frozenset(
    {
        "version",
        "version_hash",
        "engine_version",
        "name",
        "tables",
        "settings",
        "normalizers",
        "previous_hashes",
    }
)


class Schema(TableLookups, SchemaEvolution):
    """A named schema: ordered tables, settings, naming and version.

    ``Schema(name)`` is a new schema as dlt makes one: the ``_dlt_version`` and ``_dlt_loads``
    tables, ``iso_timestamp`` detection and the relational normalizer's default hints.
    dlt's public members are here with dlt's signatures; tables, columns and settings are
    frozen values that read like dlt's dicts (``schema.tables["users"]["columns"]``).
    """

    # ------------------------------------------------------------------ stored form
    def to_dict(
        self,
        remove_defaults: bool = False,
        remove_processing_hints: bool = False,
        bump_version: bool = True,
        *,
        remove_names: bool = False,
    ) -> TStoredSchema:
        """The stored document (dlt engine_version 11 layout and key order).

        ``bump_version`` first records a save (so the document carries its final version and
        hash); ``remove_defaults`` (or ``remove_names``) drops the redundant ``name`` keys
        inside tables and columns, as dlt's exported YAML does; ``remove_processing_hints``
        drops the ``x-normalizer`` / ``x-loader`` / ``x-extractor`` table hints.
        """
        if bump_version:
            self.bump_version()
        content = self._content_dict(with_names=not (remove_names or remove_defaults))
        tables = content.get("tables", {})
        if remove_processing_hints:
            for table in tables.values():
                for hint in PROCESSING_HINTS:
                    table.pop(hint, None)  # type: ignore[misc]  # x-* keys are not TypedDict keys
        out: TStoredSchema = {
            "version": self._version,
            "version_hash": self.version_hash,
            "engine_version": self.engine_version,
            "name": self._name,
            "tables": tables,
            "settings": content.get("settings", {}),
            "normalizers": content.get("normalizers", {}),
        }
        for key, value in content.items():
            if key not in _DOCUMENT_KEYS:
                out[key] = value  # type: ignore[literal-required]  # x-* and future keys
        out["previous_hashes"] = list(self.previous_hashes)
        return out

    def to_pretty_yaml(
        self,
        remove_defaults: bool = True,
        remove_processing_hints: bool = False,
        *,
        bump_version: bool = True,
        remove_names: bool = True,
    ) -> str:
        """YAML as dlt exports it (key order kept, no ``name`` repeats)."""
        import yaml  # only exports need it (importing it cost every run ~4 ms)

        text: str = yaml.safe_dump(
            self.to_dict(
                remove_processing_hints=remove_processing_hints,
                bump_version=bump_version,
                remove_names=remove_names and remove_defaults,
            ),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=120,
        )
        return text

    def to_pretty_json(
        self,
        remove_defaults: bool = True,
        remove_processing_hints: bool = False,
        *,
        bump_version: bool = True,
        remove_names: bool = False,
    ) -> str:
        return json.dumps(
            self.to_dict(
                remove_defaults,
                remove_processing_hints,
                bump_version=bump_version,
                remove_names=remove_names,
            ),
            indent=2,
            ensure_ascii=False,
            default=str,
        )

    def to_mermaid(
        self,
        remove_processing_hints: bool = False,
        hide_columns: bool = False,
        hide_descriptions: bool = False,
        include_dlt_tables: bool = True,
    ) -> str:
        """The tables as a Mermaid ``erDiagram``, as dlt's ``to_mermaid`` draws them."""
        from loadstone.schema import diagram

        return diagram.to_mermaid(
            self.to_dict(bump_version=False),
            hide_columns=hide_columns,
            hide_descriptions=hide_descriptions,
            include_dlt_tables=include_dlt_tables,
        )

    def to_dbml(
        self, remove_processing_hints: bool = False, include_dlt_tables: bool = True
    ) -> str:
        """The tables as DBML (dbdiagram.io), as dlt's ``to_dbml`` writes them."""
        from loadstone.schema import diagram

        return diagram.to_dbml(
            self.to_dict(bump_version=False), include_dlt_tables=include_dlt_tables
        )

    def to_dot(self, remove_processing_hints: bool = False, include_dlt_tables: bool = True) -> str:
        """The tables as a Graphviz DOT graph, as dlt's ``to_dot``."""
        from loadstone.schema import diagram

        return diagram.to_dot(
            self.to_dict(bump_version=False), include_dlt_tables=include_dlt_tables
        )

    @classmethod
    def from_dict(
        cls,
        stored: TStoredSchema | Mapping[str, object],
        remove_processing_hints: bool = False,
        bump_version: bool = True,
        validate_schema: bool = True,
    ) -> Schema:
        """Read a stored document (ours or dlt's, engine_version 11; tables and columns with or
        without ``name`` keys). dlt's signature: ``remove_processing_hints`` drops the
        ``x-normalizer`` / ``x-loader`` / ``x-extractor`` table hints; the document is always
        checked (``validate_schema`` is accepted for dlt's signature).

        When the recorded ``version_hash`` does not match the content (a hand edit, or a hash
        computed by dlt) and ``bump_version`` is set, the document is accepted as a new
        version: version + 1, the recorded hash first in ``previous_hashes``, and
        :attr:`was_modified_on_load` set.
        """
        if not isinstance(stored, Mapping):
            raise InvalidSchemaError(f"a stored schema is a mapping, got {type(stored).__name__}")
        name = stored.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidSchemaError("stored schema has no 'name'")
        engine_version = stored.get("engine_version", ENGINE_VERSION)
        if not isinstance(engine_version, int) or engine_version > ENGINE_VERSION:
            raise InvalidSchemaError(
                f"schema {name!r} has engine_version {engine_version!r}; loadstone reads up to "
                f"{ENGINE_VERSION}"
            )
        tables_data = stored.get("tables") or {}
        if not isinstance(tables_data, Mapping):
            raise InvalidSchemaError(f"schema {name!r}: 'tables' is not a mapping")
        tables = [
            Table.from_dict(data or {}, table_name) for table_name, data in tables_data.items()
        ]
        normalizers = stored.get("normalizers")
        settings = stored.get("settings")
        schema = cls(
            name,
            normalizers=normalizers  # type: ignore[arg-type]  # the document's own section
            if isinstance(normalizers, Mapping)
            else default_normalizers("snake_case"),
            settings=SchemaSettings.from_dict(settings if isinstance(settings, Mapping) else None),
            tables=tables,
            add_system_tables=False,
        )
        schema.engine_version = ENGINE_VERSION
        schema._extra = {k: copy.deepcopy(v) for k, v in stored.items() if k not in _DOCUMENT_KEYS}
        schema._adopt_version(stored, bump_version)
        if remove_processing_hints:
            schema._remove_processing_hints()
        return schema

    @classmethod
    def from_stored_schema(cls, stored_schema: TStoredSchema | Mapping[str, object]) -> Schema:
        """A stored document as it is (dlt's): its version kept, nothing bumped."""
        return cls.from_dict(stored_schema, bump_version=False)

    def _remove_processing_hints(self) -> None:
        for name, table in self._tables.items():
            extra = {k: v for k, v in table.extra.items() if k not in PROCESSING_HINTS}
            if extra != table.extra:
                self._tables[name] = attrs.evolve(table, extra=extra)

    def _adopt_version(self, stored: Mapping[str, object], bump_version: bool) -> None:
        """Version and hashes of a stored document; a changed content is a new version."""
        self._version = int(str(stored.get("version") or 1))
        hashes = stored.get("previous_hashes")
        self.previous_hashes = (
            [str(h) for h in hashes or []][:MAX_PREVIOUS_HASHES] if isinstance(hashes, list) else []
        )
        recorded = stored.get("version_hash")
        recorded = None if recorded is None else str(recorded)
        self.loaded_version_hash = recorded
        current = self.version_hash
        if recorded is None:
            self.stored_version_hash = current
        elif recorded == current or not bump_version:
            self.stored_version_hash = current
        else:
            self._version, self.previous_hashes = _next_version(
                self._version, recorded, current, self.previous_hashes
            )
            self.stored_version_hash = current
            self.was_modified_on_load = True

    def clone(
        self,
        with_name: str | None = None,
        remove_processing_hints: bool = False,
        update_normalizers: bool = False,
    ) -> Schema:
        """A deep copy (optionally renamed, without processing hints); version state is kept.
        ``update_normalizers`` is accepted for dlt's signature (normalizers are read from
        the schema itself, so there is nothing to refresh)."""
        copy_ = Schema.from_dict(
            self.to_dict(remove_processing_hints=remove_processing_hints, bump_version=False),
            bump_version=False,
        )
        copy_._version = self._version
        copy_.previous_hashes = list(self.previous_hashes)
        copy_.stored_version_hash = self.stored_version_hash
        if with_name is not None:
            copy_._name = with_name
        return copy_

    # ------------------------------------------------------------------ misc
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            return NotImplemented
        return self._content_dict() == other._content_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by content, not hashable

    def __repr__(self) -> str:
        """dlt's wording (``<dlt.Schema(name=..., version=..., tables=[...], version_hash=...)>``)
        with loadstone's name."""
        return (
            f"<loadstone.Schema(name={self._name!r}, version={self.version}, "
            f"tables={list(self._tables)!r}, version_hash={self.version_hash!r})>"
        )

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state.pop("_system_names", None)
        state.pop("_naming", None)
        return state
