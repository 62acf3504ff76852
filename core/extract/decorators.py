"""``@resource``, ``@transformer`` and ``@source``: dlt's decorators, so a dlt user ports a
pipeline by changing the import.

``@resource`` makes a :class:`~loadstone.extract.resource.Resource` from data or a function;
``@source`` makes a factory that, called, runs the function with the source's schema in
effect and groups what it returns into a :class:`~loadstone.extract.source.Source`. Each
takes dlt's arguments by dlt's names; the overloads say what a call returns (a decorator
without data, a resource with it).
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias, TypedDict, TypeGuard, Union, overload

from loadstone.exceptions import ArgumentsOverloadException
from loadstone.extract.incremental import Incremental, as_incremental
from loadstone.extract.injection import inject, register_spec, section_of
from loadstone.extract.pydantic_models import add_model_validator
from loadstone.extract.resource import Resource, resource_from
from loadstone.extract.resource_hints import (
    StoredHint,
    TableHints,
    check_hint_functions,
    merge_hints,
    split_hint_functions,
)
from loadstone.extract.resource_signature import data_name, has_no_required_args
from loadstone.extract.source import Source, current_source_name, own_resources, schema_context
from loadstone.schema.schema import Schema
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TDataItem,
    TLoaderFileFormat,
    TSchemaContract,
    TTableFormat,
    TTableHintTemplate,
    TWriteDispositionConfig,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: a resource name, or a function of the call's arguments (by name) that returns it
ResourceName: TypeAlias = Union[str, Callable[[dict[str, TDataItem]], str]]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
#: ``nested_hints=``: a field name or path tuple -> ``make_nested_hints(...)``
NestedHints: TypeAlias = Mapping[str | tuple[str, ...], Mapping[str, StoredHint]]
#: a generator function (or other callable) a decorator turns into a resource or source
DataFunction: TypeAlias = Callable[..., TDataItem]


class TableOptions(TypedDict, total=False):
    """The keyword arguments ``@resource`` and ``@transformer`` share (dlt's names)."""

    name: ResourceName | None
    table_name: TTableHintTemplate[str] | None
    max_table_nesting: int | None
    write_disposition: TWriteDispositionConfig | None
    columns: TAnySchemaColumns | None
    primary_key: TColumnNames | None
    merge_key: TColumnNames | None
    schema_contract: TSchemaContract | None
    table_format: TTableFormat | None
    file_format: TLoaderFileFormat | None
    references: object
    nested_hints: NestedHints | None
    selected: bool
    spec: object
    parallelized: bool
    section: str | None
    standalone: bool | None


class ResourceOptions(TableOptions, total=False):
    """``@resource``'s keyword arguments: the shared ones plus a cursor and a parent."""

    incremental: Incremental | Mapping[str, object] | None
    data_from: TDataItem


@overload
def resource(
    data: None = None, /, **options: Unpack[ResourceOptions]
) -> Callable[[TDataItem], Resource]: ...


@overload
def resource(data: TDataItem, /, **options: Unpack[ResourceOptions]) -> Resource: ...


def resource(
    data: TDataItem = None,
    /,
    name: ResourceName | None = None,
    table_name: TTableHintTemplate[str] | None = None,
    max_table_nesting: int | None = None,
    write_disposition: TWriteDispositionConfig | None = None,
    columns: TAnySchemaColumns | None = None,
    primary_key: TColumnNames | None = None,
    merge_key: TColumnNames | None = None,
    schema_contract: TSchemaContract | None = None,
    table_format: TTableFormat | None = None,
    file_format: TLoaderFileFormat | None = None,
    references: object = None,
    nested_hints: NestedHints | None = None,
    selected: bool = True,
    spec: object = None,
    parallelized: bool = False,
    incremental: Incremental | Mapping[str, object] | None = None,
    section: str | None = None,
    standalone: bool | None = None,
    data_from: TDataItem = None,
) -> Resource | Callable[[TDataItem], Resource]:
    """Make a resource from data or decorate a generator function (``@resource``/``@resource(...)``).

    Works like ``dlt.resource``: the table name defaults to the resource name, which defaults
    to the function name; hints go to the table(s) the resource fills. ``parallelized`` reads
    the data on extract's thread pool (:mod:`loadstone.extract.pipe_iterator`);
    ``standalone`` changes nothing loaded and is accepted;
    ``spec`` is a class whose attributes default the configured arguments.

    Long because dlt's 21 arguments take 22 lines of signature; the body is short.
    """
    given, functions = split_hint_functions(
        {"write_disposition": write_disposition, "primary_key": primary_key,
         "merge_key": merge_key, "columns": columns, "schema_contract": schema_contract,
         "table_format": table_format, "file_format": file_format, "references": references}
    )  # fmt: skip
    check_hint_functions(table_name, functions)  # dlt's dynamic hints need a dynamic name
    hints = TableHints(
        **given, max_table_nesting=max_table_nesting, nested_hints=nested_hints
    ).stored()
    cursor = None if incremental is None else as_incremental(incremental)

    def make(target: TDataItem) -> Resource:
        register_spec(target, spec)
        if isinstance(target, Resource):
            res = target._clone(name)  # type: ignore[arg-type]  # a callable name is resolved on call
            if table_name is not None:
                res._table_name = table_name
            res._hints = merge_hints(target.hints, hints)
            res.selected = selected
            res.section = section or target.section
            res._incremental = cursor or target._incremental
        else:
            res = resource_from(
                target,
                name,  # type: ignore[arg-type]  # a callable name is resolved on call
                table_name,
                hints,
                selected=selected,
                section=section,
                cursor=cursor,
                default_name=current_source_name(),
            )
        if data_from is not None:
            res.is_transformer = True
            res._parent = _as_parent(data_from)
        res.parallelized = parallelized or res.parallelized
        if given.get("primary_key") is not None:
            res.key_as_given = given["primary_key"]
        res._hint_functions.update(functions)
        add_model_validator(res, columns, schema_contract)  # columns=<pydantic model>
        return res

    if data is None:
        return make
    return make(data)


def _as_parent(data_from: TDataItem) -> Resource:
    """``data_from=``: a resource, or data made into one."""
    if isinstance(data_from, Resource):
        return data_from
    return resource_from(data_from, data_name(data_from) or "data_from")


@overload
def transformer(
    f: None = None, /, data_from: TDataItem = None, **options: Unpack[TableOptions]
) -> Callable[[DataFunction], Resource]: ...


@overload
def transformer(
    f: DataFunction, /, data_from: TDataItem = None, **options: Unpack[TableOptions]
) -> Resource: ...


def transformer(
    f: DataFunction | None = None,
    /,
    data_from: TDataItem = None,
    name: ResourceName | None = None,
    table_name: TTableHintTemplate[str] | None = None,
    max_table_nesting: int | None = None,
    write_disposition: TWriteDispositionConfig | None = None,
    columns: TAnySchemaColumns | None = None,
    primary_key: TColumnNames | None = None,
    merge_key: TColumnNames | None = None,
    schema_contract: TSchemaContract | None = None,
    table_format: TTableFormat | None = None,
    file_format: TLoaderFileFormat | None = None,
    references: object = None,
    nested_hints: NestedHints | None = None,
    selected: bool = True,
    spec: object = None,
    parallelized: bool = False,
    section: str | None = None,
    standalone: bool | None = None,
) -> Resource | Callable[[DataFunction], Resource]:
    """A resource whose function takes each page of another resource (``@transformer``).

    ``data_from`` names the input; without it, pipe one in: ``users | user_details``.
    """

    def make(func: DataFunction) -> Resource:
        res = resource(
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
            nested_hints=nested_hints,
            references=references,
            selected=selected,
            parallelized=parallelized,
            section=section,
            spec=spec,
        )
        res.is_transformer = True
        res._args_bound = has_no_required_args(func, skip_first=True)
        res._parent = None if data_from is None else _as_parent(data_from)
        return res

    if f is None:
        return make
    return make(f)


def _make_schema(name: str, func: DataFunction) -> Schema:
    """The schema of a source: ``<name>_schema.yml`` beside the module, else a new one."""
    from loadstone.schema.files import find_source_schema_file, load_schema_file

    module = sys.modules.get(func.__module__)
    module_file = getattr(module, "__file__", None)  # a module of the user's (None: no file)
    found = find_source_schema_file(module_file, name) if module_file else None
    return load_schema_file(found) if found else Schema(name)


#: the factories ``@source`` made (``pipeline.run(my_source)`` calls one without arguments)
_SOURCE_FACTORIES: weakref.WeakSet[Callable[..., Source]] = weakref.WeakSet()


def is_source_factory(data: object) -> TypeGuard[Callable[..., Source]]:
    """True for a function ``@source`` decorated (not yet called)."""
    try:
        return data in _SOURCE_FACTORIES
    except TypeError:  # unhashable data (a list, a dict) is never a factory
        return False


class SourceOptions(TypedDict, total=False):
    """``@source``'s keyword arguments (dlt's names)."""

    name: str | None
    section: str | None
    max_table_nesting: int | None
    root_key: bool | None
    schema: Schema | None
    schema_contract: TSchemaContract | None
    spec: object
    parallelized: bool


@overload
def source(
    func: None = None, /, **options: Unpack[SourceOptions]
) -> Callable[[DataFunction], Callable[..., Source]]: ...


@overload
def source(func: DataFunction, /, **options: Unpack[SourceOptions]) -> Callable[..., Source]: ...


def source(
    func: DataFunction | None = None,
    /,
    name: str | None = None,
    section: str | None = None,
    max_table_nesting: int | None = None,
    root_key: bool | None = None,
    schema: Schema | None = None,
    schema_contract: TSchemaContract | None = None,
    spec: object = None,
    parallelized: bool = False,
) -> Callable[..., Source] | Callable[[DataFunction], Callable[..., Source]]:
    """Decorate a function returning resources (or data) into a source factory.

    Calling the decorated function returns a :class:`Source`. While the function body runs,
    ``loadstone.current.source_schema()`` returns the source's schema, so the body can
    change detections or hints before any data is read. Arguments defaulting to
    ``secrets.value``/``config.value`` are read from configuration when not passed.
    A ``schema`` names the source: a ``name`` beside it is refused, as dlt refuses it.
    """
    if name is not None and schema is not None:
        raise ArgumentsOverloadException(
            "`name` has no effect when `schema` argument is present", "source"
        )

    def decorate(f: DataFunction) -> Callable[..., Source]:
        register_spec(f, spec)
        source_name = name or (schema.name if schema is not None else None) or f.__name__

        @functools.wraps(f)
        def factory(*args: TDataItem, **kwargs: TDataItem) -> Source:
            src_schema = schema.clone() if schema is not None else _make_schema(source_name, f)
            kwargs = inject(f, source_name, args, kwargs, section)
            with schema_context(src_schema, source_name):
                returned = f(*args, **kwargs)
                resources = own_resources(_resources_of(returned, source_name), source_name)
            if parallelized:
                for res in resources:
                    res.parallelized = True
            return Source(
                source_name,
                src_schema,
                resources,
                section=section or section_of(f),
                max_table_nesting=max_table_nesting,
                root_key=root_key,
                schema_contract=schema_contract,
            )

        _SOURCE_FACTORIES.add(factory)
        return factory

    if func is None:
        return decorate
    return decorate(func)


def _resources_of(returned: TDataItem, source_name: str) -> list[Resource]:
    """What a source function returned, as resources (plain data: one named like the
    source)."""
    if isinstance(returned, Resource):
        return [returned]
    if returned is None:
        return []
    if isinstance(returned, (list, tuple)) and all(isinstance(r, Resource) for r in returned):
        return [r for r in returned if isinstance(r, Resource)]
    if inspect.isgenerator(returned):
        items: list[TDataItem] = list(returned)
        if items and all(isinstance(r, Resource) for r in items):
            return items
        return [Resource(items, source_name)]
    return [Resource(returned, source_name)]
