"""The one configuration resolver: explicit argument, environment, project files, user files.

Every setting of loadstone is a *key path* such as ``schema.naming`` or
``sources.github.schema.naming``, and is looked up in the same providers, highest first:

1. an explicit argument given by the caller (code always wins over configuration);
2. the environment: the path upper-cased and joined by ``__``
   (``SCHEMA__NAMING``, ``SOURCES__GITHUB__SCHEMA__NAMING``, ``SPARK__MASTER``);
3. the project folder ``./.loadstone/``: ``secrets.toml`` then ``config.toml``; then a dlt
   project's ``./.dlt/`` (same files), so a ported project keeps its settings;
4. the user folder ``$LOADSTONE_HOME`` (default ``~/.loadstone``): ``secrets.toml`` then
   ``config.toml``;
5. the default supplied by the caller.

A lookup may name several candidate paths, most specific first (the naming of one source
before the naming of all schemas). Providers are the outer loop: within a provider the
specific path beats the general one, and a general path in a higher provider beats a
specific one in a lower provider. So ``SCHEMA__NAMING`` in the environment beats
``[sources.github.schema] naming`` in a file, as the user who exported the variable expects.

New features add *keys* (documented in ``docs/configuration.md``), never new resolvers, so a
user learns one set of rules. Reading is cheap: parsed files are cached by path and
modification time, and the environment is read on every lookup (tests and users change it).
Within :func:`one_reading` (one ``pipeline.run()``) each file is looked at once and the
folders are found once: a run makes dozens of lookups, each of which would otherwise ``stat``
six files. A file edited during a run takes effect at the next run; the environment is still
read on every lookup.

Environment values are parsed as TOML literals when they are one (``true``, ``42``, ``1.5``,
``[1, 2]``, ``"quoted"``), otherwise they are taken as plain strings (``sql_ci_v1``,
``local[2]``). TOML dates and times are kept as the string the user wrote. (dlt's accessor
below reads them as dlt does: :mod:`loadstone.config_values`.)

``loadstone.config`` is also dlt's accessor: ``config["sources.x.y"]`` reads a key (a missing
one raises ``ConfigFieldMissingException``, a ``KeyError``), ``config["a.b"] = 1`` sets one for
the rest of the process (read below the environment, above every file, as dlt does) and
``"a.b" in config`` tests one; ``loadstone.secrets`` reads and writes the same values (but
no ``config.toml``).

Long because: the resolver, its typed accessors, Spark's option names and dlt's accessor
(item access, values set in code) share one provider chain, read in one place.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import os
import re
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Final, NewType

import attrs

from loadstone.config_values import auto_cast, coerce
from loadstone.exceptions import (
    ConfigFieldMissingException,
    ConfigFileError,
    ConfigValueCannotBeCoercedException,
    ConfigValueError,
)
from loadstone.spark_option_names import CAMEL_CASE_BY_LOWER

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

#: separator of key path segments in environment variable names
ENV_SEPARATOR = "__"
#: environment variable naming the user folder
HOME_ENV = "LOADSTONE_HOME"
#: the user folder when ``LOADSTONE_HOME`` is not set
DEFAULT_HOME = Path("~/.loadstone")
#: the project folder, relative to the current working directory
PROJECT_DIR = ".loadstone"
#: the project folder of a dlt project, read after ``.loadstone/`` (which wins)
DLT_PROJECT_DIR = ".dlt"
CONFIG_FILE = "config.toml"
SECRETS_FILE = "secrets.toml"
#: naming convention used when nothing is configured and the destination prefers none
DEFAULT_NAMING = "snake_case"

#: a key path: dotted text ("schema.naming") or its segments (("schema", "naming"))
KeyPath = str | Sequence[str]


class _Missing:
    """Marker for "this provider has no value for this path" (None is a valid value)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


# --- files -----------------------------------------------------------------------------------

_TOML_POSITION = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)\s*$")

#: path -> ((mtime_ns, size), parsed document)
_file_cache: dict[Path, tuple[tuple[int, int], dict[str, object]]] = {}


def read_toml_file(path: Path) -> dict[str, object]:
    """Return the parsed TOML document at ``path``; ``{}`` when there is no such file.

    Parsed documents are cached by path, modification time and size, so a resolver that
    consults the files on every lookup costs one ``stat`` per file (none, within
    :func:`one_reading`, after the first).
    """
    reading = _reading.get()
    if reading is not None:
        if path not in reading.documents:
            reading.documents[path] = _read_toml_file(path)
        return reading.documents[path]
    return _read_toml_file(path)


def _read_toml_file(path: Path) -> dict[str, object]:
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        _file_cache.pop(path, None)
        return {}
    signature = (stat.st_mtime_ns, stat.st_size)
    cached = _file_cache.get(path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    text = path.read_text(encoding="utf-8")
    try:
        document: dict[str, object] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _file_error(path, text, error) from None
    _file_cache[path] = (signature, document)
    return document


def _file_error(path: Path, text: str, error: Exception) -> ConfigFileError:
    message = str(error)
    match = _TOML_POSITION.search(message)
    if match is None:
        return ConfigFileError(path, None, None, message)
    reason = message[: match.start()]
    if match.group(1) is None:  # "at end of document"
        line = max(1, len(text.splitlines()))
        return ConfigFileError(path, line, None, f"{reason} (at end of document)")
    return ConfigFileError(path, int(match.group(1)), int(match.group(2)), reason)


def clear_cache() -> None:
    """Forget parsed files (they are re-read anyway when their mtime or size changes)."""
    _file_cache.clear()
    reading = _reading.get()
    if reading is not None:
        reading.documents.clear()
        reading.found.clear()
        reading.providers = None


@attrs.define
class _Reading:
    """What one reading of the configuration has looked at: documents and folders."""

    documents: dict[Path, dict[str, object]] = attrs.Factory(dict)
    #: candidate paths -> the files' value and origin (None: in no file)
    found: dict[tuple[tuple[str, ...], ...], tuple[object, str] | None] = attrs.Factory(dict)
    providers: tuple[EnvironProvider | AssignedProvider | TomlFolderProvider, ...] | None = None


#: the reading in progress in this context (None: every lookup looks at the files again)
_reading: contextvars.ContextVar[_Reading | None] = contextvars.ContextVar(
    "loadstone_config_reading", default=None
)


@contextlib.contextmanager
def one_reading() -> Iterator[None]:
    """Within: the files and folders of the configuration are read once (see module docs).

    Used around one ``pipeline.run()`` (also as a decorator): settings changed between two
    runs (files, folders, the working directory) are seen by the second; the environment
    and values set in code are read on every lookup, as outside. Nested readings share the
    outer one.
    """
    if _reading.get() is not None:
        yield
        return
    token = _reading.set(_Reading())
    try:
        yield
    finally:
        _reading.reset(token)


# --- providers -------------------------------------------------------------------------------


def parse_env_value(raw: str) -> object:
    """Read an environment value as a TOML literal when it is one, else as plain text."""
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw
    if isinstance(value, datetime.date | datetime.time):
        return raw
    return value


def env_name(segments: Sequence[str]) -> str:
    """The environment variable of a key path: ``("schema", "naming")`` -> ``SCHEMA__NAMING``."""
    return ENV_SEPARATOR.join(segment.upper() for segment in segments)


@attrs.frozen
class EnvironProvider:
    """Values from environment variables ``SECTION__SUB__KEY``."""

    name: str = "environment"
    #: read on every lookup, also within :func:`one_reading`
    live: ClassVar[bool] = True

    def lookup(self, segments: Sequence[str]) -> object:
        return self.find(segments)[0]

    def find(self, segments: Sequence[str]) -> tuple[object, str]:
        """The value at ``segments`` (or MISSING) and where it was found."""
        name = env_name(segments)
        raw = os.environ.get(name)
        return (MISSING if raw is None else parse_env_value(raw)), f"environment variable {name}"

    def section(self, segments: Sequence[str]) -> dict[str, object]:
        """Every variable below ``segments``, keyed by its remaining segments (as written)."""
        prefix = env_name(segments) + ENV_SEPARATOR
        return {
            key[len(prefix) :]: parse_env_value(raw)
            for key, raw in os.environ.items()
            if key.startswith(prefix) and len(key) > len(prefix)
        }


@attrs.frozen
class TomlFolderProvider:
    """Values from ``secrets.toml`` and ``config.toml`` in one folder (secrets first)."""

    name: str
    folder: Path
    #: read once per :func:`one_reading` (files come after every live provider)
    live: ClassVar[bool] = False

    @property
    def files(self) -> tuple[Path, Path]:
        return (self.folder / SECRETS_FILE, self.folder / CONFIG_FILE)

    def documents(self) -> Iterator[dict[str, object]]:
        for path in self.files:
            document = read_toml_file(path)
            if document:
                yield document

    def lookup(self, segments: Sequence[str]) -> object:
        return self.find(segments)[0]

    def find(self, segments: Sequence[str]) -> tuple[object, str]:
        """The value at ``segments`` (or MISSING) and the file it was found in."""
        for path in self.files:
            value = _dig(read_toml_file(path), tuple(segments))
            if value is not MISSING:
                return value, f"{'.'.join(segments)} in {path}"
        return MISSING, str(self.folder)

    def section(self, segments: Sequence[str]) -> dict[str, object]:
        """The table at ``segments``, merged over both files (secrets win)."""
        merged: dict[str, object] = {}
        for document in reversed(list(self.documents())):
            table = _dig(document, tuple(segments))
            if isinstance(table, Mapping):
                merged.update(table)
        return merged


def _dig(table: object, segments: tuple[str, ...]) -> object:
    """Walk nested tables; a quoted dotted key (``"sql.shuffle.partitions" = 4``) also matches."""
    if not segments:
        return table
    if not isinstance(table, Mapping):
        return MISSING
    if segments[0] in table:
        found = _dig(table[segments[0]], segments[1:])
        if found is not MISSING:
            return found
    for end in range(len(segments), 1, -1):
        dotted = ".".join(segments[:end])
        if dotted in table:
            found = _dig(table[dotted], segments[end:])
            if found is not MISSING:
                return found
    return MISSING


def home_dir() -> Path:
    """The user folder: ``$LOADSTONE_HOME`` or ``~/.loadstone``."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else DEFAULT_HOME.expanduser()


def project_dir() -> Path:
    """The project folder: ``./.loadstone`` in the current working directory."""
    return Path.cwd() / PROJECT_DIR


def providers() -> tuple[EnvironProvider | AssignedProvider | TomlFolderProvider, ...]:
    """The providers in precedence order, highest first (folders as of this call, or as of
    the first call of the :func:`one_reading` in progress)."""
    reading = _reading.get()
    if reading is None:
        return _providers()
    if reading.providers is None:
        reading.providers = _providers()
    return reading.providers


def _providers() -> tuple[EnvironProvider | AssignedProvider | TomlFolderProvider, ...]:
    return (
        EnvironProvider(),
        AssignedProvider(),  # values set in code: below the environment, as in dlt
        TomlFolderProvider("project", project_dir()),
        # a ported dlt project keeps its settings in ./.dlt/: read, below ./.loadstone/
        TomlFolderProvider("project-dlt", Path.cwd() / DLT_PROJECT_DIR),
        TomlFolderProvider("home", home_dir()),
    )


# --- resolving -------------------------------------------------------------------------------


def _segments(path: KeyPath) -> tuple[str, ...]:
    if isinstance(path, str):
        return tuple(path.split("."))
    return tuple(path)


@attrs.frozen
class Found:
    """A resolved value and where it came from, so errors can point at the setting."""

    value: Any
    origin: str


def locate(*candidates: KeyPath, explicit: object = None, default: object = None) -> Found:
    """Like :func:`resolve`, and also says where the value came from."""
    if explicit is not None:
        return Found(explicit, "explicit argument")
    paths = tuple(_segments(candidate) for candidate in candidates)
    chain = providers()
    reading = _reading.get()
    if reading is None:
        found = _first_found(chain, paths)
    else:  # the live providers come first; the files' answer is kept for the reading
        live = [provider for provider in chain if provider.live]
        found = _first_found(live, paths)
        if found is None:
            if paths not in reading.found:
                reading.found[paths] = _first_found(chain[len(live) :], paths)
            found = reading.found[paths]
    return Found(default, "default") if found is None else Found(*found)


def _first_found(
    chain: Sequence[EnvironProvider | AssignedProvider | TomlFolderProvider],
    paths: tuple[tuple[str, ...], ...],
) -> tuple[object, str] | None:
    """The first value of ``paths`` in ``chain`` (providers outer, paths inner) and its origin."""
    for provider in chain:
        for path in paths:
            value, origin = provider.find(path)
            if value is not MISSING:
                return value, origin
    return None


def resolve(*candidates: KeyPath, explicit: object = None, default: object = None) -> Any:
    """Return the value of the first candidate key path found, in precedence order.

    ``explicit`` (when not None) wins over everything. Then each provider in turn is asked
    for each candidate, most specific candidate first; the first value found is returned.
    ``default`` when no provider has any candidate. A candidate is dotted text
    (``"schema.naming"``) or a sequence of segments (use segments when a part, such as a
    source name, may itself contain a dot).
    """
    return locate(*candidates, explicit=explicit, default=default).value


def resolve_fields(path: KeyPath, fields: Sequence[str]) -> tuple[object, dict[str, object]]:
    """A value configured as a whole at ``path`` (a connection string, a table of fields),
    or None, and the ``fields`` configured alone below it (``path.<field>``), ranked as dlt
    ranks them: a field counts only from a provider at or above the one that gave the whole.

    So ``DESTINATION__POSTGRES__CREDENTIALS`` (a connection string in the environment)
    replaces every field of ``[destination.postgres.credentials]`` in ``secrets.toml``, and
    ``DESTINATION__POSTGRES__CREDENTIALS__PASSWORD`` still overrides that table's password.
    """
    segments = _segments(path)
    chain = providers()
    whole, rank = None, len(chain)
    for index, provider in enumerate(chain):
        value, _ = provider.find(segments)
        if value is not MISSING:
            whole, rank = value, index
            break
    found: dict[str, object] = {}
    for field in fields:
        hit = _first_found(chain[: rank + 1], ((*segments, field),))
        if hit is not None:
            found[field] = hit[0]
    return whole, found


def get(
    key_path: str | Sequence[str],
    default: object = None,
    *,
    explicit: object = None,
    expected_type: object = None,
    secret: bool = False,
) -> Any:
    """dlt's ``config.get(key)``: the value of one dotted key path (or the first of several
    candidates) as configured, an environment value as its text, else ``default``.

    A type as the second argument (or ``expected_type``) is dlt's: the value coerced to it
    (:mod:`loadstone.config_values`; ``ConfigValueCannotBeCoercedException`` when it cannot),
    a missing key gives ``None``. ``secret``: ``dlt.secrets``, which reads no ``config.toml``.
    Loadstone's own settings read through :func:`resolve` and the typed accessors below.
    """
    if isinstance(default, type):
        expected_type, default = default, None
    value = explicit if explicit is not None else _as_configured(key_path, secret)
    if value is MISSING or value is None:
        return default
    if expected_type is None:
        return value
    try:
        return coerce(value, expected_type)
    except ValueError:
        raise ConfigValueCannotBeCoercedException(
            _first_key(key_path), value, expected_type
        ) from None


def _as_configured(key_path: str | Sequence[str], secret: bool) -> object:
    """The first value of the candidates as its provider holds it (text from the
    environment); only ``secrets.toml`` of the folders when ``secret``."""
    paths = [_segments(c) for c in ([key_path] if isinstance(key_path, str) else key_path)]
    for provider in providers():
        for path in paths:
            if isinstance(provider, EnvironProvider):
                value: object = os.environ.get(env_name(path), MISSING)
            elif secret and isinstance(provider, TomlFolderProvider):
                value = _dig(read_toml_file(provider.folder / SECRETS_FILE), path)
            else:
                value = provider.find(path)[0]
            if value is not MISSING:
                return value
    return MISSING


def resolve_naming(
    source_name: str | None = None,
    explicit: str | None = None,
    destination_preferred: str | None = None,
) -> str:
    """The naming convention to use: a short plugin name or a fully qualified module name.

    Highest first: ``explicit``; env ``SOURCES__<SOURCE>__SCHEMA__NAMING``; env
    ``SCHEMA__NAMING``; ``[sources.<source>.schema] naming`` then ``[schema] naming`` in
    ``./.loadstone``; the same in ``$LOADSTONE_HOME``; the destination's preferred naming;
    ``snake_case``. Configuration overrides the destination's preference, as in dlt.
    """
    return str(locate_naming(source_name, explicit, destination_preferred).value)


def locate_naming(
    source_name: str | None = None,
    explicit: str | None = None,
    destination_preferred: str | None = None,
) -> Found:
    """:func:`resolve_naming` with the origin of the name (for error messages)."""
    candidates: list[tuple[str, ...]] = []
    if source_name:
        candidates.append(("sources", source_name, "schema", "naming"))
    candidates.append(("schema", "naming"))
    if explicit is None and destination_preferred:
        found = locate(*candidates, default=destination_preferred)
        if found.origin == "default":
            found = Found(destination_preferred, "the destination's preferred naming")
    else:
        found = locate(*candidates, explicit=explicit, default=DEFAULT_NAMING)
    return Found(str(found.value).strip(), found.origin)


# --- spark -----------------------------------------------------------------------------------


def _spark_key(parts: Sequence[str]) -> str:
    """``("sql", "shuffle", "partitions")`` -> ``spark.sql.shuffle.partitions``."""
    key = ".".join(parts)
    return key if key.startswith("spark.") else f"spark.{key}"


def _spark_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _flatten(
    table: Mapping[str, object], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, object]]:
    for key, value in table.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, (*prefix, key))
        else:
            yield _spark_key((*prefix, key)), value


def _env_spark_key(name: str) -> str:
    """``SQL__SHUFFLE__PARTITIONS`` -> ``spark.sql.shuffle.partitions``.

    Upper-case segments are lower-cased; a segment written in mixed case is kept as written
    (``SPARK__SQL__SESSION__timeZone``); well-known camelCase options are restored.
    """
    parts = [part.lower() if part.isupper() else part for part in name.split(ENV_SEPARATOR)]
    key = _spark_key(parts)
    return CAMEL_CASE_BY_LOWER.get(key, key) if key == key.lower() else key


def spark_options() -> dict[str, str]:
    """Every configured Spark option (``spark.*`` key -> text value), env over files.

    ``[spark] master = "local[2]"`` gives ``spark.master``; nested tables, dotted keys and
    quoted dotted keys (``"spark.sql.shuffle.partitions" = 4``) all name the full option; env
    ``SPARK__SQL__SHUFFLE__PARTITIONS=4`` gives ``spark.sql.shuffle.partitions``.
    """
    options: dict[str, str] = {}
    for provider in reversed(providers()):
        section = provider.section(("spark",))
        if isinstance(provider, EnvironProvider):
            items: Iterator[tuple[str, object]] = (
                (_env_spark_key(name), value) for name, value in section.items()
            )
        else:
            items = _flatten(section)
        options.update((key, _spark_value(value)) for key, value in items)
    return options


# --- typed accessors -------------------------------------------------------------------------


_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})
_SIZE_UNITS: Final[Mapping[str, int]] = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "tib": 1024**4,
}
_SIZE: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def _first_key(key_path: str | Sequence[str]) -> str:
    return key_path if isinstance(key_path, str) else str(next(iter(key_path)))


def _locate(key_path: str | Sequence[str], default: object, explicit: object) -> Found:
    candidates = [key_path] if isinstance(key_path, str) else list(key_path)
    return locate(*candidates, explicit=explicit, default=default)


def parse_bool(value: object, key: str, origin: str) -> bool:
    """``true``/``false`` in any case, ``1``/``0``, ``yes``/``no``, ``on``/``off``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigValueError(key, value, origin, "true or false")


def get_bool(key_path: str | Sequence[str], default: bool, *, explicit: object = None) -> bool:
    """A boolean setting: ``LOAD__KEEP_COMPLETED_PACKAGES=False`` reads as false."""
    found = _locate(key_path, default, explicit)
    return parse_bool(found.value, _first_key(key_path), found.origin)


def get_int(
    key_path: str | Sequence[str],
    default: int,
    *,
    minimum: int | None = None,
    explicit: object = None,
) -> int:
    """An integer setting (text of digits accepted), at least ``minimum`` when given."""
    found = _locate(key_path, default, explicit)
    key, value = _first_key(key_path), found.value
    expected = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, bool):
        raise ConfigValueError(key, value, found.origin, expected)
    try:
        number = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ConfigValueError(key, value, found.origin, expected) from None
    if minimum is not None and number < minimum:
        raise ConfigValueError(key, value, found.origin, expected)
    return number


def get_float(
    key_path: str | Sequence[str],
    default: float,
    *,
    minimum: float | None = None,
    explicit: object = None,
    expected: str = "a number",
) -> float:
    """A number setting (text of a number accepted), at least ``minimum`` when given."""
    found = _locate(key_path, default, explicit)
    key, value = _first_key(key_path), found.value
    if isinstance(value, bool):
        raise ConfigValueError(key, value, found.origin, expected)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigValueError(key, value, found.origin, expected) from None
    if minimum is not None and number < minimum:
        raise ConfigValueError(key, value, found.origin, f"{expected} >= {minimum:g}")
    return number


def parse_size(value: object, key: str, origin: str) -> int:
    """Bytes from ``1073741824``, ``"512MB"``, ``"1 GiB"`` (decimal and binary units)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE.match(str(value)) if isinstance(value, str | float) else None
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _SIZE_UNITS:
        raise ConfigValueError(key, value, origin, "a size in bytes (e.g. 1073741824 or '1 GiB')")
    return int(float(match.group(1)) * _SIZE_UNITS[unit])


def get_size(key_path: str | Sequence[str], default: int, *, explicit: object = None) -> int:
    """A size setting in bytes."""
    found = _locate(key_path, default, explicit)
    return parse_size(found.value, _first_key(key_path), found.origin)


def get_choice(
    key_path: str | Sequence[str], choices: Sequence[str], default: str, *, explicit: object = None
) -> str:
    """A setting that is one of ``choices`` (compared as written)."""
    found = _locate(key_path, default, explicit)
    value = found.value
    if not isinstance(value, str) or value not in choices:
        raise ConfigValueError(
            _first_key(key_path), value, found.origin, "one of " + ", ".join(choices)
        )
    return value


def get_str(key_path: str | Sequence[str], default: str, *, explicit: object = None) -> str:
    """A text setting (numbers given for it are read as their text)."""
    found = _locate(key_path, default, explicit)
    value = found.value
    if isinstance(value, Mapping | list | bool):
        raise ConfigValueError(_first_key(key_path), value, found.origin, "text")
    return str(value)


# --- placeholders for injected arguments ---------------------------------------------------


class _ConfigValue:
    """The default of a source/resource argument that configuration supplies (``config.value``,
    ``secrets.value``); see :mod:`loadstone.extract.injection`."""

    def __repr__(self) -> str:
        return "ConfigValue(loadstone.config.value) awaiting injection"


#: ``def source(api_key=loadstone.secrets.value)``: the value comes from configuration
value: Any = _ConfigValue()  # Any: it stands in for an argument of any declared type

#: dlt's marker of a secret argument type: ``def source(api_key: TSecretValue = secrets.value)``;
#: ``TSecretValue("x")`` is ``"x"``, as in dlt
SecretSentinel = NewType("SecretSentinel", object)
TSecretAny = NewType("TSecretAny", object)
TSecretValue = Annotated[TSecretAny, SecretSentinel]
#: the same for a text secret (``TSecretStrValue``)
TSecretStrValue = Annotated[str, SecretSentinel]


# --- values set in code: ``loadstone.config["sources.x.y"] = 1`` -----------------------------

#: values assigned through item access, nested by key path segment; read below the
#: environment and above every file, where dlt reads them
_assigned: dict[str, object] = {}


@attrs.frozen
class AssignedProvider:
    """Values assigned in code (``config["a.b"] = 1``), for this process only."""

    name: str = "assigned"
    #: read on every lookup, also within :func:`one_reading`
    live: ClassVar[bool] = True

    def find(self, segments: Sequence[str]) -> tuple[object, str]:
        """The value at ``segments`` (or MISSING), assigned by the program."""
        return _dig(_assigned, tuple(segments)), f"{'.'.join(segments)} set in code"

    def section(self, segments: Sequence[str]) -> dict[str, object]:
        table = _dig(_assigned, tuple(segments))
        return dict(table) if isinstance(table, Mapping) else {}


def assign(key_path: str, new_value: object) -> None:
    """Set ``key_path`` for the rest of the process (what ``config[key] = value`` does)."""
    *parents, last = _segments(key_path)
    table = _assigned
    for segment in parents:
        child = table.get(segment)
        if not isinstance(child, dict):
            child = table[segment] = {}
        table = child
    table[last] = new_value


def clear_assigned() -> None:
    """Forget every value set in code (tests)."""
    _assigned.clear()


# --- dlt's item access: ``loadstone.config["sources.x.y"]`` -------------------------------------


def item(key_path: str, *, secret: bool = False) -> Any:
    """The value at ``key_path`` as dlt's ``config[key]`` gives it (text cast by
    :func:`loadstone.config_values.auto_cast`); ``ConfigFieldMissingException`` (a
    ``KeyError``) when no provider has it or it is ``None``, as dlt's ``config[key]`` raises."""
    found = get(key_path, secret=secret)
    if found is None:
        raise ConfigFieldMissingException(f"config[{key_path!r}]", {key_path: [key_path]})
    return auto_cast(found)


class _ConfigModule(types.ModuleType):
    """This module, readable and writable by key as ``dlt.config`` is:
    ``config["sources.shop.api_url"]``, ``config["a.b"] = 1``, ``"a.b" in config``."""

    def __getitem__(self, key: str) -> Any:
        return item(key)

    def __setitem__(self, key: str, new_value: object) -> None:
        assign(key, new_value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and get(key) is not None


sys.modules[__name__].__class__ = _ConfigModule
