"""Arguments of sources and resources taken from configuration (``secrets.value``).

A source or resource function declares ``api_key=loadstone.secrets.value`` (or
``loadstone.config.value``), or any argument with a plain default (``page_size: int = 100``,
which configuration may replace, as in dlt); when the caller does not pass it, the value is
looked up with the
one configuration resolver (:mod:`loadstone.config`), under the same keys dlt uses, most
specific first::

    sources.<section>.<name>.<arg>, sources.<name>.<arg>, sources.<section>.<arg>,
    sources.<arg>, <arg>

where ``<section>`` is the function's module (the script's file name for ``__main__``) and
``<name>`` the source or resource name. A value found nowhere is an error naming the keys
tried, raised when the function is called, before any data is read.
"""

from __future__ import annotations

import inspect
import sys
import typing
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from loadstone import config
from loadstone.config_specs import BaseConfiguration
from loadstone.config_values import coerce
from loadstone.exceptions import ConfigFieldMissingException, ConfigValueCannotBeCoercedException


class _Secrets:
    """``loadstone.secrets``: ``.value`` marks an argument; ``secrets["a.b"]`` reads a value,
    ``secrets["a.b"] = v`` sets one, ``"a.b" in secrets`` tests one (dlt's accessor: the
    providers of ``loadstone.config`` but the ``config.toml`` files, so a value set through
    either is seen by both)."""

    value: Any = config.value  # Any: it stands in for an argument of any declared type

    def __getitem__(self, key: str) -> Any:
        return config.item(key, secret=True)

    def __setitem__(self, key: str, new_value: object) -> None:
        config.assign(key, new_value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and config.get(key, secret=True) is not None

    def get(self, key: str, default: object = None, *, expected_type: object = None) -> Any:
        """The value at ``key`` or ``default`` (a type there is dlt's ``expected_type``)."""
        return config.get(key, default, expected_type=expected_type, secret=True)

    def __repr__(self) -> str:
        return "loadstone.secrets"


_NOTHING = object()
secrets = _Secrets()

#: the ``spec=`` class a decorator was given, per function: its attributes are the defaults
#: of the configured arguments found nowhere in configuration (dlt's configspec defaults)
_SPECS: weakref.WeakKeyDictionary[Callable[..., Any], type] = weakref.WeakKeyDictionary()


def register_spec(func: object, spec: object) -> None:
    """``spec=`` of ``@resource`` / ``@transformer`` / ``@source``: a class whose attributes
    are defaults for ``func``'s ``secrets.value`` / ``config.value`` arguments (a dlt
    ``@configspec`` class, or a dataclass of the same fields)."""
    if spec is None:
        return
    if not inspect.isclass(spec):
        raise TypeError(
            f"spec= takes a class whose attributes are the defaults of configured arguments, "
            f"got {spec!r}"
        )
    if callable(func):
        _SPECS[func] = spec


def is_placeholder(value: Any) -> bool:
    return value is config.value


def section_of(func: Any) -> str | None:
    """The config section of a function: its module's last name (the script's for __main__)."""
    module_name = getattr(func, "__module__", None)
    if module_name == "__main__":
        path = getattr(sys.modules.get("__main__"), "__file__", None)
        return Path(path).stem if path else None
    return module_name.rsplit(".", 1)[-1] if module_name else None


def candidate_keys(section: str | None, name: str, arg: str) -> list[str]:
    keys = [f"sources.{section}.{name}.{arg}"] if section else []
    keys.append(f"sources.{name}.{arg}")
    if section:
        keys.append(f"sources.{section}.{arg}")
    keys += [f"sources.{arg}", arg]
    return keys


def inject(
    func: Callable[..., Any],
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    section: str | None = None,
) -> dict[str, Any]:
    """``kwargs`` completed with configured values for placeholder arguments not passed,
    looked up under ``sources.<section>.<name>``: the decorator's ``section=`` when given
    (as dlt 1.31 reads it), else the function's module."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return kwargs
    bound = signature.bind_partial(*args, **kwargs)
    section = section or section_of(func)
    spec = _SPECS.get(func)
    out = dict(kwargs)
    missing: dict[str, list[str]] = {}
    hints = _type_hints(func)  # evaluated once: the readers walk them
    specs, documents = _spec_parameters(hints), _document_parameters(hints)
    plain = _plain_parameters(hints)
    for param in signature.parameters.values():
        spec_class = specs.get(param.name)
        if param.name in bound.arguments:
            if spec_class is not None and param.name in out:  # a string or dict given in code
                out[param.name] = as_spec(spec_class, out[param.name])
            continue
        if not is_placeholder(param.default):
            if _configurable_default(param):  # dlt configures every argument with a default
                keys = candidate_keys(section, name, param.name)
                found = _as_document(
                    config.resolve(*keys, default=_NOTHING), documents.get(param.name)
                )
                if found is not _NOTHING and _fits(found, param.default):
                    out[param.name] = _as_declared(found, param.default)
            continue
        keys = candidate_keys(section, name, param.name)
        value = _configured(keys, plain.get(param.name))
        if value is _NOTHING and spec_class is not None:
            value = _spec_fields(spec_class, section, name, param.name)
        if value is _NOTHING and spec is not None:
            value = getattr(spec, param.name, _NOTHING)
            value = _NOTHING if value is None or is_placeholder(value) else value
        if value is _NOTHING:
            missing[param.name] = keys
        else:
            out[param.name] = value if spec_class is None else as_spec(spec_class, value)
    if missing:
        spec_name = ConfigFieldMissingException(f"{func.__name__}()", {}).spec_name
        raise ConfigFieldMissingException(f"{name}()", missing, spec_name)
    return out


#: the defaults of arguments configuration may replace, as dlt does (plain values; not an
#: incremental, a callable or another object with a meaning of its own)
_PLAIN_DEFAULTS = (type(None), bool, int, float, str, list, dict, tuple)


def _configurable_default(param: inspect.Parameter) -> bool:
    """An argument with a plain default, passed by name or position (not ``*args``)."""
    return (
        param.default is not inspect.Parameter.empty
        and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
        and type(param.default) in _PLAIN_DEFAULTS
    )


def _fits(value: object, default: object) -> bool:
    """A table of settings found at the argument's key (``[schema]`` for ``schema=None``) is
    another setting's section, not the argument's value, unless the default is a dict."""
    return not isinstance(value, Mapping) or isinstance(default, dict)


def _as_declared(value: object, default: object) -> object:
    """A configured value in the type of a text default (``SOURCES__X__REGION=123`` is the
    text ``"123"`` where the default is ``"us"``), else as configuration read it."""
    if isinstance(default, str) and isinstance(value, (int, float, bool)):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return value


def _type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's evaluated annotations; none when one does not evaluate."""
    try:
        return typing.get_type_hints(func)
    except Exception:  # an annotation that does not evaluate: nothing is read from them
        return {}


def _spec_parameters(hints: dict[str, Any]) -> dict[str, type[BaseConfiguration]]:
    """The arguments annotated with a configuration spec (alone, or first in a union), as
    dlt hands them a spec (``credentials: ConnectionStringCredentials = secrets.value``)."""
    found: dict[str, type[BaseConfiguration]] = {}
    for name, hint in hints.items():
        for candidate in (hint, *typing.get_args(hint)):
            if isinstance(candidate, type) and issubclass(candidate, BaseConfiguration):
                found[name] = candidate
                break
    return found


def _document_parameters(hints: dict[str, Any]) -> dict[str, type]:
    """The arguments annotated as a dict or a list (``dict``, ``Dict[str, int]``, ``list``),
    whose configured JSON text dlt reads as the document (``SOURCES__X__IDS='[1, 2]'``)."""
    found: dict[str, type] = {}
    for name, hint in hints.items():
        kind = typing.get_origin(hint) or hint
        if kind in (dict, list):
            found[name] = kind
    return found


def _plain_parameters(hints: dict[str, Any]) -> dict[str, type]:
    """The arguments annotated with a plain type (``int``, ``Optional[str]``, ``List[int]``,
    ``Dict[str, int]`` ...): dlt coerces a configured value to it."""
    found: dict[str, type] = {}
    for name, hint in hints.items():
        for candidate in (hint, *typing.get_args(hint)):
            kind = typing.get_origin(candidate) or candidate
            if kind in _PLAIN_TYPES:
                found[name] = kind
                break
    return found


_PLAIN_TYPES = (str, int, float, bool, list, dict)


def _configured(keys: list[str], kind: type | None) -> object:
    """The value configured at the first of ``keys`` for a ``config.value`` /
    ``secrets.value`` argument, as dlt 1.31 injects it: as configured (an environment value
    is its text) when the argument has no plain type, else coerced to that type
    (``ConfigValueCannotBeCoercedException`` when it does not read as one)."""
    found = config.get(keys)
    if found is None:
        return _NOTHING
    if kind is None:
        return found
    try:
        return coerce(found, kind)
    except ValueError:
        raise ConfigValueCannotBeCoercedException(keys[0], found, kind) from None


def _as_document(value: object, kind: type | None) -> object:
    """JSON text configured for a dict or list argument, as the document it holds (the
    coercion ``config.get(key, list)`` uses); other text as it is."""
    if kind is None or not isinstance(value, str):
        return value
    try:
        return coerce(value, kind)
    except ValueError:
        return value


def as_spec(spec_class: type[BaseConfiguration], value: object) -> object:
    """A configured or given string (the spec's native form) or dict as ``spec_class``;
    anything else (an engine, a spec already) as it is."""
    if isinstance(value, BaseConfiguration) or not isinstance(value, (str, Mapping)):
        return value
    spec = spec_class()
    if isinstance(value, str):
        spec.parse_native_representation(value)
        return spec
    for key, item in value.items():
        if key in spec:
            spec[key] = item
    return spec


def _spec_fields(
    spec_class: type[BaseConfiguration], section: str | None, name: str, arg: str
) -> object:
    """A spec's fields configured one by one (``SOURCES__X__CREDENTIALS__USERNAME`` ...) as
    a dict, or nothing when none of them is configured."""
    fields: dict[str, object] = {}
    for field in spec_class():
        value = config.resolve(*candidate_keys(section, name, f"{arg}.{field}"), default=_NOTHING)
        if value is not _NOTHING:
            fields[field] = value
    return fields or _NOTHING
