"""What a schema holds: name, ordered tables, settings, normalizers, and its version state.

:class:`SchemaState` is the base of :class:`loadstone.schema.Schema`; the table lookups
(:mod:`loadstone.schema.lookups`), the evolution rules (:mod:`loadstone.schema.evolution`)
and the stored form (:mod:`loadstone.schema.schema`) each add their part on top, so each
reads in one sitting. Versions follow dlt: ``version`` is the saved version, one more while
the content differs from the save; ``stored_version`` is the saved one (None before a save).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

import attrs

from loadstone.exceptions import InvalidSchemaError, LoadstoneError
from loadstone.schema.model import Table
from loadstone.schema.settings import SchemaSettings
from loadstone.schema.stored import TJsonNormalizer, TNormalizers, TStoredSchema
from loadstone.schema.system_tables import (
    LOADS_TABLE_NAME,
    STATE_TABLE_NAME,
    VERSION_TABLE_NAME,
    loads_table,
    version_table,
)
from loadstone.schema.versioning import ENGINE_VERSION, content_hash
from loadstone.schema.versioning import bump_version as _next_version

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is 3.11+

    from loadstone.naming import NamingConvention

__all__ = ["DLT_JSON_NORMALIZER_MODULE", "SchemaState", "default_normalizers"]

DLT_JSON_NORMALIZER_MODULE: Final = "dlt.common.normalizers.json.relational"
#: stored module names that mean loadstone's relational normalizer plugin.
_RELATIONAL_ALIASES: Final = frozenset({DLT_JSON_NORMALIZER_MODULE, "relational"})


def _text(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _same_content(old: tuple[object, ...], new: tuple[object, ...]) -> bool:
    """Equal keys of :meth:`SchemaState._hash_key`: the frozen parts must be the very same
    objects (equal tables may still order their columns differently)."""
    old_tables = cast("tuple[tuple[str, Table], ...]", old[3])
    new_tables = cast("tuple[tuple[str, Table], ...]", new[3])
    return (
        old[:2] == new[:2]
        and old[2] is new[2]
        and old[4:] == new[4:]
        and len(old_tables) == len(new_tables)
        and all(
            a_name == b_name and a is b
            for (a_name, a), (b_name, b) in zip(old_tables, new_tables, strict=True)
        )
    )


def default_normalizers(naming: str) -> TNormalizers:
    return {"names": naming, "json": {"module": DLT_JSON_NORMALIZER_MODULE}}


class SchemaState:
    """Name, tables, settings, normalizers and versions of one schema (see module docs)."""

    ENGINE_VERSION: ClassVar[int] = ENGINE_VERSION

    def __init__(
        self,
        name: str,
        *,
        naming: str | None = None,
        normalizers: TNormalizers | None = None,
        settings: SchemaSettings | None = None,
        tables: Iterable[Table] | None = None,
        add_system_tables: bool = True,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidSchemaError(f"schema name must be a non-empty string, got {name!r}")
        self._name = name
        self._normalizers: TNormalizers = (
            copy.deepcopy(normalizers)
            if normalizers is not None
            else default_normalizers(naming or "snake_case")
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
        self._version = 1
        self.engine_version = ENGINE_VERSION
        self.previous_hashes: list[str] = []
        self.stored_version_hash: str | None = None
        #: True when from_dict found a hash that did not match the content (hand edit or a file
        #: hashed by dlt) and accepted it as a new version.
        self.was_modified_on_load = False
        #: the ``version_hash`` written in the document from_dict read (None for new schemas):
        #: lets import_schema_path notice whether the user's file changed since last import.
        self.loaded_version_hash: str | None = None
        self._extra: dict[str, object] = {}

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def tables(self) -> Mapping[str, Table]:
        """Tables by name, in order (read-only; change them with ``update_table``)."""
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
        return copy.deepcopy(self._normalizers)

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
    def _json_section(self) -> TJsonNormalizer:
        return self._normalizers.get("json") or {}

    @property
    def json_normalizer(self) -> str:
        """The loadstone normalizer plugin: ``relational`` for dlt's relational module."""
        module = self._json_section().get("module") or DLT_JSON_NORMALIZER_MODULE
        return "relational" if module in _RELATIONAL_ALIASES else module

    @property
    def json_normalizer_config(self) -> dict[str, Any]:  # free-form: dlt's and the user's keys
        """``normalizers.json.config`` (``max_nesting``, ``propagation`` ...), a copy."""
        return copy.deepcopy(self._json_section().get("config") or {})

    def update_json_normalizer_config(self, **config: object) -> None:
        """Set keys of ``normalizers.json.config`` (e.g. ``max_nesting=2``)."""
        json_section = self._normalizers.setdefault("json", {"module": DLT_JSON_NORMALIZER_MODULE})
        if json_section.get("module") == "relational":
            json_section["module"] = DLT_JSON_NORMALIZER_MODULE
        json_section.setdefault("config", {}).update(config)

    def set_json_normalizer_config(self, config: Mapping[str, object]) -> None:
        """Replace ``normalizers.json.config``, writing dlt's module name when it is missing."""
        json_section = self._normalizers.setdefault("json", {})
        json_section.setdefault("module", DLT_JSON_NORMALIZER_MODULE)
        json_section["config"] = copy.deepcopy(dict(config))

    @property
    def max_nesting(self) -> int | None:
        value = self.json_normalizer_config.get("max_nesting")
        return None if value is None else int(str(value))

    @property
    def imported_version_hash(self) -> str | None:
        """The content hash of the ``import_schema_path`` file last taken into this schema
        (dlt's key; not part of the schema's own hash): a file that hashes otherwise was
        edited since, and is taken again."""
        found = self._extra.get("imported_version_hash")
        return found if isinstance(found, str) else None

    @imported_version_hash.setter
    def imported_version_hash(self, value: str | None) -> None:
        if value is None:
            self._extra.pop("imported_version_hash", None)
        else:
            self._extra["imported_version_hash"] = value

    # ------------------------------------------------------------------ versions
    @property
    def version_hash(self) -> str:
        """Content hash of the current state (see :mod:`loadstone.schema.versioning`).

        Computed once per content: a run asks a dozen times (``version``, ``is_modified``,
        saves), and each hash is a walk of every table and a JSON dump of the document.
        Tables and settings are frozen values, so the same objects mean the same content;
        the normalizers and extra keys are plain dicts and compared by their JSON text.
        """
        key = self._hash_key()
        memo = self.__dict__.get("_hash_memo")
        if memo is not None and _same_content(memo[0], key):
            return cast(str, memo[1])
        current = content_hash(self._content_dict())
        self.__dict__["_hash_memo"] = (key, current)
        return current

    def _hash_key(self) -> tuple[object, ...]:
        """What the hash depends on: the table and settings objects, the dicts' text."""
        return (
            self._name,
            self.engine_version,
            self._settings,
            tuple(self._tables.items()),
            _text(self._normalizers),
            _text(self._extra),
        )

    @property
    def version(self) -> int:
        """dlt's version: the saved one, plus one while the content differs from the save
        (a new schema stays at 1 until its first save)."""
        if self.stored_version_hash is not None and self.is_modified:
            return self._version + 1
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        self._version = value

    @property
    def stored_version(self) -> int | None:
        """The version of the last save (None before the first one), as dlt's."""
        return None if self.stored_version_hash is None else self._version

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
            return self._version, current
        self._version, self.previous_hashes = _next_version(
            self._version, self.stored_version_hash, current, self.previous_hashes
        )
        self.stored_version_hash = current
        return self._version, current

    def _content_dict(self, *, with_names: bool = True) -> TStoredSchema:
        """The hashed content: the stored document without its version keys."""
        out: TStoredSchema = {
            "engine_version": self.engine_version,
            "name": self._name,
            "tables": {n: t.to_dict(with_names=with_names) for n, t in self._tables.items()},
            "settings": self._settings.to_dict(),
            "normalizers": copy.deepcopy(self._normalizers),
        }
        out.update(cast(TStoredSchema, copy.deepcopy(self._extra)))  # x-* and future keys
        return out

    def copy(self) -> Self:
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
