"""dlt's configuration specs: typed credentials a source declares, ``ConnectionStringCredentials``.

A dlt program declares ``dsn: ConnectionStringCredentials = dlt.secrets.value`` or builds
``ConnectionStringCredentials("postgresql://loader:pw@localhost:5432/db")`` and hands it to
``sql_database``; its own specs are dataclasses made with ``@configspec`` over
``BaseConfiguration`` / ``CredentialsConfiguration``. The classes here are those, with dlt
1.31's observable behaviour: a spec is a dataclass and a mutable mapping of its fields (so
``dict(spec)`` and ``sa.URL.create(**credentials)`` work), an unknown key is a ``KeyError``,
a connection string parses into dlt's fields and renders back with the password masked in
``str()`` / ``to_url()`` and in clear in ``to_native_representation()``.

It lies beside ``config`` (the resolver), below everything that takes credentials, and
imports only the exceptions.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, ClassVar, TypeVar, cast, overload
from urllib.parse import parse_qsl, quote, unquote, urlencode

from loadstone.exceptions import InvalidConnectionString

__all__ = [
    "BaseConfiguration",
    "ConnectionStringCredentials",
    "CredentialsConfiguration",
    "configspec",
]

_Spec = TypeVar("_Spec", bound=type)


@overload
def configspec(cls: _Spec, /, *, init: bool = True) -> _Spec: ...
@overload
def configspec(cls: None = None, /, *, init: bool = True) -> Callable[[_Spec], _Spec]: ...
def configspec(cls: _Spec | None = None, /, *, init: bool = True) -> Any:
    """dlt's ``@configspec``: the class as a dataclass whose fields all have a default.

    A field annotated without a value defaults to ``None`` (a value not configured yet), so
    a spec can always be made empty and filled later, as dlt's are.
    """

    def wrap(spec: _Spec) -> _Spec:
        for name in inspect.get_annotations(spec):
            if name.startswith("_") or name in spec.__dict__:
                continue
            setattr(spec, name, None)
        return dataclasses.dataclass(init=init, eq=True, repr=False)(spec)  # type: ignore[return-value]  # dataclass returns the same class

    return wrap if cls is None else wrap(cls)


@configspec
class BaseConfiguration(MutableMapping[str, Any]):
    """A configuration spec: a dataclass read and written as a mapping of its fields."""

    #: the resolver filled every field (dlt's flag; a spec built in code is not resolved)
    __is_resolved__: ClassVar[bool] = False

    def _field_names(self) -> list[str]:
        return [f.name for f in _fields(self) if not f.name.startswith("_")]

    def __getitem__(self, key: str) -> Any:
        if key not in self._field_names():
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self._field_names():
            raise KeyError(key)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        raise KeyError(f"{key}: the fields of a configuration spec cannot be deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(self._field_names())

    def __len__(self) -> int:
        return len(self._field_names())

    def is_resolved(self) -> bool:
        return self.__is_resolved__

    def is_partial(self) -> bool:
        """Some fields are set and some are not (dlt's partial spec)."""
        values = [value for value in self.values() if value is not None]
        return 0 < len(values) < len(self)

    def parse_native_representation(self, native_value: Any) -> None:
        """Fill the fields from the spec's native form (a string); specs with one override."""
        raise ValueError(f"{type(self).__name__} has no native representation")

    def to_native_representation(self) -> Any:
        """The spec's native form (a string); specs with one override."""
        raise ValueError(f"{type(self).__name__} has no native representation")

    def as_dict_nondefault(self) -> dict[str, Any]:
        """The fields whose value differs from the class default."""
        defaults = type(self)()
        return {key: value for key, value in self.items() if value != defaults[key]}

    def copy(self) -> BaseConfiguration:
        copied: BaseConfiguration = dataclasses.replace(cast(Any, self))
        return copied


@configspec
class CredentialsConfiguration(BaseConfiguration):
    """A spec holding credentials (dlt's ``TCredentials``): its native form is what a client
    library takes."""

    def to_native_credentials(self) -> Any:
        return self.to_native_representation()


#: ``driver://user:password@host:port/database?query`` (every part after the driver optional)
_URL = re.compile(
    r"^(?P<drivername>[\w+]+)://"
    r"(?:(?P<username>[^:/@]*)(?::(?P<password>[^@]*))?@)?"
    r"(?:\[(?P<ipv6>[^/?\]]+)\]|(?P<host>[^/:?]+))?"
    r"(?::(?P<port>[^/?]*))?"
    r"(?:/(?P<database>[^?]*))?"
    r"(?:\?(?P<query>.*))?$",
    re.DOTALL,
)


@configspec(init=False)
class ConnectionStringCredentials(CredentialsConfiguration):
    """A database connection string as dlt's fields; ``to_native_representation()`` is the
    string again, ``to_url()`` / ``str()`` show it with the password masked."""

    drivername: str | None = None
    database: str | None = None
    password: str | None = None
    username: str | None = None
    host: str | None = None
    port: int | None = None
    query: dict[str, Any] | None = None

    def __init__(self, connection_string: str | Mapping[str, Any] | None = None) -> None:
        for field in _fields(self):
            setattr(self, field.name, None)
        if isinstance(connection_string, str):
            self.parse_native_representation(connection_string)
        elif connection_string is not None:
            self.update(connection_string)

    def parse_native_representation(self, native_value: Any) -> None:
        match = _URL.match(native_value) if isinstance(native_value, str) else None
        if match is None or not _port_ok(match["port"]):
            raise InvalidConnectionString(type(self).__name__, native_value)
        parts = match.groupdict()
        self.drivername = parts["drivername"]
        self.username = _unquoted(parts["username"])
        self.password = _unquoted(parts["password"])
        self.host = parts["ipv6"] or parts["host"] or None
        self.port = int(parts["port"]) if parts["port"] else None
        self.database = _unquoted(parts["database"])
        self.query = _query_of(parts["query"] or "")

    def get_query(self) -> dict[str, Any]:
        return dict(self.query or {})

    def _render(self, password: str | None, with_query: bool = True) -> str:
        text = f"{self.drivername}://"
        if self.username is not None:
            text += quote(self.username, safe="")
            if password is not None:
                text += ":" + password
            text += "@"
        if self.host is not None:
            text += f"[{self.host}]" if ":" in self.host else self.host
        if self.port is not None:
            text += f":{self.port}"
        if self.database is not None:
            text += "/" + quote(self.database, safe="/:")
        query = self.get_query()
        if with_query and query:
            text += "?" + urlencode(sorted(query.items()), doseq=True)
        return text

    def to_native_representation(self) -> str:
        password = None if self.password is None else quote(self.password, safe="")
        return self._render(password)

    def to_url(self) -> Any:
        """SQLAlchemy's ``URL`` of the credentials (its ``str()`` masks the password), as
        dlt's; without SQLAlchemy installed, that masked string."""
        try:
            from sqlalchemy.engine import URL
        except ImportError:
            return self._render(None if self.password is None else "***")
        query = {k: tuple(v) if isinstance(v, list) else v for k, v in self.get_query().items()}
        return URL.create(
            str(self.drivername),
            username=self.username,
            password=self.password,
            host=self.host,
            port=self.port,
            database=self.database,
            query=query,
        )

    def __str__(self) -> str:
        return self._render(None if self.password is None else "***", with_query=False)


def _fields(spec: BaseConfiguration) -> tuple[dataclasses.Field[Any], ...]:
    """The dataclass fields of a spec (``configspec`` made it a dataclass; mypy cannot see
    through a decorator of our own)."""
    return dataclasses.fields(cast(Any, spec))


def _port_ok(port: str | None) -> bool:
    return not port or port.isdigit()


def _unquoted(part: str | None) -> str | None:
    return None if part is None or part == "" else unquote(part)


def _query_of(text: str) -> dict[str, Any]:
    query: dict[str, Any] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        if key in query:
            previous = query[key]
            query[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            query[key] = value
    return query
