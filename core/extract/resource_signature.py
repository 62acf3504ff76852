"""What a resource function's signature says about a call: its arguments by name, whether it
needs any, and which parameter takes an incremental cursor.

Pure functions of a function and the call's arguments (``args`` already hold the item's
place for a transformer), so :class:`~loadstone.extract.resource.Resource` keeps only the
decisions.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from loadstone.exceptions import ParametrizedResourceUnbound
from loadstone.extract.incremental import Incremental
from loadstone.typing import TDataItem

#: a resource function (a generator function, or one returning data)
DataFunction = Callable[..., TDataItem]


def data_name(data: TDataItem) -> str | None:
    """The name a function (or other named data) gives its resource; none for a lambda."""
    name = getattr(data, "__name__", None)
    if isinstance(name, str) and name != "<lambda>":
        return name
    return None


def has_no_required_args(func: DataFunction, skip_first: bool = False) -> bool:
    """Whether ``func`` can be called without arguments (past the item, for a transformer)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return True
    params = list(sig.parameters.values())[1 if skip_first else 0 :]
    return all(
        p.default is not inspect.Parameter.empty
        or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        for p in params
    )


def arguments_by_name(
    func: DataFunction,
    args: tuple[TDataItem, ...],
    kwargs: Mapping[str, TDataItem],
    *,
    defaults: bool,
) -> dict[str, TDataItem]:
    """The call's arguments by parameter name, with the defaults of the others or without."""
    bound = inspect.signature(func).bind_partial(*args, **kwargs)
    if defaults:
        bound.apply_defaults()
    return dict(bound.arguments)


def incremental_argument(
    func: DataFunction, args: tuple[TDataItem, ...], kwargs: Mapping[str, TDataItem]
) -> tuple[str | None, Incremental | None]:
    """The parameter holding an incremental cursor (passed or its default), and the cursor."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None, None
    bound = signature.bind_partial(*args, **kwargs)
    for param in signature.parameters.values():
        value = bound.arguments.get(param.name, param.default)
        if isinstance(value, Incremental):
            return param.name, value
    return None, None


def incremental_parameter(
    func: DataFunction, args: tuple[TDataItem, ...], kwargs: Mapping[str, TDataItem]
) -> tuple[str | None, bool]:
    """(the parameter annotated as an incremental cursor, whether the call passed it).

    dlt hands the cursor of ``apply_hints(incremental=...)`` to that parameter, so a
    resource can push it into its query (``sql_table`` does) even when its default is None.
    """
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None, False
    bound = signature.bind_partial(*args, **kwargs)
    for param in signature.parameters.values():
        if "Incremental" in str(param.annotation) or "incremental" in str(param.annotation):
            return param.name, param.name in bound.arguments
    return None, False


def cursor_template(
    func: DataFunction | None,
    args: tuple[TDataItem, ...],
    kwargs: Mapping[str, TDataItem],
    hinted: Incremental | None,
) -> tuple[str | None, Incremental | None]:
    """(the parameter that takes the run's cursor, the cursor to bind) for a call of
    ``func`` (``None``: data, not a function); ``hinted`` is the cursor ``apply_hints`` or
    the decorator gave. A cursor the call passed wins; then ``hinted``; then the
    parameter's default."""
    if func is None:
        return None, hinted
    param, template = incremental_argument(func, args, kwargs)
    annotated, passed = incremental_parameter(func, args, kwargs)
    if param is None:
        param = annotated
    if hinted is not None and not (passed and param == annotated):
        template = hinted
    return param, template if template is not None else hinted


def require_arguments(
    name: str,
    func: Callable[..., TDataItem],
    args: tuple[TDataItem, ...],
    kwargs: dict[str, TDataItem],
) -> None:
    """A resource used without calling it, whose function has arguments neither given nor
    configured: dlt's ``ParametrizedResourceUnbound``, not the ``TypeError`` of the call."""
    try:
        inspect.signature(func).bind(*args, **kwargs)
    except TypeError:
        raise ParametrizedResourceUnbound(name, getattr(func, "__name__", name)) from None
