"""Errors of configuration, plugins, Spark targets and ``loadstone.current``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadstone.exceptions.base import LoadstoneError
from loadstone.plugin_kinds import GROUPS, LABELS

if TYPE_CHECKING:
    pass


class ConfigFileError(LoadstoneError):
    """A configuration file is not valid TOML; says which file and which line."""

    def __init__(self, path: Path, line: int | None, column: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        where = f"{path}, line {line}" if line is not None else str(path)
        if column is not None:
            where += f", column {column}"
        super().__init__(f"invalid TOML in {where}: {reason}")


class ConfigValueError(LoadstoneError, ValueError):
    """A configured value that does not parse as its key needs; names the key and its source."""

    def __init__(self, key: str, value: Any, origin: str, expected: str) -> None:
        self.key = key
        self.value = value
        self.origin = origin
        self.expected = expected
        super().__init__(f"{key} must be {expected}, not {value!r} (from {origin})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.value, self.origin, self.expected))


class ConfigValueCannotBeCoercedException(ConfigValueError):
    """``config.get(key, int)`` (or another type) of a value that does not read as that
    type (dlt's name and message)."""

    def __init__(self, field_name: str, field_value: Any, hint: object) -> None:
        self.field_name = field_name
        self.field_value = field_value
        self.hint = hint
        self.key, self.value, self.origin, self.expected = field_name, field_value, "", str(hint)
        LoadstoneError.__init__(
            self, f"Configured value for field `{field_name}` cannot be coerced into type `{hint}`"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.field_name, self.field_value, self.hint))


class InvalidConnectionString(LoadstoneError, ValueError):
    """A connection string that is not ``driver://username:password@host:port/database``
    (dlt's name, raised by ``ConnectionStringCredentials``); the value is not repeated, as it
    may hold a password."""

    def __init__(self, spec: str, value: object) -> None:
        self.spec = spec
        self.value = value
        super().__init__(
            f"The expected representation for `{spec}` is a standard database connection "
            "string with the following format: `driver://username:password@host:port/database`"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.spec, self.value))


class NoActiveContext(LoadstoneError):
    """``current.*`` was called outside of a source function or a pipeline run."""


class ResourceNameNotAvailable(NoActiveContext):
    """``current.resource_name()`` / ``resource_state()`` outside a running resource (dlt's)."""


class SourceSectionNotAvailable(NoActiveContext):
    """``current.source_state()`` / ``state()`` while no pipeline extracts a source (dlt's)."""


class CurrentSourceNotAvailable(NoActiveContext):
    """``current.source()`` while no source is being extracted (dlt's)."""


class CurrentSourceSchemaNotAvailable(NoActiveContext):
    """``current.source_schema()`` outside a source body or its extraction (dlt's)."""


class ConfigFieldMissingException(LoadstoneError, KeyError):
    """A ``secrets.value``/``config.value`` argument was not passed and is not configured
    (a ``KeyError`` too, as dlt's: ``config["missing.key"]`` raises it)."""

    __str__ = Exception.__str__  # the message, not KeyError's quoted repr

    def __init__(
        self, function: str, missing: Mapping[str, list[str]], spec_name: str | None = None
    ) -> None:
        self.function = function
        self.missing = dict(missing)
        #: dlt's members: the missing fields, and the configuration they belong to (a
        #: function ``get_data`` -> ``GetDataConfiguration``; item access ``BaseConfiguration``)
        self.fields = list(missing)
        self.spec_name = spec_name or _spec_name(function)
        tried = "; ".join(f"{arg}: {', '.join(keys)}" for arg, keys in missing.items())
        super().__init__(
            f"{function}: missing configuration for {', '.join(missing)}; looked up {tried} "
            f"(environment variables: keys upper-cased, '.' -> '__')"
        )


def _spec_name(function: str) -> str:
    """dlt's name of the configuration a function's arguments make (``needs_r()`` ->
    ``NeedsRConfiguration``); item access reads ``BaseConfiguration``."""
    if function.startswith("config["):
        return "BaseConfiguration"
    if function.endswith("()"):
        parts = function[:-2].split("_")
        return "".join(part[:1].upper() + part[1:] for part in parts) + "Configuration"
    return function


class UnknownPluginError(LoadstoneError, LookupError):
    """No plugin of this kind has this name; lists the names there are and how to add one."""

    def __init__(
        self,
        kind: str,
        name: str,
        available: Sequence[str],
        broken: Iterable[BaseException] = (),
    ) -> None:
        self.kind = kind
        self.name = name
        self.available = tuple(available)
        self.broken = tuple(broken)
        label = LABELS.get(kind, kind)
        names = ", ".join(self.available) if self.available else "(none installed)"
        message = (
            f"unknown {label} {name!r}. Available: {names}. "
            f"To add one, `pip install <package>` that exposes an entry point named {name!r} "
            f"in group {GROUPS.get(kind, kind)!r}, or name a plugin by its fully qualified "
            f"module name (for example 'my_package.my_{kind}')."
        )
        if self.broken:
            message += " Plugins that failed to load: " + "; ".join(map(str, self.broken))
        super().__init__(message)


class PluginImportError(LoadstoneError, ImportError):
    """A plugin module could not be imported; names the module and the import error."""

    def __init__(self, kind: str, module: str, cause: BaseException) -> None:
        self.kind = kind
        self.module = module
        self.cause = cause
        label = LABELS.get(kind, kind)
        super().__init__(
            f"{label} plugin module {module!r} could not be imported: "
            f"{type(cause).__name__}: {cause}"
        )


class PluginContractError(LoadstoneError, TypeError):
    """A plugin module was found but does not provide what its kind requires."""

    def __init__(self, kind: str, module: str, problem: str) -> None:
        self.kind = kind
        self.module = module
        self.problem = problem
        label = LABELS.get(kind, kind)
        super().__init__(f"{label} plugin {module!r} {problem}")


class MissingDependencyException(LoadstoneError, ImportError):
    """An optional library a feature needs is not installed (dlt's name): names the feature,
    the packages to install and why."""

    def __init__(self, caller: str, dependencies: Sequence[str], appendix: str = "") -> None:
        self.caller = caller
        self.dependencies = list(dependencies)
        self.appendix = appendix
        packages = " ".join(f'"{dependency}"' for dependency in self.dependencies)
        super().__init__(
            f"{caller} needs {', '.join(self.dependencies)}, which is not installed: "
            f"pip install {packages}" + (f". {appendix}" if appendix else "")
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.caller, self.dependencies, self.appendix))


class SparkTargetError(LoadstoneError):
    """``spark.master`` / ``spark.remote`` names no place Spark can run."""
