"""The table hints code gives (``@resource``, ``apply_hints``, ``run``), parsed once.

dlt users pass hints as plain strings, dicts and lists; :class:`TableHints` turns the eight
hint arguments into the stored form a load package keeps per source table (dlt's table
form), which the normalizer reads with the schema's hint rules. A bad hint fails here, where
it is given, before any data is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import attrs

from loadstone.exceptions import (
    InconsistentTableTemplate,
    InvalidSchemaError,
    ResourceError,
    TablePropertiesConflictException,
    ValueErrorWithKnownValues,
)
from loadstone.extract.pydantic_models import (
    is_model,
    model_columns,
    model_contract,
    model_validator,
)
from loadstone.schema.hints import MERGE_STRATEGIES as MERGE_STRATEGIES
from loadstone.schema.hints import write_disposition_hints
from loadstone.schema.model import WRITE_DISPOSITIONS as WRITE_DISPOSITIONS
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TLoaderFileFormat,
    TSchemaContract,
    TTableFormat,
    TWriteDispositionConfig,
)

if TYPE_CHECKING:
    from loadstone.schema import Schema

#: one value of a stored hint dict: JSON-like (a name, a key list, columns, a contract...)
StoredHint: TypeAlias = Any
#: the hints stored per source table in a package, in dlt's table form (only given hints)
StoredHints: TypeAlias = dict[str, StoredHint]
#: a column as given in code: dlt's column dict, maybe without its name
StoredColumn: TypeAlias = dict[str, StoredHint]


def normalize_write_disposition(value: TWriteDispositionConfig | None) -> StoredHints:
    """``"merge"`` or ``{"disposition": "merge", "strategy": "upsert", ...}`` -> hint dict.

    dlt's table form ``{"write_disposition": ..., "x-merge-strategy": ...?, ...}``, parsed by
    the schema's one parser (:func:`loadstone.schema.hints.write_disposition_hints`); a bad
    value is this resource's error.
    """
    try:
        return write_disposition_hints(value)
    except InvalidSchemaError as ex:
        raise ResourceError(f"write_disposition {value!r}: {ex}") from None


def normalize_columns(columns: TAnySchemaColumns | None) -> dict[str, StoredColumn]:
    """Columns given as a dict (name -> column dict) or a list of column dicts -> dict."""
    if columns is None:
        return {}
    if is_model(columns):
        return model_columns(columns)  # type: ignore[arg-type]  # a model class
    if isinstance(columns, Mapping):
        out: dict[str, StoredColumn] = {}
        for name, column in columns.items():
            col = dict(column or {})
            col.setdefault("name", name)
            out[str(name)] = col
        return out
    if isinstance(columns, Sequence) and not isinstance(columns, str):
        out = {}
        for column in columns:
            if not isinstance(column, Mapping) or "name" not in column:
                raise ResourceError(f"a column in a list needs a 'name': {column!r}")
            out[str(column["name"])] = dict(column)
        return out
    raise ResourceError(f"columns must be a dict or a list of column dicts, got {columns!r}")


def _key_list(value: TColumnNames | None) -> list[str] | None:
    """A key hint as a list of column names; ``""`` (like ``[]``) removes the key (dlt's)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value]


#: what ``make_nested_hints`` may declare for a nested table
NESTED_HINTS = (
    "columns",
    "schema_contract",
    "primary_key",
    "merge_key",
    "write_disposition",
    "references",
    "table_format",
    "file_format",
    "additional_table_hints",
)
#: what dlt's ``make_nested_hints`` takes (it takes ``make_hints``'s arguments) and a nested
#: table does not use: dlt 1.31 keeps them in the dict and loads as if they were not given
NESTED_HINTS_UNUSED = ("table_name", "incremental", "nested_hints", "original_columns")


def nested_hint_list(
    nested_hints: Mapping[str | tuple[str, ...], Mapping[str, StoredHint]],
) -> list[StoredHints]:
    """``nested_hints={"lines": make_nested_hints(columns=...)}`` (a key is a field name or a
    path tuple) -> ``[{"path": [...], "columns": {...}, ...}]``, the JSON form the package
    keeps: keys as lists, the write disposition as table hints (``write_disposition`` and
    ``x-merge-strategy``). A primary or merge key makes the nested table a table of its own
    (no link to its parent), as dlt 1.31 does; the normalizer reads that from these keys."""
    if callable(nested_hints) or not isinstance(nested_hints, Mapping):
        raise TypeError("nested_hints must be a dict of path -> make_nested_hints(...)")
    out = []
    for path, hint in nested_hints.items():
        parts = [path] if isinstance(path, str) else [str(p) for p in path]
        unknown = set(hint or {}) - {*NESTED_HINTS, *NESTED_HINTS_UNUSED}
        if unknown:
            raise TypeError(
                f"nested_hints {', '.join(sorted(unknown))} are not supported by loadstone "
                f"(only {', '.join(NESTED_HINTS)})"
            )
        entry: StoredHints = {"path": parts, "columns": normalize_columns(hint.get("columns"))}
        if hint.get("schema_contract") is not None:
            entry["schema_contract"] = hint["schema_contract"]
        for key in ("primary_key", "merge_key"):
            if hint.get(key) is not None:
                entry[key] = _key_list(hint[key])
        disposition = normalize_write_disposition(hint.get("write_disposition"))
        if disposition.get("x-merge-strategy") == "scd2":
            raise TypeError("nested_hints: an scd2 write disposition is for root tables only")
        entry.update(disposition)
        if hint.get("references") is not None:
            entry["references"] = reference_list(hint["references"])
        if hint.get("table_format") is not None:
            entry["table_format"] = hint["table_format"]
        if hint.get("file_format") is not None:
            entry["file_format"] = check_file_format(hint["file_format"])
        if hint.get(ADDITIONAL_HINTS) is not None:
            entry[ADDITIONAL_HINTS] = additional_hint_dict(hint[ADDITIONAL_HINTS])
        out.append(entry)
    return out


def check_nested_links(schema: Schema, hints_by_table: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse a nested key (``make_nested_hints(primary_key=...)``) for a nested table the
    schema holds linked to its parent: its rows would lose their link. dlt 1.31 fails the
    extract with ``TablePropertiesConflictException`` on ``parent``; so does this, before
    the package is kept, so the pipeline goes on."""
    naming = schema.naming
    for source, hints in hints_by_table.items():
        root = naming.normalize_tables_path(source)
        for entry in hints.get("x-nested-hints") or ():
            if not (entry.get("primary_key") or entry.get("merge_key")):
                continue
            parts = (naming.normalize_path(part) for part in entry["path"])
            table = naming.shorten_fragments(root, *parts)
            existing = schema.tables.get(table or "")
            if existing is not None and existing.parent is not None:
                raise TablePropertiesConflictException(
                    schema.name, existing.name, "parent", existing.parent, None
                )


def nested_hints_by_path(
    stored: Sequence[Mapping[str, StoredHint]],
) -> dict[str | tuple[str, ...], StoredHints] | None:
    """The stored nested hints (:func:`nested_hint_list`) by field name, a path tuple for
    deeper ones, as dlt's ``nested_hints``; ``None`` when there are none."""
    if not stored:
        return None
    out: dict[str | tuple[str, ...], StoredHints] = {}
    for entry in stored:
        path = entry["path"]
        out[path[0] if len(path) == 1 else tuple(path)] = {
            k: v for k, v in entry.items() if k != "path"
        }
    return out


@attrs.frozen(kw_only=True)
class TableHints:
    """The table hints code gives, as one value: ``@resource``, ``apply_hints``, ``run`` and
    ``extract`` take the same arguments, and hand them on as this.

    ``None`` means "not given"; :meth:`stored` is the package's hint dict (dlt's table form,
    only the given hints), which the normalizer reads with the schema's hint rules.
    """

    write_disposition: TWriteDispositionConfig | None = None
    primary_key: TColumnNames | None = None
    merge_key: TColumnNames | None = None
    columns: TAnySchemaColumns | None = None
    schema_contract: TSchemaContract | None = None
    max_table_nesting: int | None = None
    table_format: TTableFormat | None = None
    file_format: TLoaderFileFormat | None = None
    #: hints of nested tables (``make_nested_hints`` per field or path)
    nested_hints: Mapping[str | tuple[str, ...], Mapping[str, StoredHint]] | None = None
    #: dlt's table references (``[{"referenced_table": ..., "columns": [...], ...}]``)
    references: Sequence[Mapping[str, StoredHint]] | None = None
    #: hints dlt copies into the table as they are (``{"x-owner": "sales"}``)
    additional_table_hints: Mapping[str, StoredHint] | None = None
    #: the table's parent (dlt's ``parent_table_name``)
    parent_table_name: str | None = None
    #: the parsed form, made once when the value is built: a bad hint fails where it is
    #: given (``run``, ``extract``, ``@resource``), before any work
    _stored: StoredHints = attrs.field(
        init=False,
        eq=False,
        repr=False,
        default=attrs.Factory(lambda s: s._parse(), takes_self=True),
    )

    def stored(self) -> StoredHints:
        """The hint dict stored per source table in a package; only given hints appear."""
        return dict(self._stored)

    def _parse(self) -> StoredHints:
        hints: StoredHints = {}
        hints.update(normalize_write_disposition(self.write_disposition))
        if self.primary_key is not None:
            hints["primary_key"] = _key_list(self.primary_key)
        if self.merge_key is not None:
            hints["merge_key"] = _key_list(self.merge_key)
        if self.columns is not None:
            hints["columns"] = normalize_columns(self.columns)
        if is_model(self.columns):
            model: Any = self.columns
            contract = model_contract(model, self.schema_contract)
            model_validator(model, contract, "")  # a contract a model cannot honour fails here
            hints["schema_contract"] = contract
        elif self.schema_contract is not None:
            hints["schema_contract"] = self.schema_contract
        if self.max_table_nesting is not None:
            hints["max_nesting"] = int(self.max_table_nesting)
        if self.table_format is not None:
            hints["table_format"] = self.table_format
        if self.file_format is not None:
            hints["file_format"] = check_file_format(self.file_format)
        if self.nested_hints is not None:
            hints["x-nested-hints"] = nested_hint_list(self.nested_hints)
        if self.references is not None:
            hints["references"] = reference_list(self.references)
        if self.additional_table_hints is not None:
            hints[ADDITIONAL_HINTS] = additional_hint_dict(self.additional_table_hints)
        if self.parent_table_name is not None:
            hints["parent"] = self.parent_table_name
        return hints


#: the stored key of ``additional_table_hints``: spread into the table where it is made
ADDITIONAL_HINTS = "additional_table_hints"
#: the table key dlt records in a table made from a table variant (the variant's name; see
#: :mod:`loadstone.extract.table_variants`)
VARIANT_NAME = "variant_name"


def reference_list(references: object) -> list[StoredHints]:
    """``references=`` as the list of reference dicts dlt keeps in the table (copied, so a
    later change of the caller's list changes nothing)."""
    if (
        isinstance(references, Mapping)
        or not isinstance(references, Sequence)
        or any(not isinstance(ref, Mapping) for ref in references)
    ):
        raise TypeError(
            "references must be a list of dicts such as {'referenced_table': 'users', "
            f"'columns': ['user_id'], 'referenced_columns': ['id']}}, got {references!r}"
        )
    return [
        {key: list(value) if isinstance(value, (list, tuple)) else value
         for key, value in ref.items()}
        for ref in references
    ]  # fmt: skip


def additional_hint_dict(hints: object) -> StoredHints:
    """``additional_table_hints=`` as a dict of table keys (dlt copies them into the table)."""
    if not isinstance(hints, Mapping):
        raise TypeError(f"additional_table_hints must be a dict, got {hints!r}")
    return {str(key): value for key, value in hints.items()}


def table_keys_of(hints: Mapping[str, StoredHint]) -> StoredHints:
    """The stored hints that become table keys as they are: references, the additional
    hints, the parent, a variant's name (what compute_table_schema shows and the schema
    keeps)."""
    out: StoredHints = {}
    if hints.get("references") is not None:
        out["references"] = hints["references"]
    out.update(hints.get(ADDITIONAL_HINTS) or {})
    if hints.get("parent") is not None:
        out["parent"] = hints["parent"]
    if hints.get(VARIANT_NAME) is not None:
        out[VARIANT_NAME] = hints[VARIANT_NAME]
    return out


def nested_table_keys(entry: Mapping[str, StoredHint]) -> StoredHints:
    """The table keys a nested table takes as they are from its ``make_nested_hints``
    entry (:func:`nested_hint_list`): its table and file format and its additional hints,
    as dlt 1.31 records them in the nested table."""
    out: StoredHints = {
        key: entry[key] for key in ("table_format", "file_format") if entry.get(key) is not None
    }
    out.update(entry.get(ADDITIONAL_HINTS) or {})
    return out


#: dlt 1.31's loader file formats (``loader_file_format=`` / ``file_format=``)
LOADER_FILE_FORMATS = (
    "jsonl",
    "typed-jsonl",
    "insert_values",
    "parquet",
    "csv",
    "reference",
    "model",
)


def check_file_format(file_format: str | None) -> str | None:
    """``file_format`` when dlt knows it (``xlsx`` is refused by name, as dlt refuses it)."""
    if file_format is not None and file_format not in LOADER_FILE_FORMATS:
        raise ValueErrorWithKnownValues("loader_file_format", file_format, LOADER_FILE_FORMATS)
    return file_format


def make_hints(**hints: StoredHint) -> StoredHints:
    """``TableHints(**hints).stored()``: the stored hint dict of keyword hints."""
    return TableHints(**hints).stored()


def disposition_config(hints: Mapping[str, StoredHint]) -> TWriteDispositionConfig:
    """The write disposition as code gives it: ``"merge"``, or dlt's dict form when a
    strategy or options were given (``{"disposition": "merge", "strategy": "upsert"}``)."""
    disposition = str(hints.get("write_disposition") or "append")
    options = {
        ("strategy" if key == "x-merge-strategy" else key[2:].replace("-", "_")): value
        for key, value in hints.items()
        if key.startswith("x-") and key not in _NOT_DISPOSITION
    }
    if not options:
        return cast("TWriteDispositionConfig", disposition)
    return cast("TWriteDispositionConfig", {"disposition": disposition, **options})


#: table keys of the ``x-`` form that do not come from a write disposition
_NOT_DISPOSITION = frozenset({"x-nested-hints", "x-normalizer", "x-materialize"})


def merge_hints(base: Mapping[str, StoredHint], override: Mapping[str, StoredHint]) -> StoredHints:
    """Hints of ``override`` win; ``columns`` merge per column and per property. A write
    disposition replaces the old one with its strategy and options (``x-merge-strategy``
    ...), and an empty ``schema_contract`` removes the contract, as in dlt 1.31."""
    out = dict(base)
    if "write_disposition" in override:
        out = {k: v for k, v in out.items() if not k.startswith("x-") or k in _NOT_DISPOSITION}
    for key, value in override.items():
        if key == "schema_contract" and value == {}:
            out.pop(key, None)
        elif key == "columns" and isinstance(out.get("columns"), Mapping):
            cols = {k: dict(v) for k, v in out["columns"].items()}
            for name, column in value.items():
                # a column without a type holds no place yet (dlt's): the override places it
                known = cols.pop(name, {}) if "data_type" not in cols.get(name, {}) else cols[name]
                cols[name] = {**known, **column}
            out["columns"] = cols
        else:
            out[key] = value
    return out


#: a cursor path that is a field of the item itself (not a JSON path): dlt marks its column
_TOP_LEVEL_FIELD = re.compile(r"[^\W\d]\w*\Z")


def cursor_column_hints(cursor_path: str | None) -> StoredHints:
    """The column hint dlt 1.31 gives a cursor on a top-level field (``incremental: true``
    on that column, named as the path is given); none for a JSON path (``$.id``, ``a.b``)."""
    if cursor_path is None or not _TOP_LEVEL_FIELD.match(cursor_path):
        return {}
    return {"columns": {cursor_path: {"name": cursor_path, "incremental": True}}}


#: the hint arguments that may be functions of the item (dlt's dynamic hints), beside a table
#: name that is one
DYNAMIC_HINTS = (
    "write_disposition",
    "primary_key",
    "merge_key",
    "columns",
    "schema_contract",
    "table_format",
    "file_format",
    "references",
)

#: hint functions by argument name: each takes an item and returns the hint for its table
HintFunctions: TypeAlias = dict[str, Callable[[Any], Any]]


def split_hint_functions(given: Mapping[str, Any]) -> tuple[dict[str, Any], HintFunctions]:
    """(the hints given as values, the hints given as functions of the item); a class given
    as ``columns`` (a pydantic model) is a value."""
    values: dict[str, Any] = {}
    functions: HintFunctions = {}
    for name, value in given.items():
        if name in DYNAMIC_HINTS and callable(value) and not isinstance(value, type):
            functions[name] = value
        else:
            values[name] = value
    return values, functions


def check_hint_functions(table_name: object, functions: Mapping[str, object]) -> None:
    """Hint functions need a table name that is one too (dlt's rule: the hints of a table are
    computed from the item that names it)."""
    if functions and not callable(table_name):
        raise InconsistentTableTemplate(table_name, sorted(functions))


def hints_of_item(functions: Mapping[str, Callable[[Any], Any]], item: Any) -> StoredHints:
    """The stored hints the hint functions give for ``item`` (parsed as given values are)."""
    return TableHints(**{name: func(item) for name, func in functions.items()}).stored()


def reject_unsupported(where: str, **given: object) -> None:
    """Raise ``TypeError`` for dlt arguments loadstone cannot honour: never ignore them."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise TypeError(f"{where}({name}=...) is not supported by loadstone")
