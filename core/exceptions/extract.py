"""Errors of resources, sources and the extract step."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from loadstone.exceptions.base import LoadstoneError

if TYPE_CHECKING:
    pass


class ExtractError(LoadstoneError):
    """Input could not be turned into extracted files (unknown kind, unreadable file ...)."""


class InvalidTableName(ExtractError, ValueError):
    """A table name that normalizes to an empty identifier (``" "``, ``"__"``).

    A ``ValueError`` too, as the error dlt raises for such a name is.
    """

    def __init__(self, table_name: str, convention: str) -> None:
        self.table_name = table_name
        self.convention = convention
        super().__init__(
            f"table name {table_name!r} normalizes to an empty identifier (naming convention "
            f"{convention}): name the table with a letter or digit; nothing was extracted"
        )


class ResourceExtractionError(ExtractError):
    """The code of a resource raised while its items were read (the cause is chained)."""

    def __init__(self, resource_name: str, cause: BaseException) -> None:
        self.resource_name = resource_name
        self.cause = cause
        #: dlt's attributes: the pipe (a transformer's own name), and what failed in it
        self.pipe_name = resource_name
        self.kind = "generator"
        self.func_name = resource_name
        self.msg = str(cause)
        super().__init__(
            f"resource {resource_name!r} raised while extracting: {type(cause).__name__}: {cause}"
        )


class IncrementalCursorPathMissing(LoadstoneError):
    """An item has no value at the cursor path (``on_cursor_value_missing="raise"``)."""

    def __init__(self, resource_name: str, cursor_path: str, item: Any) -> None:
        self.resource_name = resource_name
        self.cursor_path = cursor_path
        self.item = item
        super().__init__(
            f"resource {resource_name!r}: cursor path {cursor_path!r} was not found in item "
            f"{_short(item)}; every item needs it, or pass on_cursor_value_missing="
            f"'include'|'exclude'"
        )


class IncrementalCursorPathHasValueNone(IncrementalCursorPathMissing):
    """The value at the cursor path is None (``on_cursor_value_missing="raise"``)."""

    def __init__(self, resource_name: str, cursor_path: str, item: Any) -> None:
        super().__init__(resource_name, cursor_path, item)
        self.args = (
            f"resource {resource_name!r}: the cursor path {cursor_path!r} holds None in item "
            f"{_short(item)}; every item needs a value there, or pass on_cursor_value_missing="
            f"'include'|'exclude'",
        )


class IncrementalCursorInvalidCoercion(LoadstoneError, TypeError):
    """A cursor value does not compare with the cursor's start, end or last value (an int
    against a text, a datetime against a date): dlt 1.31's error, raised as it is, not wrapped
    in a resource's extraction error."""

    def __init__(
        self, resource_name: str, cursor_path: str, reference: Any, value: Any, item: Any = None
    ) -> None:
        self.resource_name = self.pipe_name = resource_name
        self.cursor_path = cursor_path
        self.cursor_value, self.item = value, item
        super().__init__(
            f"resource {resource_name!r}: the cursor value {value!r} "
            f"({type(value).__name__}) at {cursor_path!r} does not compare with "
            f"{reference!r} ({type(reference).__name__}); give an initial_value of the "
            f"cursor's type"
        )


class ExternalSchedulerNotAvailable(LoadstoneError):
    """``incremental(allow_external_schedulers=True)`` found no interval to load (dlt's
    error and message): ``DLT_INTERVAL_START`` and ``DLT_INTERVAL_END`` must both be set."""

    def __init__(self, resource_name: str) -> None:
        self.resource_name = resource_name
        super().__init__(
            f"In processing pipe `{resource_name}`: External scheduler interval is not "
            "available. The resource has allow_external_schedulers=True but no interval was "
            "provided by the runtime (no DLT_INTERVAL_START/DLT_INTERVAL_END env vars, no "
            "Airflow context, and no interval injected by the launcher)."
        )


class JoinSchedulerError(LoadstoneError):
    """The scheduler's interval cannot be given the cursor's type (dlt's error): the
    incremental needs an ``initial_value`` (or ``end_value``) of a datetime, date or number."""

    def __init__(self, resource_name: str, cursor_path: str, reason: str) -> None:
        self.resource_name = resource_name
        self.cursor_path = cursor_path
        super().__init__(f"In processing pipe `{resource_name}`: {reason}")


class ResourceError(LoadstoneError):
    """A resource or source is declared or used wrongly (name, hint, data)."""


class ParametrizedResourceUnbound(ResourceError):
    """A resource whose function has required arguments was run without calling it (dlt's
    name), and configuration does not give them."""

    def __init__(self, resource_name: str, func_name: str) -> None:
        self.resource_name, self.func_name = resource_name, func_name
        super().__init__(
            f"resource {resource_name!r} needs arguments of {func_name}() that were neither "
            f"given nor configured: call it with them ({resource_name}(...)) before running it"
        )


class ResourceNameMissing(ResourceError, ExtractError):
    """Data without a table name: a list or generator given to ``run``/``extract`` without
    ``table_name=`` (dlt's name); nothing is extracted."""

    def __init__(self) -> None:
        super().__init__(
            "cannot tell which table the data goes to: pass table_name= to run/extract "
            "(or use a @resource)"
        )


class InvalidResourceData(ResourceError, ExtractError):
    """Data of a kind ``run``/``extract`` does not take (a text that names no input file;
    dlt's ``InvalidResourceDataTypeBasic``); nothing is extracted."""


class CreatePipeException(ResourceError):
    """A step cannot go where it was asked to in a resource's pipe (dlt's name)."""

    def __init__(self, pipe_name: str, msg: str) -> None:
        self.pipe_name = pipe_name
        super().__init__(f"resource {pipe_name!r}: {msg}")


class DataItemRequiredForDynamicTableHints(ResourceError):
    """A table schema asked of a resource whose table name is a function of the item,
    without an item (dlt's name)."""

    def __init__(self, resource_name: str) -> None:
        self.resource_name = resource_name
        super().__init__(f"resource {resource_name!r} has a dynamic table name: pass an item")


class ResourcesNotFoundError(ResourceError):
    """A source was asked for resources it does not have (dlt's name), e.g. by
    ``with_resources`` or ``resources.select``."""

    def __init__(
        self, source_name: str, available: Collection[str], requested: Collection[str]
    ) -> None:
        self.source_name = source_name
        self.available_resources = set(available)
        self.requested_resources = set(requested)
        self.not_found_resources = self.requested_resources - self.available_resources
        super().__init__(
            f"source {source_name!r} has no resource(s) "
            f"{', '.join(sorted(self.not_found_resources))}; it has "
            f"{', '.join(available) or 'none'}"
        )


class ResourceNotCallable(ResourceError, TypeError):
    """A resource called (or ``bind``-ed) whose arguments are already bound, or that holds
    data rather than a function. A ``TypeError`` too, the class dlt 1.31 raises for it."""

    def __init__(self, resource_name: str) -> None:
        self.resource_name = resource_name
        super().__init__(
            f"resource {resource_name!r} is not callable: its arguments are already bound or it "
            "holds data, not a function (a decorated resource can be called only once; call "
            "the decorated function again for another copy)"
        )


class SourceExhausted(ExtractError):
    """A run was given a source (or resources) whose data is a generator already started:
    a generator runs once, so the run would load nothing and a ``replace`` would empty its
    tables. dlt 1.31 refuses it under this name; a generator *function* runs anew each run."""

    def __init__(self, source_name: str, resources: Sequence[str]) -> None:
        self.source_name = source_name
        self.resources = list(resources)
        super().__init__(
            f"source {source_name!r} is exhausted or has an active iterator: the generator of "
            f"resource(s) {', '.join(self.resources)} was already iterated; a generator can be "
            "passed to a pipeline only once (pass the generator function to run it again)"
        )


class InconsistentTableTemplate(ResourceError):
    """Hints given as functions of the item beside a table name that is not one (dlt's name):
    a table's hints are computed from the item that names the table."""

    def __init__(self, table_name: object, hints: Sequence[str]) -> None:
        self.table_name = table_name
        self.hints = tuple(hints)
        super().__init__(
            "A set of table hints provided to the resource is inconsistent: Table name "
            f"`{table_name}` must be a function if any other table hint is a function "
            f"({', '.join(self.hints)})"
        )


class ArgumentsOverloadException(LoadstoneError):
    """A decorator or function was given arguments that exclude each other (dlt's name,
    raised where dlt raises it: ``@source(name=..., schema=...)``)."""

    def __init__(self, msg: str, func_name: str, *args: Any) -> None:
        self.func_name = func_name
        super().__init__(
            f"Arguments combination not allowed when calling function `{func_name}()`: {msg}"
        )


class ValueErrorWithKnownValues(LoadstoneError, ValueError):
    """A setting that takes one of a known set of values got another (dlt's name)."""

    def __init__(self, key: str, value: Any, known: Sequence[str]) -> None:
        self.key = key
        self.value = value
        self.known = tuple(known)
        super().__init__(f"{key}={value!r} is not one of: {', '.join(known)}")


def _short(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 200 else text[:200] + "..."
