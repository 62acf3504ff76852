"""The Schema: tables, settings and naming of one source, with its version.

A thin mutable holder around frozen values (:class:`~loadstone.schema.model.Table`,
:class:`~loadstone.schema.settings.SchemaSettings`): the pipeline evolves one schema over a
run, while every part it hands to a Spark worker is an immutable, picklable value.

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
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast, overload

import attrs
import yaml

from loadstone.exceptions import InvalidSchemaError, LoadstoneError, TableNotFoundError
from loadstone.schema.data_types import py_type_to_data_type, variant_column_name
from loadstone.schema.detections import detect_type
from loadstone.schema.model import Column, Table
from loadstone.schema.settings import SchemaSettings, hints_for_column, preferred_type_for
from loadstone.schema.stored import TColumnSchema, TNormalizers, TStoredSchema, TTableSchema
from loadstone.schema.versioning import (
    ENGINE_VERSION,
    MAX_PREVIOUS_HASHES,
    content_hash,
)
from loadstone.schema.versioning import bump_version as _next_version

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

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

DLT_JSON_NORMALIZER_MODULE: Final = "dlt.common.normalizers.json.relational"
#: stored module names that mean loadstone's relational normalizer plugin.
_RELATIONAL_ALIASES: Final = frozenset({DLT_JSON_NORMALIZER_MODULE, "relational"})

#: table hints that record processing, not data (``clone(remove_processing_hints=True)``)
PROCESSING_HINTS: Final = ("x-normalizer", "x-loader", "x-extractor")

VERSION_TABLE_NAME: Final = "_dlt_version"
LOADS_TABLE_NAME: Final = "_dlt_loads"
STATE_TABLE_NAME: Final = "_dlt_pipeline_state"


def version_table(name: str = VERSION_TABLE_NAME) -> Table:
    """``_dlt_version``: one row per schema version a destination migrated to."""
    return Table.from_dict(
        {
            "columns": {
                "version": _sys(
                    "bigint", "Numeric version of the schema, incremented on each schema change"
                ),
                "engine_version": _sys(
                    "bigint", "Version of the dlt schema engine that created this schema"
                ),
                "inserted_at": _sys("timestamp", "Timestamp when this schema version was stored"),
                "schema_name": _sys("text", "Name of the schema"),
                "version_hash": _sys(
                    "text", "Unique hash of the schema content, used to detect changes"
                ),
                "schema": _sys("text", "JSON representation of the complete schema definition"),
            },
            "write_disposition": "skip",
            "resource": VERSION_TABLE_NAME,
            "description": "Created by DLT. Tracks schema updates",
        },
        name,
    )


def loads_table(name: str = LOADS_TABLE_NAME) -> Table:
    """``_dlt_loads``: one row per completed load package."""
    return Table.from_dict(
        {
            "columns": {
                "load_id": {
                    **_sys("text", "Unique identifier of the load operation"),
                    "precision": 64,
                },
                "schema_name": _sys("text", "Name of the schema associated with this load", True),
                "status": _sys("bigint", "Status of the load operation (0 = success)"),
                "inserted_at": _sys("timestamp", "Timestamp when the load was completed"),
                "schema_version_hash": _sys(
                    "text", "Hash of the schema version used during this load", True
                ),
            },
            "write_disposition": "skip",
            "resource": LOADS_TABLE_NAME,
            "description": "Created by DLT. Tracks completed loads",
        },
        name,
    )


def state_table(name: str = STATE_TABLE_NAME) -> Table:
    """``_dlt_pipeline_state``: the pipeline state stored at the destination (as dlt writes it)."""
    return Table.from_dict(
        {
            "columns": {
                "version": _sys("bigint", "Numeric version of the pipeline state"),
                "engine_version": _sys("bigint", "Version of the dlt state engine"),
                "pipeline_name": _sys("text", "Name of the pipeline this state belongs to"),
                "state": _sys("text", "Compressed JSON representation of the pipeline state"),
                "created_at": _sys("timestamp", "Timestamp when this state was created"),
                "version_hash": _sys(
                    "text", "Hash of the state content, used to detect changes", True
                ),
                "_dlt_load_id": {
                    **_sys("text", "Load identifier linking this row to its load operation"),
                    "precision": 64,
                },
                "_dlt_id": {
                    "data_type": "text",
                    "nullable": False,
                    "unique": True,
                    "row_key": True,
                },
            },
            "write_disposition": "append",
            "file_format": "preferred",
            "resource": STATE_TABLE_NAME,
        },
        name,
    )


def _variant_description(variant_column: str) -> str:
    """dlt's exact wording on every variant column (naming the variant column itself), so
    schemas compare equal across the two tools."""
    return f"Variant of column {variant_column} generated by dlt"


def _sys(data_type: str, description: str, nullable: bool = False) -> dict[str, Any]:
    return {"data_type": data_type, "nullable": nullable, "description": description}


def _is_complete(table: Table) -> bool:
    """A table with at least one typed column (dlt's "complete" table)."""
    return any(column.is_complete for column in table.columns.values())


def _normalized_table(table: Table, naming: NamingConvention) -> Table:
    """``table`` with its own, its parent's and its columns' names normalized."""
    columns = {}
    for column in table.columns.values():
        name = naming.normalize_identifier(column.name)
        columns[name] = attrs.evolve(column, name=name)
    return attrs.evolve(
        table,
        name=naming.normalize_tables_path(table.name),
        parent=None if table.parent is None else naming.normalize_tables_path(table.parent),
        columns=columns,
    )


def _default_normalizers(naming: str) -> dict[str, Any]:
    return {"names": naming, "json": {"module": DLT_JSON_NORMALIZER_MODULE}}


class Schema:
    """A named schema: ordered tables, settings, naming and version.

    ``Schema(name)`` is a new schema as dlt makes one: the ``_dlt_version`` and ``_dlt_loads``
    tables, ``iso_timestamp`` detection and the relational normalizer's default hints.
    dlt's public members are here with dlt's signatures; tables, columns and settings are
    frozen values that read like dlt's dicts (``schema.tables["users"]["columns"]``).
    """

    ENGINE_VERSION: ClassVar[int] = ENGINE_VERSION

    def __init__(
        self,
        name: str,
        *,
        naming: str | None = None,
        normalizers: Mapping[str, Any] | None = None,
        settings: SchemaSettings | None = None,
        tables: Iterable[Table] | None = None,
        add_system_tables: bool = True,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidSchemaError(f"schema name must be a non-empty string, got {name!r}")
        self._name = name
        self._normalizers: dict[str, Any] = (
            copy.deepcopy(dict(normalizers))
            if normalizers is not None
            else _default_normalizers(naming or "snake_case")
        )
        if naming is not None:
            self._normalizers["names"] = naming
        self._settings = settings if settings is not None else SchemaSettings.relational_defaults()
        self._tables: dict[str, Table] = {}
        if add_system_tables:
            for table in (version_table(), loads_table()):
                self._tables[self._system_table_name(table.name)] = attrs.evolve(
                    table, name=self._system_table_name(table.name)
                )
        for table in tables or ():
            self._tables[table.name] = table
        self.version = 1
        self.engine_version = ENGINE_VERSION
        self.previous_hashes: list[str] = []
        self.stored_version_hash: str | None = None
        #: True when from_dict found a hash that did not match the content (hand edit or a file
        #: hashed by dlt) and accepted it as a new version.
        self.was_modified_on_load = False
        #: the ``version_hash`` written in the document from_dict read (None for new schemas):
        #: lets import_schema_path notice whether the user's file changed since last import.
        self.loaded_version_hash: str | None = None
        self._extra: dict[str, Any] = {}

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def tables(self) -> Mapping[str, Table]:
        """Tables by name, in order (read-only; change them with :meth:`update_table`)."""
        return MappingProxyType(self._tables)

    @property
    def settings(self) -> SchemaSettings:
        return self._settings

    @settings.setter
    def settings(self, value: SchemaSettings) -> None:
        self._settings = value

    @property
    def normalizers(self) -> TNormalizers:
        """The stored ``normalizers`` section (a copy)."""
        return cast(TNormalizers, copy.deepcopy(self._normalizers))

    # ------------------------------------------------------------------ naming
    @property
    def naming_name(self) -> str:
        """Name of the schema's naming convention (``normalizers.names``)."""
        return str(self._normalizers.get("names") or "snake_case")

    @property
    def use_break_path_on_normalize(self) -> bool:
        """True (default): source keys go through ``normalize_path``; False: legacy whole-key."""
        return bool(self._normalizers.get("use_break_path_on_normalize", True))

    @use_break_path_on_normalize.setter
    def use_break_path_on_normalize(self, value: bool) -> None:
        self._normalizers["use_break_path_on_normalize"] = bool(value)

    @property
    def allow_identifier_change_on_table_with_data(self) -> bool:
        return bool(self._normalizers.get("allow_identifier_change_on_table_with_data", False))

    def naming_convention(self, max_length: int | None = None) -> NamingConvention:
        """An instance of the schema's naming convention, sized for a destination."""
        from loadstone.plugin_manager import naming_convention

        return naming_convention(self.naming_name, max_length)

    @property
    def naming(self) -> NamingConvention:
        """The naming convention object (dlt's ``schema.naming``): ``normalize_identifier``,
        ``normalize_table_identifier``, ``normalize_path``, ``make_path``, ``break_path``."""
        cached = self.__dict__.get("_naming")
        if cached is None or cached[0] != self.naming_name:
            cached = (self.naming_name, self.naming_convention())
            self.__dict__["_naming"] = cached
        return cast("NamingConvention", cached[1])

    def set_naming(self, naming: str) -> None:
        """Record a new naming convention. Check first with
        :func:`loadstone.schema.naming_change.check_naming_change` when tables hold data."""
        self._normalizers["names"] = naming

    def _system_table_name(self, name: str) -> str:
        cached = self.__dict__.get("_system_names")
        if cached is None or cached[0] != self.naming_name:
            cached = (self.naming_name, {})
            self.__dict__["_system_names"] = cached
        names: dict[str, str] = cached[1]
        if name not in names:
            try:
                names[name] = self.naming_convention().normalize_table_identifier(name)
            except LoadstoneError:  # naming plugin not installed: keep dlt's names
                names[name] = name
        return names[name]

    @property
    def version_table_name(self) -> str:
        return self._system_table_name(VERSION_TABLE_NAME)

    @property
    def loads_table_name(self) -> str:
        return self._system_table_name(LOADS_TABLE_NAME)

    @property
    def state_table_name(self) -> str:
        return self._system_table_name(STATE_TABLE_NAME)

    # ------------------------------------------------------------------ normalizer config
    @property
    def json_normalizer(self) -> str:
        """The loadstone normalizer plugin: ``relational`` for dlt's relational module."""
        module = (self._normalizers.get("json") or {}).get("module") or DLT_JSON_NORMALIZER_MODULE
        return "relational" if module in _RELATIONAL_ALIASES else module

    @property
    def json_normalizer_config(self) -> dict[str, Any]:
        """``normalizers.json.config`` (``max_nesting``, ``propagation`` ...), a copy."""
        return copy.deepcopy((self._normalizers.get("json") or {}).get("config") or {})

    def update_json_normalizer_config(self, **config: Any) -> None:
        """Set keys of ``normalizers.json.config`` (e.g. ``max_nesting=2``)."""
        json_section = self._normalizers.setdefault("json", {"module": DLT_JSON_NORMALIZER_MODULE})
        if json_section.get("module") == "relational":
            json_section["module"] = DLT_JSON_NORMALIZER_MODULE
        json_section.setdefault("config", {}).update(config)

    @property
    def max_nesting(self) -> int | None:
        value = self.json_normalizer_config.get("max_nesting")
        return None if value is None else int(value)

    # ------------------------------------------------------------------ tables
    def get_table(self, table_name: str) -> Table:
        try:
            return self._tables[table_name]
        except KeyError:
            raise TableNotFoundError(self._name, table_name, self._tables) from None

    def has_table(self, table_name: str) -> bool:
        return table_name in self._tables

    def is_system_table(self, table_name: str) -> bool:
        return table_name.startswith("_dlt") or table_name in (
            self.version_table_name,
            self.loads_table_name,
            self.state_table_name,
        )

    def get_table_columns(
        self, table_name: str, include_incomplete: bool = False
    ) -> dict[str, TColumnSchema]:
        """The columns of ``table_name`` as dlt's dicts; columns with no data type only with
        ``include_incomplete`` (dlt creates no column it could not type)."""
        return {
            name: column.to_dict()
            for name, column in self.get_table(table_name).columns.items()
            if include_incomplete or column.is_complete
        }

    def is_new_table(self, table_name: str) -> bool:
        """True for a table the schema lacks or that has no typed column yet (as dlt)."""
        table = self._tables.get(table_name)
        return table is None or not _is_complete(table)

    def data_tables(
        self, seen_data_only: bool = False, include_incomplete: bool = False
    ) -> list[Table]:
        """Tables holding user data (not ``_dlt_*``), as dlt lists them: only those with a
        typed column unless ``include_incomplete``; with ``seen_data_only`` only those the
        normalizer wrote rows to."""
        return [
            table
            for name, table in self._tables.items()
            if not self.is_system_table(name)
            and (table.seen_data or not seen_data_only)
            and (include_incomplete or _is_complete(table))
        ]

    def data_table_names(
        self, seen_data_only: bool = False, include_incomplete: bool = False
    ) -> list[str]:
        return [table.name for table in self.data_tables(seen_data_only, include_incomplete)]

    def dlt_tables(self) -> list[Table]:
        return [table for name, table in self._tables.items() if self.is_system_table(name)]

    def dlt_table_names(self) -> list[str]:
        return [table.name for table in self.dlt_tables()]

    def nested_tables(self, table_name: str) -> list[Table]:
        """Every table nested (at any depth) under ``table_name``, parents before children."""
        found: list[Table] = []
        frontier = [table_name]
        while frontier:
            parent = frontier.pop(0)
            for table in self._tables.values():
                if table.parent == parent:
                    found.append(table)
                    frontier.append(table.name)
        return found

    def root_table(self, table_name: str) -> Table:
        """The root (top-level) table of ``table_name``."""
        table = self.get_table(table_name)
        seen = {table.name}
        while table.parent is not None:
            table = self.get_table(table.parent)
            if table.name in seen:
                raise InvalidSchemaError("parent cycle", table=table.name)
            seen.add(table.name)
        return table

    @overload
    def update_table(self, partial: Table) -> Table: ...
    @overload
    def update_table(
        self, partial: Mapping[str, Any], normalize_identifiers: bool = True
    ) -> TTableSchema: ...
    def update_table(
        self, partial: Table | Mapping[str, Any], normalize_identifiers: bool = True
    ) -> Table | TTableSchema:
        """Merge ``partial`` into the table of its name (or add it); returns the result.

        A nested table's parent must already be in the schema (it is created first, both by
        the normalizer and when hints arrive from code). A dict (dlt's partial table) has its
        names normalized by the schema's naming convention and comes back normalized, as
        dlt's ``update_table`` returns it.
        """
        if not isinstance(partial, Table):
            table = Table.from_dict(partial)
            if normalize_identifiers:
                table = _normalized_table(table, self.naming)
            self._merge_table(table)
            return table.to_dict()
        return self._merge_table(partial)

    def _merge_table(self, partial: Table) -> Table:
        if partial.parent is not None and partial.parent not in self._tables:
            raise InvalidSchemaError(
                f"parent table {partial.parent!r} is not in schema {self._name!r}",
                table=partial.name,
            )
        existing = self._tables.get(partial.name)
        merged = partial if existing is None else existing.merge(partial)
        self._tables[partial.name] = merged
        return merged

    def update_schema(self, other: Schema) -> None:
        """Merge every table and setting of ``other`` (same name) into this schema."""
        for table in other.tables.values():
            if table.parent is not None and table.parent not in self._tables:
                self._tables[table.name] = table
            else:
                self.update_table(table)
        self._settings = self._settings.merge_hints(
            other.settings.default_hints
        ).update_preferred_types(other.settings.preferred_types)
        for detection in other.settings.detections:
            self._settings = self._settings.add_type_detection(detection)

    def with_code_declarations(self, code: Schema) -> Schema:
        """This (stored) schema with what ``code`` declares: its settings (detections, hints,
        preferred types) when it sets any, and the tables it has that this one lacks,
        appended. Why a new schema: the pipeline's stored one stays as it was until the
        package is written.

        The versions follow the stored document's rules: this schema's save is recorded
        first, and a content that changed becomes the next version, as when a changed file
        is read (``from_dict``: :attr:`was_modified_on_load`).
        """
        self.bump_version()
        code.bump_version()
        merged = self.copy()
        if code.settings.to_dict():
            merged._settings = code.settings
        for name, table in code.tables.items():
            merged._tables.setdefault(name, table)
        merged.engine_version = ENGINE_VERSION
        merged.loaded_version_hash = self.stored_version_hash
        merged.was_modified_on_load = merged.version_hash != self.stored_version_hash
        merged.bump_version()
        return merged

    def copy(self) -> Schema:
        """A working copy that shares the frozen tables and settings (no stored-form trip).

        Changes to the copy (``update_table``, settings, normalizers) never reach this schema:
        the normalizer evolves a copy and hands it back only when the package succeeded.
        """
        twin = copy.copy(self)
        twin._tables = dict(self._tables)
        twin._normalizers = copy.deepcopy(self._normalizers)
        twin._extra = copy.deepcopy(self._extra)
        twin.previous_hashes = list(self.previous_hashes)
        twin.__dict__.pop("_system_names", None)
        twin.__dict__.pop("_naming", None)
        return twin

    def set_json_normalizer_config(self, config: Mapping[str, Any]) -> None:
        """Replace ``normalizers.json.config``, writing dlt's module name when it is missing."""
        json_section = self._normalizers.setdefault("json", {})
        json_section.setdefault("module", DLT_JSON_NORMALIZER_MODULE)
        json_section["config"] = copy.deepcopy(dict(config))

    def replace_table(self, table: Table) -> None:
        """Put ``table`` as is (no merge): for hints that must override, e.g. dropped columns."""
        self._tables[table.name] = table

    def drop_tables(self, table_names: Iterable[str]) -> list[Table]:
        """Remove tables; returns the removed ones."""
        removed = []
        for name in list(table_names):
            table = self._tables.pop(name, None)
            if table is not None:
                removed.append(table)
        return removed

    # ------------------------------------------------------------------ settings
    def add_type_detection(self, detection: str) -> None:
        self._settings = self._settings.add_type_detection(detection)

    def remove_type_detection(self, detection: str) -> None:
        self._settings = self._settings.remove_type_detection(detection)

    def merge_hints(
        self,
        new_hints: Mapping[str, Iterable[str]],
        replace: bool = False,
        normalize_identifiers: bool = True,
    ) -> None:
        """Add default-hint rules (``{"not_null": ["name", "re:^id"]}``). The rules are
        patterns kept as written (``normalize_identifiers`` is accepted for dlt's signature:
        dlt 1.31 keeps them as written too)."""
        self._settings = self._settings.merge_hints(new_hints, replace=replace)

    def update_preferred_types(
        self,
        new_preferred_types: Mapping[str, str],
        normalize_identifiers: bool = True,
        *,
        replace: bool = False,
    ) -> None:
        self._settings = self._settings.update_preferred_types(new_preferred_types, replace=replace)

    def get_preferred_type(self, col_name: str) -> str | None:
        """The data type the preferred-type rules give ``col_name`` (None: no rule matches)."""
        return preferred_type_for(self._settings, col_name)

    def set_schema_contract(self, contract: Any) -> None:
        """Schema-wide contract: a mode string or ``{"tables": ..., "columns": ..., "data_type": ...}``."""
        from loadstone.schema.contracts import SchemaContract

        if contract is not None:
            SchemaContract.parse(contract)  # validates
        self._settings = self._settings.with_schema_contract(contract)

    # ------------------------------------------------------------------ inference
    def infer_data_type(
        self, column_name: str, value: Any, *, new_column: bool = True
    ) -> str | None:
        """The data type a value gives a column: preferred type, detections (new columns
        only), then the Python type. ``None`` for a null value without a preferred type."""
        preferred = preferred_type_for(self._settings, column_name)
        if preferred is not None:
            return preferred
        if value is None:
            return None
        if new_column and self._settings.detections:
            detected = detect_type(value, self._settings.detections)
            if detected is not None:
                return detected
        return py_type_to_data_type(value)

    def infer_column(self, table_name: str, column_name: str, value: Any) -> Column:
        """The column a first ``value`` makes in ``table_name`` (names are normalized).

        A column already declared without a data type (hints from code) keeps its hints and
        gets the inferred type; default hint rules add ``not_null``/``unique``/... by name.
        """
        table = self._tables.get(table_name)
        existing = None if table is None else table.columns.get(column_name)
        if existing is not None and existing.data_type is not None:
            return existing
        data_type = self.infer_data_type(column_name, value, new_column=True)
        return self.new_column(table_name, column_name, data_type)

    def new_column(
        self, table_name: str, column_name: str, data_type: str | None, *, variant: bool = False
    ) -> Column:
        """The column a new ``column_name`` of ``data_type`` makes in ``table_name``.

        The one rule for new columns, whoever decided the type (:meth:`infer_column` from a
        value, the normalizer from its workers' facts): nullable, the default hint rules
        matching the name, then the hints the table already declares for it (code hints).
        A variant column carries dlt's description, naming the variant column itself.
        """
        stored: dict[str, Any] = {"data_type": data_type, "nullable": True}
        if variant:
            stored["variant"] = True
            stored["description"] = _variant_description(column_name)
        stored.update(hints_for_column(self._settings, column_name))
        if data_type is None:
            stored.pop("data_type")
        column = Column.from_dict(stored, column_name)
        table = self._tables.get(table_name)
        declared = None if table is None else table.columns.get(column_name)
        if declared is None:
            return column
        return column.merge(attrs.evolve(declared, data_type=None))

    def infer_variant_column(
        self, table_name: str, column_name: str, value: Any, naming: NamingConvention
    ) -> Column:
        """The variant column for a ``value`` that did not coerce into ``column_name``.

        Named after the value's Python type (``id__v_text``); its data type comes from the
        usual inference, so detections apply (dlt stores an ISO string arriving at a bigint
        column in ``c__v_text`` typed ``timestamp``).
        """
        py_type = py_type_to_data_type(value)
        if py_type is None:
            raise ValueError("a null value never needs a variant column")
        name = variant_column_name(column_name, py_type, naming)
        table = self._tables.get(table_name)
        existing = None if table is None else table.columns.get(name)
        if existing is None or existing.data_type is None:
            data_type = self.infer_data_type(name, value, new_column=True)
            return self.new_column(table_name, name, data_type, variant=True)
        if existing.variant and existing.description is not None:
            return existing
        return existing.evolve(
            variant=True, description=existing.description or _variant_description(name)
        )

    # ------------------------------------------------------------------ versions
    @property
    def version_hash(self) -> str:
        """Content hash of the current state (see :mod:`loadstone.schema.versioning`)."""
        return content_hash(self._content_dict())

    @property
    def is_modified(self) -> bool:
        """True when the content changed since it was loaded or last saved."""
        return self.stored_version_hash != self.version_hash

    @property
    def is_new(self) -> bool:
        return self.stored_version_hash is None

    def bump_version(self) -> tuple[int, str]:
        """Record a save: if the content changed, version + 1 and the old hash goes to
        ``previous_hashes``. Returns ``(version, version_hash)``."""
        current = self.version_hash
        if self.stored_version_hash is None:
            self.stored_version_hash = current
            return self.version, current
        self.version, self.previous_hashes = _next_version(
            self.version, self.stored_version_hash, current, self.previous_hashes
        )
        self.stored_version_hash = current
        return self.version, current

    # ------------------------------------------------------------------ stored form
    def _content_dict(self, *, with_names: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "engine_version": self.engine_version,
            "name": self._name,
            "tables": {n: t.to_dict(with_names=with_names) for n, t in self._tables.items()},
            "settings": self._settings.to_dict(),
            "normalizers": copy.deepcopy(self._normalizers),
        }
        out.update(copy.deepcopy(self._extra))
        return out

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
        if remove_processing_hints:
            for table in content["tables"].values():
                for hint in PROCESSING_HINTS:
                    table.pop(hint, None)
        out: dict[str, Any] = {
            "version": self.version,
            "version_hash": self.version_hash,
            "engine_version": content.pop("engine_version"),
            "name": content.pop("name"),
            "tables": content.pop("tables"),
            "settings": content.pop("settings"),
            "normalizers": content.pop("normalizers"),
        }
        out.update(content)
        out["previous_hashes"] = list(self.previous_hashes)
        return cast(TStoredSchema, out)

    def to_pretty_yaml(
        self,
        remove_defaults: bool = True,
        remove_processing_hints: bool = False,
        *,
        bump_version: bool = True,
        remove_names: bool = True,
    ) -> str:
        """YAML as dlt exports it (key order kept, no ``name`` repeats)."""
        return yaml.safe_dump(
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
        cls, stored: TStoredSchema | Mapping[str, Any], *, bump_version: bool = True
    ) -> Schema:
        """Read a stored document (ours or dlt's, engine_version 11; tables and columns with or
        without ``name`` keys).

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
        tables = [
            Table.from_dict(data or {}, table_name) for table_name, data in tables_data.items()
        ]
        normalizers = stored.get("normalizers")
        schema = cls(
            name,
            normalizers=normalizers
            if normalizers is not None
            else _default_normalizers("snake_case"),
            settings=SchemaSettings.from_dict(stored.get("settings")),
            tables=tables,
            add_system_tables=False,
        )
        schema.engine_version = ENGINE_VERSION
        schema._extra = {
            k: copy.deepcopy(v)
            for k, v in stored.items()
            if k
            not in {
                "version",
                "version_hash",
                "engine_version",
                "name",
                "tables",
                "settings",
                "normalizers",
                "previous_hashes",
            }
        }
        schema._adopt_version(stored, bump_version)
        return schema

    def _adopt_version(self, stored: Mapping[str, Any], bump_version: bool) -> None:
        """Version and hashes of a stored document; a changed content is a new version."""
        self.version = int(stored.get("version") or 1)
        self.previous_hashes = list(stored.get("previous_hashes") or [])[:MAX_PREVIOUS_HASHES]
        recorded = stored.get("version_hash")
        self.loaded_version_hash = recorded
        current = self.version_hash
        if recorded is None:
            self.stored_version_hash = current
        elif recorded == current or not bump_version:
            self.stored_version_hash = recorded if recorded == current else current
        else:
            self.version, self.previous_hashes = _next_version(
                self.version, recorded, current, self.previous_hashes
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
        copy_.version = self.version
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
        return (
            f"Schema(name={self._name!r}, version={self.version}, tables={len(self._tables)}, "
            f"naming={self.naming_name!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_system_names", None)
        state.pop("_naming", None)
        return state
