"""``@resource`` and ``@source``: where data and hints from code come from.

A *resource* is an iterable of data items (a list, a generator function, any iterable) plus
table hints (table name, write disposition, keys, columns, contract, nesting); a *source* is
a named group of resources that shares one schema. Both mirror dlt's decorators so a dlt
user ports a pipeline by changing the import. Nothing here touches Spark or a destination:
extract reads resources, writes their items into a load package and records their hints.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import sys
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from loadstone.exceptions import (
    InvalidSchemaError,
    ResourceError,
    ValueErrorWithKnownValues,
)
from loadstone.extract.arrow_items import is_arrow_item
from loadstone.extract.incremental import Incremental
from loadstone.extract.injection import inject
from loadstone.extract.mark import DataItemWithMeta, unwrap
from loadstone.schema.hints import MERGE_STRATEGIES as MERGE_STRATEGIES
from loadstone.schema.hints import write_disposition_hints
from loadstone.schema.model import WRITE_DISPOSITIONS as WRITE_DISPOSITIONS
from loadstone.schema.schema import Schema


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


def nested_hint_list(nested_hints: Mapping[Any, Any]) -> list[dict[str, Any]]:
    """``nested_hints={"lines": make_nested_hints(columns=...)}`` (a key is a field name or a
    path tuple) -> ``[{"path": [...], "columns": {...}}]``, the JSON form the package keeps."""
    if callable(nested_hints) or not isinstance(nested_hints, Mapping):
        raise TypeError("nested_hints must be a dict of path -> make_nested_hints(...)")
    out = []
    for path, hint in nested_hints.items():
        parts = [path] if isinstance(path, str) else [str(p) for p in path]
        unknown = set(hint or {}) - {"columns", "schema_contract"}
        if unknown:
            raise TypeError(
                f"nested_hints {', '.join(sorted(unknown))} are not supported by loadstone "
                f"(only columns and schema_contract)"
            )
        entry = {"path": parts, "columns": normalize_columns(hint.get("columns"))}
        if hint.get("schema_contract") is not None:
            entry["schema_contract"] = hint["schema_contract"]
        out.append(entry)
    return out


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
    #: the parsed form, made once when the value is built: a bad hint fails where it is
    #: given (``run``, ``extract``, ``@resource``), before any work
    _stored: dict[str, Any] = attrs.field(
        init=False,
        eq=False,
        repr=False,
        default=attrs.Factory(lambda s: s._parse(), takes_self=True),
    )

    def stored(self) -> dict[str, Any]:
        """The hint dict stored per source table in a package; only given hints appear."""
        return dict(self._stored)

    def _parse(self) -> dict[str, Any]:
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
            hints["file_format"] = check_file_format(self.file_format)
        return hints


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
#: A step of a resource's pipe: pages in, pages out (``add_map``, ``add_limit`` ...).
Step = Callable[[Iterator[Any]], Iterator[Any]]


def reject_unsupported(where: str, **given: Any) -> None:
    """Raise ``TypeError`` for dlt arguments loadstone cannot honour: never ignore them."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise TypeError(f"{where}({name}=...) is not supported by loadstone")


class Resource:
    """An iterable of data items with the table hints that go with it.

    The data is a value (list, iterable, file path, DataFrame) or a function (generator,
    async generator, or a function returning data). Iterating runs the function with its
    bound arguments, configured ``secrets.value`` arguments and a bound incremental cursor,
    then the steps added by ``add_map``/``add_filter``/``add_yield_map``/``add_limit``. A
    *transformer* is a resource whose function is called with each page of its parent.
    """

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
        incremental: Incremental | None = None,
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
        self._call_args: tuple[Any, ...] = ()
        self._call_kwargs: dict[str, Any] = {}
        self._steps: list[Step] = []
        self._incremental = incremental
        self._parent: Resource | None = None
        self.is_transformer = False

    def _clone(self, name: str | None = None) -> Resource:
        clone = Resource(
            self._data,
            name or self.name,
            table_name=self._table_name,
            hints=self._hints,
            section=self.section,
            selected=self.selected,
            args_bound=self._args_bound,
            incremental=self._incremental,
        )
        clone._from_function = self._from_function
        clone._call_args, clone._call_kwargs = self._call_args, dict(self._call_kwargs)
        clone._steps = list(self._steps)
        clone._parent = self._parent
        clone.is_transformer = self.is_transformer
        return clone

    # -- hints ----------------------------------------------------------------------------
    @property
    def table_name(self) -> str | Callable[[Any], str]:
        """The table the items go to: a name, or a function of the item (dynamic tables)."""
        return self._table_name if self._table_name is not None else self.name

    @table_name.setter
    def table_name(self, value: str | Callable[[Any], str]) -> None:
        self._table_name = value

    @property
    def write_disposition(self) -> str:
        return str(self._hints.get("write_disposition", "append"))

    @write_disposition.setter
    def write_disposition(self, value: Any) -> None:
        self.apply_hints(write_disposition=value)

    @property
    def max_table_nesting(self) -> int | None:
        value = self._hints.get("max_nesting")
        return None if value is None else int(value)

    @max_table_nesting.setter
    def max_table_nesting(self, value: int | None) -> None:
        if value is None:
            self._hints.pop("max_nesting", None)
        else:
            self._hints["max_nesting"] = int(value)

    @property
    def incremental(self) -> Incremental | None:
        return self._incremental or self._incremental_argument()[1]

    @property
    def hints(self) -> dict[str, Any]:
        return dict(self._hints)

    def compute_table_hints(self) -> dict[str, Any]:
        """The hints extract stores for this resource's table(s)."""
        return dict(self._hints)

    def compute_table_schema(self, item: Any = None) -> dict[str, Any]:
        """The table this resource declares, in dlt's dict form (name, columns, hints)."""
        hints = self._hints
        table_name = self.table_name
        if callable(table_name):
            if item is None:
                raise ResourceError(
                    f"resource {self.name!r} has a dynamic table name: pass an item"
                )
            table_name = table_name(item)
        columns = {name: dict(col) for name, col in (hints.get("columns") or {}).items()}
        for hint in ("primary_key", "merge_key"):
            for key in hints.get(hint) or ():
                column = columns.setdefault(key, {"name": key})
                column[hint] = True
                if hint == "primary_key":
                    column.setdefault("nullable", False)
        table: dict[str, Any] = {"columns": columns, "write_disposition": self.write_disposition}
        for key, value in hints.items():
            if key.startswith("x-") or key in ("schema_contract", "table_format", "file_format"):
                table[key] = value
        if "max_nesting" in hints:
            table["x-normalizer"] = {"max_nesting": hints["max_nesting"]}
        table["name"] = table_name
        table["resource"] = self.name
        return table

    def apply_hints(
        self,
        table_name: str | Callable[[Any], str] | None = None,
        parent_table_name: Any = None,
        write_disposition: Any = None,
        columns: Any = None,
        primary_key: Any = None,
        merge_key: Any = None,
        incremental: Incremental | None = None,
        schema_contract: Any = None,
        additional_table_hints: Any = None,
        table_format: str | None = None,
        file_format: str | None = None,
        references: Any = None,
        create_table_variant: bool = False,
        nested_hints: Any = None,
        max_table_nesting: int | None = None,
    ) -> Resource:
        """Change the hints in place (dlt semantics: columns merge, the rest replaces)."""
        reject_unsupported(
            "apply_hints",
            parent_table_name=parent_table_name,
            additional_table_hints=additional_table_hints,
            references=references,
            create_table_variant=create_table_variant,
        )
        if table_name is not None:
            self._table_name = table_name
        if incremental is not None:
            self._incremental = _as_incremental(incremental)
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
        if nested_hints is not None:
            new["x-nested-hints"] = nested_hint_list(nested_hints)
        self._hints = merge_hints(self._hints, new)
        return self

    # -- binding --------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Resource:
        """Bind arguments of a decorated function: a new resource, same hints and steps."""
        if not callable(self._data) or (self._args_bound and not self._from_function):
            raise ResourceError(f"resource {self.name!r} is not a function and cannot be called")
        bound = self._clone()
        if callable(self.name):  # dlt: name=lambda args: ... names the resource by its arguments
            bound.name = self.name(self._arguments(args, kwargs))
        bound._call_args = args
        bound._call_kwargs = inject(self._data, bound.name, self._skip_item(args), kwargs)
        bound._args_bound = True
        bound._from_function = False
        return bound

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name, defaults included (what dlt hands a
        ``name=`` callable)."""
        signature = inspect.signature(self._data)
        bound = signature.bind_partial(*self._skip_item(args), **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def _skip_item(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """For a transformer the first parameter is the item: bind past it."""
        return (None, *args) if self.is_transformer else args

    def _incremental_argument(self) -> tuple[str | None, Incremental | None]:
        """The function parameter holding an incremental cursor (passed or default)."""
        if not callable(self._data) or isinstance(self._data, Resource):
            return None, None
        try:
            signature = inspect.signature(self._data)
        except (TypeError, ValueError):
            return None, None
        bound = signature.bind_partial(*self._skip_item(self._call_args), **self._call_kwargs)
        for param in signature.parameters.values():
            value = bound.arguments.get(param.name, param.default)
            if isinstance(value, Incremental):
                return param.name, value
        return None, None

    def _incremental_parameter(self) -> tuple[str | None, bool]:
        """(the parameter annotated as an incremental cursor, whether the call passed it).

        dlt hands the cursor of ``apply_hints(incremental=...)`` to that parameter, so a
        resource can push it into its query (``sql_table`` does) even when its default is
        None.
        """
        try:
            signature = inspect.signature(self._data)
        except (TypeError, ValueError):
            return None, False
        bound = signature.bind_partial(*self._skip_item(self._call_args), **self._call_kwargs)
        for param in signature.parameters.values():
            if "Incremental" in str(param.annotation) or "incremental" in str(param.annotation):
                return param.name, param.name in bound.arguments
        return None, False

    def _bind_incremental(self) -> tuple[str | None, Incremental | None]:
        """The cursor for this run, its start read from the resource's state.

        A cursor the call passed wins; then one from ``apply_hints`` (or the decorator);
        then the parameter's default.
        """
        param, template = self._incremental_argument()
        if callable(self._data) and not isinstance(self._data, Resource):
            annotated, passed = self._incremental_parameter()
            if param is None:
                param = annotated
            if self._incremental is not None and not (passed and param == annotated):
                template = self._incremental
        if template is None:
            template = self._incremental
        if template is None:
            return None, None
        from loadstone import current

        state: dict[str, Any] = {}
        if template.end_value is None:  # a backfill range leaves no trace in state
            try:
                state = current.resource_state(self.name)
            except current.NoActiveContext:
                pass
        return param, template.bind(self.name, state, self._hints.get("primary_key"))

    def _call_data(self, param: str | None, cursor: Incremental | None, item: Any = None) -> Any:
        data = self._data
        if not callable(data) or (isinstance(data, Iterable) and not self.is_transformer):
            return data
        args = self._skip_item(self._call_args)
        if self.is_transformer:
            args = (item, *args[1:])
        kwargs = self._call_kwargs
        if not self._args_bound or self._from_function:
            kwargs = inject(data, self.name, args, kwargs)
        if param is not None:
            kwargs = {**kwargs, param: cursor}
        return data(*args, **kwargs)

    # -- data -----------------------------------------------------------------------------
    def pages(self) -> Iterator[Any]:
        """What the resource yields, page by page (a page is an item, a list or a mark)."""
        param, cursor = self._bind_incremental()
        if self.is_transformer:
            if self._parent is None:
                raise ResourceError(
                    f"transformer {self.name!r} has no input: pipe a resource into it "
                    f"(resource | {self.name}) or give data_from="
                )
            pages: Iterator[Any] = self._transform(self._parent.pages(), param, cursor)
        else:
            pages = iterate_data(self._call_data(param, cursor))
        if cursor is not None:
            pages = cursor.filter_pages(pages, unwrap)
        for step in self._steps:
            pages = step(pages)
        return pages

    def _transform(
        self, parent_pages: Iterator[Any], param: str | None, cursor: Incremental | None
    ) -> Iterator[Any]:
        for page in parent_pages:
            data, _ = unwrap(page)
            if data is None:
                continue
            yield from iterate_data(self._call_data(param, cursor, data))

    def __iter__(self) -> Iterator[Any]:
        """Items one by one; a yielded list (or a list page) counts as its items."""
        for page in self.pages():
            data, _ = unwrap(page)
            yield from _flatten([data])

    @property
    def data(self) -> Any:
        return self._data

    def add_step(self, step: Step) -> Resource:
        self._steps.append(step)
        return self

    def add_map(self, func: Callable[[Any], Any], insert_at: int | None = None) -> Resource:
        """Transform each item (``None`` from ``func`` drops the item)."""
        return self._insert_step(_per_item(lambda item: _maybe(func(item))), insert_at)

    def add_filter(self, func: Callable[[Any], bool], insert_at: int | None = None) -> Resource:
        """Keep only items for which ``func`` is true."""
        return self._insert_step(_per_item(lambda item: [item] if func(item) else []), insert_at)

    def add_yield_map(self, func: Callable[[Any], Any], insert_at: int | None = None) -> Resource:
        """Replace each item by the items ``func`` yields for it (0, 1 or many)."""
        return self._insert_step(_per_item(lambda item: list(_flatten(func(item)))), insert_at)

    def _insert_step(self, step: Step, insert_at: int | None) -> Resource:
        if insert_at is None:
            self._steps.append(step)
        else:
            self._steps.insert(insert_at, step)
        return self

    def add_limit(
        self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False
    ) -> Resource:
        """Stop after ``max_items`` yields of the data (a yielded list is one; with
        ``count_rows`` its rows count) or after ``max_time`` seconds, as dlt's ``add_limit``:
        a quick way to try a pipeline on a sample of a large source."""

        def limited(pages: Iterator[Any]) -> Iterator[Any]:
            if max_items is not None and max_items <= 0:
                _close(pages)
                return
            started = time.monotonic()
            count = 0
            try:
                for page in pages:
                    yield page
                    data, _ = unwrap(page)
                    count += len(data) if count_rows and isinstance(data, list) else 1
                    if max_items is not None and count >= max_items:
                        break
                    if max_time is not None and time.monotonic() - started >= max_time:
                        break
            finally:
                _close(pages)

        self._steps.append(limited)
        return self

    def with_name(self, new_name: str) -> Resource:
        """A copy under another name (and table, unless the table was named apart), as dlt's."""
        return self._clone(new_name)

    def __or__(self, other: Any) -> Resource:
        """``resource | transformer``: the transformer reads this resource's pages."""
        if isinstance(other, Resource) and other.is_transformer:
            piped = other._clone()
            piped._parent = self
            return piped
        if callable(other) and not isinstance(other, Resource):
            return self._clone().add_map(other)
        raise ResourceError(f"cannot pipe resource {self.name!r} into {other!r}")

    def __ror__(self, data: Any) -> Resource:
        """``data | transformer``: plain data piped into a transformer."""
        if not self.is_transformer:
            raise ResourceError(f"resource {self.name!r} is not a transformer")
        return resource(data, name=f"{self.name}_input") | self

    def __repr__(self) -> str:
        return f"Resource(name={self.name!r}, table_name={self.table_name!r}, hints={self._hints})"


def _maybe(value: Any) -> list[Any]:
    return [] if value is None else [value]


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def _per_item(func: Callable[[Any], list[Any]]) -> Step:
    """A step applying ``func`` (item -> list of items) inside every page, marks kept."""

    def step(pages: Iterator[Any]) -> Iterator[Any]:
        try:
            for page in pages:
                data, rewrap = unwrap(page)
                if data is None:
                    yield page
                elif isinstance(data, list):
                    out = [new for item in data for new in func(item)]
                    if out:
                        yield rewrap(out)
                else:
                    out = func(data)
                    if len(out) == 1:
                        yield rewrap(out[0])
                    elif out:
                        yield rewrap(out)
        finally:
            _close(pages)

    return step


def iterate_data(data: Any) -> Iterator[Any]:
    """The pages of what a resource function returned (sync or async, one value or many)."""
    if data is None:
        return iter(())
    if inspect.isasyncgen(data):
        return _sync_async(data)
    if inspect.iscoroutine(data):
        return iterate_data(asyncio.run(data))
    if isinstance(data, (Mapping, DataItemWithMeta)) or is_arrow_item(data):
        return iter([data])  # an Arrow table or DataFrame is one page, not its columns
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        return iter([data])
    return iter(data)


def _sync_async(agen: Any) -> Iterator[Any]:
    """Drive an async generator on a private event loop, page by page."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                break
    finally:
        loop.run_until_complete(agen.aclose())
        loop.close()


def _flatten(data: Any) -> Iterator[Any]:
    """Items one by one: a dict is one item; a yielded list (a page) counts as its items."""
    if data is None:
        return
    if isinstance(data, Mapping) or is_arrow_item(data):
        yield data
        return
    for item in data:
        if isinstance(item, list):
            yield from item
        elif item is not None:
            yield item


def _data_name(data: Any) -> str | None:
    name = getattr(data, "__name__", None)
    if isinstance(name, str) and name != "<lambda>":
        return name
    return None


def _as_incremental(value: Any) -> Incremental:
    if isinstance(value, Incremental):
        return value
    if isinstance(value, Mapping):
        return Incremental(**value)
    raise TypeError(f"incremental must be loadstone.sources.incremental(...), got {value!r}")


def resource(
    data: Any = None,
    /,
    name: str | None = None,
    table_name: str | Callable[[Any], str] | None = None,
    max_table_nesting: int | None = None,
    write_disposition: Any = None,
    columns: Any = None,
    primary_key: Any = None,
    merge_key: Any = None,
    schema_contract: Any = None,
    table_format: str | None = None,
    file_format: str | None = None,
    references: Any = None,
    nested_hints: Any = None,
    selected: bool = True,
    spec: Any = None,
    parallelized: bool = False,
    incremental: Any = None,
    section: str | None = None,
    standalone: bool | None = None,
    data_from: Any = None,
) -> Any:
    """Make a resource from data or decorate a generator function (``@resource``/``@resource(...)``).

    Works like ``dlt.resource``: the table name defaults to the resource name, which defaults
    to the function name; hints go to the table(s) the resource fills. ``parallelized`` and
    ``standalone`` change how dlt schedules work, not what is loaded, and are accepted;
    ``references``, ``nested_hints`` and ``spec`` raise ``TypeError``.

    Long because dlt's 21 arguments take 22 lines of signature; the body is short.
    """
    reject_unsupported("resource", references=references, spec=spec)
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
    if nested_hints is not None:
        hints["x-nested-hints"] = nested_hint_list(nested_hints)
    cursor = None if incremental is None else _as_incremental(incremental)

    def make(target: Any) -> Resource:
        if isinstance(target, Resource):
            res = target._clone(name)
            if table_name is not None:
                res._table_name = table_name
            res._hints = merge_hints(target.hints, hints)
            res.selected = selected
            res.section = section or target.section
            res._incremental = cursor or target._incremental
        else:
            res = _resource_from(target, name, table_name, hints, selected, section, cursor)
        if data_from is not None:
            res.is_transformer = True
            res._parent = _as_parent(data_from)
        return res

    if data is None:
        return make
    return make(data)


def _resource_from(
    target: Any,
    name: str | None,
    table_name: Any,
    hints: dict[str, Any],
    selected: bool,
    section: str | None,
    cursor: Incremental | None,
) -> Resource:
    # as dlt: a function or generator names its resource; table_name only names the data's
    res_name = name or _data_name(target) or (table_name if isinstance(table_name, str) else None)
    res_name = res_name or _current_source_name.get()
    if res_name is None:
        raise ResourceError(
            "cannot infer the resource name from the data: pass name= or table_name="
        )
    is_function = (
        inspect.isgeneratorfunction(target)
        or inspect.isasyncgenfunction(target)
        or (callable(target) and not isinstance(target, Iterable) and not inspect.isclass(target))
    )
    res = Resource(
        target,
        res_name,
        table_name=table_name,
        hints=hints,
        selected=selected,
        section=section or (getattr(target, "__module__", None) if is_function else None),
        args_bound=not is_function or _has_no_required_args(target),
        incremental=cursor,
    )
    if is_function:
        functools.update_wrapper(res, target, updated=())  # type: ignore[arg-type,unused-ignore]  # a Resource wraps the function
        res._args_bound = _has_no_required_args(target)
        res._from_function = True
    return res


def _as_parent(data_from: Any) -> Resource:
    if isinstance(data_from, Resource):
        return data_from
    made: Resource = resource(data_from, name=_data_name(data_from) or "data_from")
    return made


def transformer(
    f: Any = None,
    /,
    data_from: Any = None,
    name: str | None = None,
    table_name: str | Callable[[Any], str] | None = None,
    max_table_nesting: int | None = None,
    write_disposition: Any = None,
    columns: Any = None,
    primary_key: Any = None,
    merge_key: Any = None,
    schema_contract: Any = None,
    table_format: str | None = None,
    file_format: str | None = None,
    references: Any = None,
    nested_hints: Any = None,
    selected: bool = True,
    spec: Any = None,
    parallelized: bool = False,
    section: str | None = None,
    standalone: bool | None = None,
) -> Any:
    """A resource whose function takes each page of another resource (``@transformer``).

    ``data_from`` names the input; without it, pipe one in: ``users | user_details``.
    """
    reject_unsupported("transformer", references=references, nested_hints=nested_hints, spec=spec)

    def make(func: Callable[..., Any]) -> Resource:
        res: Resource = resource(
            func,
            name=name,
            table_name=table_name,
            max_table_nesting=max_table_nesting,
            write_disposition=write_disposition,
            columns=columns,
            primary_key=primary_key,
            merge_key=merge_key,
            schema_contract=schema_contract,
            table_format=table_format,
            file_format=file_format,
            selected=selected,
            section=section,
        )
        res.is_transformer = True
        res._args_bound = _has_no_required_args(func, skip_first=True)
        res._parent = None if data_from is None else _as_parent(data_from)
        return res

    if f is None:
        return make
    return make(f)


def _has_no_required_args(func: Any, skip_first: bool = False) -> bool:
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

    def add(self, *resources: Resource) -> None:
        """Add resources (a transformer piped from a resource of the source, ...) to the
        source, selected, as dlt's ``source.resources.add``."""
        for res in resources:
            if not isinstance(res, Resource):
                raise ResourceError(f"source.resources.add takes resources, got {type(res)!r}")
            if res.name in self and self[res.name] is not res:
                raise ResourceError(f"source already has a resource named {res.name!r}")
            self[res.name] = res


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

    def add_limit(
        self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False
    ) -> Source:
        """``add_limit`` on every selected resource that is not a transformer (a transformer
        follows its parent's pages), as dlt's ``DltSource.add_limit``; returns the source."""
        for res in self.selected_resources.values():
            if not res.is_transformer:
                res.add_limit(max_items, max_time, count_rows)
        return self

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


def _make_schema(name: str, func: Callable[..., Any]) -> Schema:
    """The schema of a source: ``<name>_schema.yml`` beside the module, else a new one."""
    from loadstone.schema.files import find_source_schema_file, load_schema_file

    module = sys.modules.get(func.__module__)
    module_file = getattr(module, "__file__", None)  # a module of the user's (None: no file)
    found = find_source_schema_file(module_file, name) if module_file else None
    return load_schema_file(found) if found else Schema(name)


#: the factories ``@source`` made (``pipeline.run(my_source)`` calls one without arguments)
_SOURCE_FACTORIES: weakref.WeakSet[Callable[..., Source]] = weakref.WeakSet()


def is_source_factory(data: object) -> bool:
    """True for a function ``@source`` decorated (not yet called)."""
    try:
        return data in _SOURCE_FACTORIES
    except TypeError:  # unhashable data (a list, a dict) is never a factory
        return False


def source(
    func: Any = None,
    /,
    name: str | None = None,
    section: str | None = None,
    max_table_nesting: int | None = None,
    root_key: bool | None = None,
    schema: Schema | None = None,
    schema_contract: Any = None,
    spec: Any = None,
    parallelized: bool = False,
) -> Any:
    """Decorate a function returning resources (or data) into a source factory.

    Calling the decorated function returns a :class:`Source`. While the function body runs,
    ``loadstone.current.source_schema()`` returns the source's schema, so the body can
    change detections or hints before any data is read. Arguments defaulting to
    ``secrets.value``/``config.value`` are read from configuration when not passed.
    """
    reject_unsupported("source", spec=spec)

    def decorate(f: Callable[..., Any]) -> Callable[..., Source]:
        source_name = name or (schema.name if schema is not None else None) or f.__name__

        @functools.wraps(f)
        def factory(*args: Any, **kwargs: Any) -> Source:
            src_schema = schema.clone() if schema is not None else _make_schema(source_name, f)
            kwargs = inject(f, source_name, args, kwargs)
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

        _SOURCE_FACTORIES.add(factory)
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
