"""``@resource`` and ``@source``: where data and hints from code come from.

A *resource* is an iterable of data items (a list, a generator function, any iterable) plus
table hints (table name, write disposition, keys, columns, contract, nesting); a *source* is
a named group of resources that shares one schema. Both mirror dlt's decorators so a dlt
user ports a pipeline by changing the import. Nothing here touches Spark or a destination:
extract reads resources, writes their items into a load package and records their hints.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from loadstone.errors import LoadstoneError
from loadstone.schema.hints import MERGE_STRATEGIES as MERGE_STRATEGIES
from loadstone.schema.hints import write_disposition_hints
from loadstone.schema.model import WRITE_DISPOSITIONS as WRITE_DISPOSITIONS
from loadstone.schema.model import InvalidSchemaError


class ResourceError(LoadstoneError):
    """A resource or source is declared or used wrongly (name, hint, data)."""


# --------------------------------------------------------------------------------------
# hints
# --------------------------------------------------------------------------------------
def normalize_write_disposition(value: Any) -> dict[str, Any]:
    """``"merge"`` or ``{"disposition": "merge", "strategy": "upsert", ...}`` -> hint dict.

    dlt's table form ``{"write_disposition": ..., "x-merge-strategy": ...?, ...}``, parsed by
    the schema's one parser (:func:`loadstone.schema.hints.write_disposition_hints`); a bad
    value is this resource's error.
    """
    try:
        return write_disposition_hints(value)
    except InvalidSchemaError as ex:
        raise ResourceError(f"write_disposition {value!r}: {ex}") from None


def normalize_columns(columns: Any) -> dict[str, dict[str, Any]]:
    """Columns given as a dict (name -> column dict) or a list of column dicts -> dict."""
    if columns is None:
        return {}
    if isinstance(columns, Mapping):
        out: dict[str, dict[str, Any]] = {}
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


def _key_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


@attrs.frozen(kw_only=True)
class TableHints:
    """The table hints code gives, as one value: ``@resource``, ``apply_hints``, ``run`` and
    ``extract`` take the same eight arguments, and hand them on as this.

    ``None`` means "not given"; :meth:`stored` is the package's hint dict (dlt's table form,
    only the given hints), which the normalizer reads with the schema's hint rules.
    """

    write_disposition: str | Mapping[str, Any] | None = None
    primary_key: str | Sequence[str] | None = None
    merge_key: str | Sequence[str] | None = None
    columns: Any = None
    schema_contract: Any = None
    max_table_nesting: int | None = None
    table_format: str | None = None
    file_format: str | None = None

    def stored(self) -> dict[str, Any]:
        """The hint dict stored per source table in a package; only given hints appear."""
        hints: dict[str, Any] = {}
        hints.update(normalize_write_disposition(self.write_disposition))
        if self.primary_key is not None:
            hints["primary_key"] = _key_list(self.primary_key)
        if self.merge_key is not None:
            hints["merge_key"] = _key_list(self.merge_key)
        if self.columns is not None:
            hints["columns"] = normalize_columns(self.columns)
        if self.schema_contract is not None:
            hints["schema_contract"] = self.schema_contract
        if self.max_table_nesting is not None:
            hints["max_nesting"] = int(self.max_table_nesting)
        if self.table_format is not None:
            hints["table_format"] = self.table_format
        if self.file_format is not None:
            hints["file_format"] = self.file_format
        return hints


def make_hints(**hints: Any) -> dict[str, Any]:
    """``TableHints(**hints).stored()``: the stored hint dict of keyword hints."""
    return TableHints(**hints).stored()


def merge_hints(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Hints of ``override`` win; ``columns`` merge per column and per property."""
    out = dict(base)
    for key, value in override.items():
        if key == "columns" and isinstance(out.get("columns"), Mapping):
            cols = {k: dict(v) for k, v in out["columns"].items()}
            for name, column in value.items():
                cols[name] = {**cols.get(name, {}), **column}
            out["columns"] = cols
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------------------
# resource
# --------------------------------------------------------------------------------------
class Resource:
    """An iterable of data items with the table hints that go with it."""

    def __init__(
        self,
        data: Any,
        name: str,
        *,
        table_name: str | Callable[[Any], str] | None = None,
        hints: Mapping[str, Any] | None = None,
        section: str | None = None,
        selected: bool = True,
        args_bound: bool = False,
    ) -> None:
        if not name:
            raise ResourceError("a resource needs a name (pass name= or table_name=)")
        self._data = data
        self.name = name
        self._table_name = table_name
        self._hints: dict[str, Any] = dict(hints or {})
        self.section = section
        self.selected = selected
        self._args_bound = args_bound
        #: made by ``@resource`` from a generator function: calling it binds arguments, even
        #: when it needs none (``pipeline.run(users())``, dlt's everyday idiom)
        self._from_function = False

    # -- hints ----------------------------------------------------------------------------
    @property
    def table_name(self) -> str | Callable[[Any], str]:
        """The table the items go to: a name, or a function of the item (dynamic tables)."""
        return self._table_name if self._table_name is not None else self.name

    @property
    def write_disposition(self) -> str:
        return str(self._hints.get("write_disposition", "append"))

    @property
    def hints(self) -> dict[str, Any]:
        return dict(self._hints)

    def compute_table_hints(self) -> dict[str, Any]:
        """The hints extract stores for this resource's table(s)."""
        return dict(self._hints)

    def apply_hints(
        self,
        table_name: str | Callable[[Any], str] | None = None,
        write_disposition: Any = None,
        primary_key: Any = None,
        merge_key: Any = None,
        columns: Any = None,
        schema_contract: Any = None,
        max_table_nesting: int | None = None,
        table_format: str | None = None,
        file_format: str | None = None,
    ) -> Resource:
        """Change the hints in place (dlt semantics: columns merge, the rest replaces)."""
        if table_name is not None:
            self._table_name = table_name
        new = TableHints(
            write_disposition=write_disposition,
            primary_key=primary_key,
            merge_key=merge_key,
            columns=columns,
            schema_contract=schema_contract,
            max_table_nesting=max_table_nesting,
            table_format=table_format,
            file_format=file_format,
        ).stored()
        self._hints = merge_hints(self._hints, new)
        return self

    # -- data -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Resource:
        """Bind arguments of a decorated generator function: a new resource, same hints."""
        if not callable(self._data) or (self._args_bound and not self._from_function):
            raise ResourceError(f"resource {self.name!r} is not a function and cannot be called")
        bound = Resource(
            functools.partial(self._data, *args, **kwargs),
            self.name,
            table_name=self._table_name,
            hints=self._hints,
            section=self.section,
            selected=self.selected,
            args_bound=True,
        )
        return bound

    def __iter__(self) -> Iterator[Any]:
        """Items one by one; a yielded list (or a list page) counts as its items."""
        data = self._data
        yield from _flatten(data() if callable(data) else data)

    @property
    def data(self) -> Any:
        return self._data

    def add_map(self, func: Callable[[Any], Any]) -> Resource:
        """Transform each item (``None`` from ``func`` drops the item)."""
        previous = self._data

        def mapped() -> Iterator[Any]:
            source = previous() if callable(previous) else previous
            for item in _flatten(source):
                out = func(item)
                if out is not None:
                    yield out

        self._data = mapped
        self._args_bound = True
        self._from_function = False
        return self

    def add_limit(
        self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False
    ) -> Resource:
        """Stop after ``max_items`` yields of the data (a yielded list is one; with
        ``count_rows`` its rows count) or after ``max_time`` seconds, as dlt's ``add_limit``:
        a quick way to try a pipeline on a sample of a large source."""
        previous = self._data

        def limited() -> Iterator[Any]:
            source = previous() if callable(previous) else previous
            if max_items is not None and max_items <= 0:
                return
            started = time.monotonic()
            count = 0
            iterator = iter(source)
            try:
                for page in iterator:
                    yield page
                    count += len(page) if count_rows and isinstance(page, list) else 1
                    if max_items is not None and count >= max_items:
                        break
                    if max_time is not None and time.monotonic() - started >= max_time:
                        break
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()

        self._data = limited
        self._args_bound = True
        self._from_function = False
        return self

    def with_name(self, new_name: str) -> Resource:
        """A copy under another name (and table, unless the table was named apart), as dlt's."""
        clone = Resource(
            self._data,
            new_name,
            table_name=self._table_name,
            hints=self._hints,
            section=self.section,
            selected=self.selected,
            args_bound=self._args_bound,
        )
        clone._from_function = self._from_function
        return clone

    def add_filter(self, func: Callable[[Any], bool]) -> Resource:
        """Keep only items for which ``func`` is true."""
        return self.add_map(lambda item: item if func(item) else None)

    def __repr__(self) -> str:
        return f"Resource(name={self.name!r}, table_name={self.table_name!r}, hints={self._hints})"


def _flatten(data: Any) -> Iterator[Any]:
    """Items one by one: a dict is one item; a yielded list (a page) counts as its items."""
    if data is None:
        return
    if isinstance(data, Mapping):
        yield data
        return
    for item in data:
        if isinstance(item, list):
            yield from item
        else:
            yield item


def _data_name(data: Any) -> str | None:
    name = getattr(data, "__name__", None)
    if isinstance(name, str) and name != "<lambda>":
        return name
    return None


def resource(
    data: Any = None,
    /,
    name: str | None = None,
    table_name: str | Callable[[Any], str] | None = None,
    write_disposition: Any = None,
    columns: Any = None,
    primary_key: Any = None,
    merge_key: Any = None,
    schema_contract: Any = None,
    max_table_nesting: int | None = None,
    table_format: str | None = None,
    file_format: str | None = None,
    selected: bool = True,
    section: str | None = None,
    **_ignored: Any,
) -> Any:
    """Make a resource from data or decorate a generator function (``@resource``/``@resource(...)``).

    Works like ``dlt.resource``: the table name defaults to the resource name, which defaults
    to the function name; hints go to the table(s) the resource fills.
    """
    hints = TableHints(
        write_disposition=write_disposition,
        primary_key=primary_key,
        merge_key=merge_key,
        columns=columns,
        schema_contract=schema_contract,
        max_table_nesting=max_table_nesting,
        table_format=table_format,
        file_format=file_format,
    ).stored()

    def make(target: Any) -> Resource:
        if isinstance(target, Resource):
            res = Resource(
                target.data,
                name or target.name,
                table_name=table_name if table_name is not None else target._table_name,
                hints=merge_hints(target.hints, hints),
                selected=selected,
                section=section,
                args_bound=target._args_bound,
            )
            res._from_function = target._from_function
            return res
        res_name = name or (table_name if isinstance(table_name, str) else None)
        res_name = res_name or _data_name(target) or _current_source_name.get()
        if res_name is None:
            raise ResourceError(
                "cannot infer the resource name from the data: pass name= or table_name="
            )
        is_function = inspect.isgeneratorfunction(target) or (
            callable(target) and not isinstance(target, Iterable) and not inspect.isclass(target)
        )
        res = Resource(
            target,
            res_name,
            table_name=table_name,
            hints=hints,
            selected=selected,
            section=section or (getattr(target, "__module__", None) if is_function else None),
            args_bound=not is_function or _has_no_required_args(target),
        )
        if is_function:
            functools.update_wrapper(res, target, updated=())
            res._args_bound = _has_no_required_args(target)
            res._from_function = True
        return res

    if data is None:
        return make
    return make(data)


def _has_no_required_args(func: Any) -> bool:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return True
    return all(
        p.default is not inspect.Parameter.empty
        or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        for p in sig.parameters.values()
    )


# --------------------------------------------------------------------------------------
# source
# --------------------------------------------------------------------------------------
_current_schema: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "loadstone_current_schema", default=None
)
_current_source_name: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "loadstone_current_source_name", default=None
)


@contextlib.contextmanager
def schema_context(schema: Any, source_name: str | None = None) -> Iterator[None]:
    """Make ``schema`` the one ``loadstone.current.source_schema()`` returns."""
    token = _current_schema.set(schema)
    token_name = _current_source_name.set(source_name)
    try:
        yield
    finally:
        _current_schema.reset(token)
        _current_source_name.reset(token_name)


def current_schema() -> Any:
    return _current_schema.get()


class Resources(dict[str, "Resource"]):
    """The resources of a source by name; ``selected`` lists the ones that will run."""

    @property
    def selected(self) -> dict[str, Resource]:
        return {name: res for name, res in self.items() if res.selected}

    def select(self, *names: str) -> Resources:
        unknown = [n for n in names if n not in self]
        if unknown:
            raise ResourceError(
                f"source has no resource(s) {', '.join(unknown)}; it has {', '.join(self)}"
            )
        for name, res in self.items():
            res.selected = name in names
        return self


class Source:
    """A named group of resources sharing one schema."""

    def __init__(
        self,
        name: str,
        schema: Any,
        resources: Sequence[Resource],
        *,
        section: str | None = None,
        max_table_nesting: int | None = None,
        root_key: bool | None = None,
        schema_contract: Any = None,
    ) -> None:
        self.name = name
        self.schema = schema
        self.section = section
        self.max_table_nesting = max_table_nesting
        self.root_key = root_key
        self.schema_contract = schema_contract
        self.resources = Resources()
        for res in resources:
            if res.name in self.resources:
                raise ResourceError(f"source {name!r} has two resources named {res.name!r}")
            self.resources[res.name] = res

    @property
    def selected_resources(self) -> dict[str, Resource]:
        return self.resources.selected

    def with_resources(self, *names: str) -> Source:
        """Select only the named resources (in place, like dlt) and return the source."""
        self.resources.select(*names)
        return self

    def __getattr__(self, name: str) -> Resource:
        resources = self.__dict__.get("resources")
        if resources is not None and name in resources:
            return resources[name]
        raise AttributeError(f"source has no attribute or resource {name!r}")

    def __iter__(self) -> Iterator[Any]:
        for res in self.selected_resources.values():
            yield from res

    def __repr__(self) -> str:
        return f"Source(name={self.name!r}, resources={list(self.resources)})"


def _make_schema(name: str, func: Any) -> Any:
    """The schema of a source: ``<name>_schema.yml`` beside the module, else a new one."""
    from loadstone import schema as schema_module

    module = sys.modules.get(getattr(func, "__module__", ""), None)
    module_file = getattr(module, "__file__", None)
    finder = getattr(schema_module, "find_source_schema_file", None)
    if module_file and finder is not None:
        found = finder(module_file, name)
        if found:
            loader = getattr(schema_module, "load_schema_file", None)
            if loader is not None:
                return loader(found)
            return schema_module.Schema.from_file(found)  # type: ignore[attr-defined]  # a module found at run time
    return schema_module.Schema(name)


def source(
    func: Any = None,
    /,
    name: str | None = None,
    section: str | None = None,
    max_table_nesting: int | None = None,
    root_key: bool | None = None,
    schema: Any = None,
    schema_contract: Any = None,
    **_ignored: Any,
) -> Any:
    """Decorate a function returning resources (or data) into a source factory.

    Calling the decorated function returns a :class:`Source`. While the function body runs,
    ``loadstone.current.source_schema()`` returns the source's schema, so the body can
    change detections or hints before any data is read.
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Source]:
        source_name = name or (schema.name if schema is not None else None) or f.__name__

        @functools.wraps(f)
        def factory(*args: Any, **kwargs: Any) -> Source:
            src_schema = schema.clone() if hasattr(schema, "clone") else schema
            if src_schema is None:
                src_schema = _make_schema(source_name, f)
            with schema_context(src_schema, source_name):
                returned = f(*args, **kwargs)
                resources = _resources_of(returned, source_name)
            return Source(
                source_name,
                src_schema,
                resources,
                section=section or f.__module__,
                max_table_nesting=max_table_nesting,
                root_key=root_key,
                schema_contract=schema_contract,
            )

        factory.__loadstone_source__ = True  # type: ignore[attr-defined]  # marks a @source factory
        return factory

    if func is None:
        return decorate
    return decorate(func)


def _resources_of(returned: Any, source_name: str) -> list[Resource]:
    if isinstance(returned, Resource):
        return [returned]
    if returned is None:
        return []
    if isinstance(returned, (list, tuple)) and all(isinstance(r, Resource) for r in returned):
        return [r for r in returned if isinstance(r, Resource)]
    if inspect.isgenerator(returned):
        items: list[Any] = list(returned)
        if items and all(isinstance(r, Resource) for r in items):
            return items
        return [Resource(items, source_name)]
    # plain data returned by the source function: one resource named like the source
    return [Resource(returned, source_name)]
