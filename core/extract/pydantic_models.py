"""Pydantic models as ``columns=``: dlt's typed data contracts.

``@resource(columns=User)`` (or ``apply_hints(columns=User)``) declares the table's columns
from the model's fields and validates every item through the model at extract, as dlt 1.31
does: the item that goes on is the model's dump (values coerced, defaults filled), and the
schema contract says what a failure does, per entity:

* ``columns`` (a key the model lacks): ``evolve`` keeps it, ``discard_value`` drops the key,
  ``discard_row`` drops the item, ``freeze`` raises :class:`DataValidationError`;
* ``data_type`` (a value the model refuses): ``discard_row`` drops the item, ``freeze``
  raises, ``evolve`` validates nothing (the item goes on as it is, a missing field as
  null); ``discard_value`` is
  refused where it is given, as dlt refuses it.

Without a contract the model's own ``extra`` setting gives the ``columns`` mode (``ignore``:
``discard_value``, ``forbid``: ``freeze``, ``allow``: ``evolve``), ``data_type`` is
``freeze`` and ``tables`` ``evolve``: dlt's contract for a model. Pydantic is an optional
extra (``pip install "loadstone[pydantic]"``): it is imported only when a model is given.
"""

from __future__ import annotations

import datetime as _dt
import enum
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, cast

import attrs

from loadstone.exceptions import DataValidationError, ResourceExtractionError
from loadstone.typing import TDataItem, TSchemaContract

__all__ = [
    "add_model_validator",
    "is_model",
    "model_columns",
    "model_contract",
    "model_validator",
]

#: Python types -> dlt data types of a model's fields (checked in order: bool is an int)
_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "bigint"),
    (float, "double"),
    (Decimal, "decimal"),
    (_dt.datetime, "timestamp"),
    (_dt.date, "date"),
    (_dt.time, "time"),
    (bytes, "binary"),
    (str, "text"),
    (uuid.UUID, "text"),
)
#: a model's ``extra`` setting -> the ``columns`` mode of dlt's contract for it
_EXTRA_MODES = {"ignore": "discard_value", "forbid": "freeze", "allow": "evolve"}
#: the ``columns`` mode -> the ``extra`` setting a validating copy of the model gets
_MODE_EXTRAS = {"discard_value": "ignore", "freeze": "forbid", "discard_row": "forbid"}


def is_model(value: object) -> bool:
    """True for a pydantic model class (pydantic is not imported for anything else)."""
    if not isinstance(value, type) or "pydantic" not in {
        base.__module__.split(".")[0] for base in value.__mro__
    }:
        return False
    from pydantic import BaseModel

    return issubclass(value, BaseModel)


def model_columns(model: type) -> dict[str, dict[str, Any]]:
    """The columns of ``model``'s fields, as dlt declares them: a type for each field that
    has one (``Any`` has none and is left out), nullable when ``None`` is allowed.

    A nested field (a model, list, dict ...) is a ``json`` column, unless the model's
    ``dlt_config`` (dlt's ``DltConfig``) says ``skip_nested_types`` (or its old name
    ``skip_complex_types``): then a nested model's fields are columns ``<field>__<name>``
    (declared by that model's own rules, nullable where the field is), and lists and dicts
    are no columns: their values are normalized into nested tables like any other data."""
    columns: dict[str, dict[str, Any]] = {}
    skip_nested = _skips_nested_types(model)
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]  # a model
        data_type, nullable = _data_type(field.annotation)
        key = field.alias or name
        nested = _nested_model(field.annotation) if skip_nested else None
        if nested is not None:
            for child in model_columns(nested).values():
                path = f"{key}__{child['name']}"
                columns[path] = {**child, "name": path, "nullable": child["nullable"] or nullable}
            continue
        if data_type is None or (skip_nested and data_type == "json"):
            continue
        columns[key] = {"name": key, "data_type": data_type, "nullable": nullable}
    return columns


def _nested_model(annotation: Any) -> type | None:
    """The model a field holds (``Address`` or ``Optional[Address]``), else None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else None
    return annotation if is_model(annotation) else None


def _skips_nested_types(model: type) -> bool:
    config = getattr(model, "dlt_config", None) or {}
    return bool(config.get("skip_nested_types") or config.get("skip_complex_types"))


def _data_type(annotation: Any) -> tuple[str | None, bool]:
    """(dlt data type or None, whether None is allowed) of one field's annotation."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if not args:
            return None, True
        annotation, origin = args[0], typing.get_origin(args[0])
    if origin is typing.Literal:
        annotation = type(typing.get_args(annotation)[0])
    elif origin is not None:  # list[int], dict[str, int] ...
        return "json", nullable
    if annotation is Any or not isinstance(annotation, type):
        return None, nullable
    if issubclass(annotation, enum.Enum):
        members = list(annotation)
        annotation = type(members[0].value) if members else str
    if is_model(annotation) or issubclass(annotation, (list, dict, tuple, set)):
        return "json", nullable
    for python_type, data_type in _TYPES:
        if issubclass(annotation, python_type):
            return data_type, nullable
    return None, nullable


def model_contract(model: type, given: TSchemaContract | None) -> TSchemaContract:
    """The contract a model-typed table gets: the one given, or dlt's for the model."""
    if given is not None:
        return given
    extra = model.model_config.get("extra") or "ignore"  # type: ignore[attr-defined]  # a model
    contract = {"tables": "evolve", "columns": _EXTRA_MODES.get(extra, "discard_value"),
                "data_type": "freeze"}  # fmt: skip
    return cast("TSchemaContract", contract)


def _modes(model: type, contract: TSchemaContract) -> tuple[str, str]:
    """(columns mode, data_type mode) of a contract in any of its forms; an entity it does
    not name has the mode of the model's own contract (dlt's)."""
    if isinstance(contract, str):
        return contract, contract
    default = model_contract(model, None)
    assert isinstance(default, dict)  # made above as a dict
    columns = contract.get("columns") or default["columns"]
    return str(columns), str(contract.get("data_type") or default["data_type"])


def model_validator(
    model: type, contract: TSchemaContract, table_name: str
) -> Callable[[TDataItem], list[TDataItem]] | None:
    """A step checking each item against ``model`` by ``contract`` (None: nothing to check).

    Refuses ``data_type="discard_value"`` here, where the contract is given, as dlt does.
    """
    columns_mode, data_mode = _modes(model, contract)
    if data_mode == "discard_value":
        raise NotImplementedError(
            "data_type='discard_value' cannot discard the value of a model's field that does "
            "not validate: use discard_row or freeze"
        )
    if data_mode == "evolve":
        return _with_missing_fields(model)
    from pydantic import ValidationError

    checked = _with_extra(model, _MODE_EXTRAS.get(columns_mode, "allow"))

    def validate(item: TDataItem) -> list[TDataItem]:
        if not isinstance(item, Mapping):
            return [item]
        try:
            return [checked.model_validate(item).model_dump(by_alias=True)]
        except ValidationError as error:
            first = error.errors()[0]
            entity = "columns" if first["type"] == "extra_forbidden" else "data_type"
            mode = columns_mode if entity == "columns" else data_mode
            if mode == "discard_row":
                return []
            raise DataValidationError(
                schema_name=None,
                table=table_name,
                column=str(tuple(first["loc"])),  # the field's path, as dlt writes it
                entity=entity,
                mode=mode,
                value=first.get("msg"),
                data_item=dict(item),
            ) from None

    return validate


def _with_missing_fields(model: type) -> Callable[[TDataItem], list[TDataItem]]:
    """``data_type="evolve"`` validates nothing: the item goes on as it is, a field of the
    model it lacks as null (no default filled), as dlt 1.31's; a null in a field the model
    requires then fails the package at normalize (``CannotCoerceNullException``)."""
    fields = [
        field.alias or name
        for name, field in model.model_fields.items()  # type: ignore[attr-defined]  # a model
    ]

    def fill(item: TDataItem) -> list[TDataItem]:
        if not isinstance(item, Mapping):
            return [item]
        missing = [name for name in fields if name not in item]
        return [{**item, **dict.fromkeys(missing)} if missing else item]

    return fill


def _with_extra(model: type, extra: str) -> Any:
    """``model`` as it validates under the contract: its own fields, ``extra`` as given (a
    subclass, so the user's model is left as it is)."""
    config = dict(model.model_config)  # type: ignore[attr-defined]  # a model
    if (config.get("extra") or "ignore") == extra:
        return model
    return type(model.__name__, (model,), {"model_config": {**config, "extra": extra}})


class _Validated(typing.Protocol):
    """What a model validator is added to (a resource and its list of step makers)."""

    name: str
    _steps: list[Any]
    _cursor_at: int | None

    @property
    def table_name(self) -> Any: ...

    def add_yield_map(
        self, func: Callable[[TDataItem], TDataItem], insert_at: int | None = None
    ) -> Any: ...


@attrs.frozen
class _ModelStep:
    """The step maker of a model-typed resource's validation: it remembers its model, so a
    later ``apply_hints(schema_contract=...)`` makes the step again under that contract."""

    model: type
    make: Callable[[], Any]

    def __call__(self) -> Any:
        return self.make()


def add_model_validator(
    resource: _Validated, columns: object, schema_contract: TSchemaContract | None
) -> None:
    """Validate ``resource``'s items through ``columns`` when it is a model; else make the
    resource's validating step again under ``schema_contract`` (dlt's: the contract given
    by ``apply_hints`` is the one items are validated by). A resource without a model is
    left as it is."""
    steps = resource._steps
    at = next((i for i, step in enumerate(steps) if isinstance(step, _ModelStep)), None)
    model = columns if is_model(columns) else None
    if model is None and at is not None:
        model = steps[at].model
    if model is None:
        return
    assert isinstance(model, type)  # a model class (is_model)
    table = resource.table_name if isinstance(resource.table_name, str) else resource.name
    check = model_validator(model, model_contract(model, schema_contract), table)
    cursor_at = resource._cursor_at  # where the cursor runs: kept, as the steps around it
    if at is not None:
        del steps[at]
        if cursor_at is not None and at < cursor_at and check is None:
            cursor_at -= 1
    if check is not None:  # made as add_yield_map makes it, then put in the old one's place
        before = list(steps)
        resource.add_yield_map(_as_resource(resource.name, check))
        new_at = next(
            i for i, step in enumerate(steps) if i >= len(before) or step is not before[i]
        )
        made = _ModelStep(model, steps.pop(new_at))
        steps.insert(len(steps) if at is None else at, made)
    resource._cursor_at = cursor_at


def _as_resource(
    name: str, check: Callable[[TDataItem], list[TDataItem]]
) -> Callable[[TDataItem], list[TDataItem]]:
    """``check`` whose contract violations are the resource's extraction errors, as dlt
    reports its validator's (``ResourceExtractionError`` caused by ``DataValidationError``)."""

    def checked(item: TDataItem) -> list[TDataItem]:
        try:
            return check(item)
        except DataValidationError as error:
            raise ResourceExtractionError(name, error) from error

    return checked
