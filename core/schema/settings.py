"""Schema settings: detections, default hints and preferred types.

The settings are the global rules that apply to every *new* column: they are how a user says
"every column named ``id`` is a primary key" or "anything ending in ``_at`` is a timestamp"
without listing tables. Rules match **normalized** (destination) column names, either
exactly or, with a ``re:`` prefix, by regular expression search (dlt's ``SimpleRegex``).

:class:`SchemaSettings` is a frozen value (the :class:`~loadstone.schema.Schema` swaps it
when a rule changes), so the compiled matchers can be cached and shipped to Spark workers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from loadstone.exceptions import InvalidSchemaError
from loadstone.schema.data_types import is_data_type
from loadstone.schema.detections import DEFAULT_DETECTIONS, check_detections
from loadstone.schema.model import COLUMN_HINTS, StoredFormView
from loadstone.schema.stored import TSchemaSettings

if TYPE_CHECKING:
    from loadstone.typing import TSchemaContract

__all__ = [
    "RELATIONAL_DEFAULT_HINTS",
    "PreferredTypes",
    "SchemaSettings",
    "compile_preferred",
    "hints_for_column",
    "matches_rule",
    "preferred_type_for",
]

#: the hints the relational normalizer adds to a new schema (key order as dlt writes them).
RELATIONAL_DEFAULT_HINTS: Final[dict[str, tuple[str, ...]]] = {
    "not_null": ("_dlt_id", "_dlt_root_id", "_dlt_parent_id", "_dlt_list_idx", "_dlt_load_id"),
    "parent_key": ("_dlt_parent_id",),
    "root_key": ("_dlt_root_id",),
    "unique": ("_dlt_id",),
    "row_key": ("_dlt_id",),
}

_REGEX_PREFIX: Final = "re:"


@lru_cache(maxsize=4096)
def _compiled(rule: str) -> re.Pattern[str] | None:
    if rule.startswith(_REGEX_PREFIX):
        try:
            return re.compile(rule[len(_REGEX_PREFIX) :])
        except re.error as ex:
            raise InvalidSchemaError(f"invalid regex rule {rule!r}: {ex}") from None
    return None


def matches_rule(rule: str, name: str) -> bool:
    """True when ``name`` matches ``rule``: equal, or ``re:<pattern>`` searching it."""
    pattern = _compiled(rule)
    if pattern is None:
        return rule == name
    return pattern.search(name) is not None


def _freeze_hints(value: Mapping[str, Iterable[str]] | None) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for hint, rules in (value or {}).items():
        if isinstance(rules, str):
            rules = [rules]
        out[hint] = tuple(rules)
    return out


def _as_detections(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _as_preferred(value: Mapping[str, str]) -> dict[str, str]:
    return dict(value)


def _as_extra(value: Mapping[str, object]) -> dict[str, Any]:
    return dict(value)


def _check_hints(instance: object, attribute: object, value: Mapping[str, Sequence[str]]) -> None:
    for hint, rules in value.items():
        if hint not in COLUMN_HINTS:
            raise InvalidSchemaError(
                f"unknown hint {hint!r} in default_hints; known: {', '.join(COLUMN_HINTS)}"
            )
        for rule in rules:
            _compiled(rule)


def _check_preferred(instance: object, attribute: object, value: Mapping[str, str]) -> None:
    for rule, data_type in value.items():
        if not is_data_type(data_type):
            raise InvalidSchemaError(
                f"preferred type {data_type!r} for {rule!r} is not a data type"
            )
        _compiled(rule)


def _check_detections(instance: object, attribute: object, value: Sequence[str]) -> None:
    check_detections(value)


@attrs.frozen(kw_only=True, repr=False)
class SchemaSettings(StoredFormView):
    """The ``settings`` section of a stored schema (read like dlt's dict: ``["default_hints"]``).

    ``schema_contract`` is the schema-wide contract (``str`` mode or a dict per entity);
    ``extra`` keeps unknown keys for round trips.
    """

    detections: tuple[str, ...] = attrs.field(
        default=DEFAULT_DETECTIONS, converter=_as_detections, validator=_check_detections
    )
    default_hints: dict[str, tuple[str, ...]] = attrs.field(
        factory=dict, converter=_freeze_hints, validator=_check_hints, hash=False
    )
    preferred_types: dict[str, str] = attrs.field(
        factory=dict, converter=_as_preferred, validator=_check_preferred, hash=False
    )
    #: the contract as given (a mode, a dict per entity, or a SchemaContract)
    schema_contract: TSchemaContract | None = attrs.field(default=None, hash=False)
    extra: dict[str, Any] = attrs.field(factory=dict, converter=_as_extra, hash=False)

    @classmethod
    def relational_defaults(cls) -> SchemaSettings:
        """Settings of a new schema: ``iso_timestamp`` plus the relational normalizer's hints."""
        return cls(default_hints=RELATIONAL_DEFAULT_HINTS)

    # ------------------------------------------------------------ changes (return new values)
    def add_type_detection(self, detection: str) -> SchemaSettings:
        """Append ``detection`` (no duplicates)."""
        if detection in self.detections:
            return self
        return attrs.evolve(self, detections=(*self.detections, detection))

    def remove_type_detection(self, detection: str) -> SchemaSettings:
        return attrs.evolve(self, detections=tuple(d for d in self.detections if d != detection))

    def merge_hints(
        self, new_hints: Mapping[str, Iterable[str]], *, replace: bool = False
    ) -> SchemaSettings:
        """Add rules per hint (no duplicates); ``replace=True`` replaces each given hint's list."""
        hints = dict(self.default_hints)
        for hint, rules in _freeze_hints(new_hints).items():
            if replace or hint not in hints:
                hints[hint] = tuple(dict.fromkeys(rules))
            else:
                hints[hint] = tuple(dict.fromkeys((*hints[hint], *rules)))
        return attrs.evolve(self, default_hints=hints)

    def update_preferred_types(
        self, new_preferred_types: Mapping[str, str], *, replace: bool = False
    ) -> SchemaSettings:
        types: dict[str, str] = {} if replace else dict(self.preferred_types)
        types.update(new_preferred_types)
        return attrs.evolve(self, preferred_types=types)

    def with_schema_contract(self, contract: TSchemaContract | None) -> SchemaSettings:
        return attrs.evolve(self, schema_contract=contract)

    # ------------------------------------------------------------ stored form
    def to_dict(self) -> TSchemaSettings:
        out: dict[str, object] = {}
        if self.schema_contract is not None:
            out["schema_contract"] = self.schema_contract
        if self.detections:
            out["detections"] = list(self.detections)
        if self.default_hints:
            out["default_hints"] = {hint: list(rules) for hint, rules in self.default_hints.items()}
        if self.preferred_types:
            out["preferred_types"] = dict(self.preferred_types)
        out.update(self.extra)
        return cast(TSchemaSettings, out)

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> SchemaSettings:
        data = dict(data or {})
        known: dict[str, Any] = {  # field values, checked by the validators
            key: data.pop(key)
            for key in ("detections", "default_hints", "preferred_types", "schema_contract")
            if key in data
        }
        known.setdefault("detections", ())
        return cls(extra=data, **known)


def preferred_type_for(settings: SchemaSettings, column_name: str) -> str | None:
    """The preferred data type of a (normalized) column name.

    The first rule, in the order written, that matches the name wins; an exact name has no
    priority over an earlier ``re:`` rule. This is dlt 1.31's observed behaviour
    (``tests/fixtures/schemas/preferred_types_order_dlt.json``): with
    ``{"re:^id": "text", "id": "bigint"}`` the column ``id`` is ``text``.
    """
    return compile_preferred(settings.preferred_types).type_for(column_name)


@attrs.frozen
class PreferredTypes:
    """Preferred-type rules compiled once, in their written order (picklable for workers)."""

    rules: tuple[tuple[str, str], ...]

    def type_for(self, column_name: str) -> str | None:
        """The data type of the first rule matching ``column_name``, or None."""
        for rule, data_type in self.rules:
            if matches_rule(rule, column_name):
                return data_type
        return None

    def __bool__(self) -> bool:
        return bool(self.rules)


def compile_preferred(preferred: Mapping[str, str]) -> PreferredTypes:
    """``preferred_types`` as a matcher; the regexes are compiled (and cached) here."""
    for rule in preferred:
        _compiled(rule)
    return PreferredTypes(tuple(preferred.items()))


def hints_for_column(settings: SchemaSettings, column_name: str) -> dict[str, bool]:
    """Column hints the default_hints rules give a (normalized) column name.

    Returned as stored column keys: ``not_null`` becomes ``nullable: False``, every other hint
    ``<hint>: True``.
    """
    out: dict[str, bool] = {}
    for hint, rules in settings.default_hints.items():
        if any(matches_rule(rule, column_name) for rule in rules):
            if hint == "not_null":
                out["nullable"] = False
            else:
                out[hint] = True
    return out
