"""``Resource``: an iterable of data items plus the table hints that go with it.

The data is a value (list, iterable, file path, DataFrame) or a function (generator, async
generator, or a function returning data); a *transformer* is a resource whose function is
called with each page of its parent. Mirrors dlt's ``DltResource`` so a dlt user ports a
pipeline by changing the import. Nothing here touches Spark or a destination.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import loadstone.exceptions as errors
from loadstone.exceptions import DataItemRequiredForDynamicTableHints, ResourceError
from loadstone.extract.incremental import Incremental, as_incremental
from loadstone.extract.injection import inject, section_of
from loadstone.extract.mark import TableNameMeta, stored_hints_of, unwrap
from loadstone.extract.pipe_iterator import pages_of
from loadstone.extract.pydantic_models import add_model_validator
from loadstone.extract.resource_hints import (
    HintFunctions,
    StoredHint,
    StoredHints,
    TableHints,
    check_hint_functions,
    cursor_column_hints,
    disposition_config,
    hints_of_item,
    merge_hints,
    nested_hints_by_path,
    split_hint_functions,
)
from loadstone.extract.resource_pipe import BoundPipe, CursorStep, Step, flatten
from loadstone.extract.resource_signature import (
    arguments_by_name,
    cursor_template,
    data_name,
    has_no_required_args,
    incremental_argument,
    require_arguments,
)
from loadstone.extract.resource_steps import ResourceSteps
from loadstone.extract.saved_state import StateDict, resource_state_of
from loadstone.extract.table_schema import declared_table
from loadstone.extract.table_variants import add_variant, variant_hints
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
    from loadstone.schema.stored import TColumnSchema


class Resource(ResourceSteps):
    """An iterable of data items with the table hints that go with it.

    The data is a value (list, iterable, file path, DataFrame) or a function (generator,
    async generator, or a function returning data). Iterating runs the function with its
    bound arguments, configured ``secrets.value`` arguments and a bound incremental cursor,
    then the steps added by ``add_map``/``add_filter``/``add_yield_map``/``add_limit``. A
    *transformer* is a resource whose function is called with each page of its parent.
    """

    def __init__(
        self,
        data: TDataItem,
        name: str,
        *,
        table_name: TTableHintTemplate[str] | None = None,
        hints: Mapping[str, StoredHint] | None = None,
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
        self._hints: StoredHints = dict(hints or {})
        self.section = section
        self.selected = selected
        self._args_bound = args_bound
        #: made by ``@resource`` from a generator function: calling it binds arguments, even
        #: when it needs none (``pipeline.run(users())``, dlt's everyday idiom)
        self._from_function = False
        self._call_args: tuple[TDataItem, ...] = ()
        self._call_kwargs: dict[str, TDataItem] = {}
        self._steps: list[Step] = []
        self._cursor_at: int | None = None
        self._incremental = incremental
        #: hints kept for other tables the resource fills (dlt's table variants)
        self._variants: dict[str, StoredHints] = {}
        #: the primary key as the code gave it ("id" or ["id"]): an incremental's row
        #: hashes differ between the two, as dlt's do (the stored hint is always a list)
        self.key_as_given: TColumnNames | None = None
        #: hints given as functions of the item (dlt's dynamic hints)
        self._hint_functions: HintFunctions = {}
        self._parent: Resource | None = None
        #: the name a parent copied by a child's ``with_name`` was copied from
        self._named_from: str | None = None
        self.is_transformer = False
        #: read on extract's thread pool (dlt's ``parallelized=True`` / ``parallelize()``)
        self.parallelized = False
        #: the source this resource belongs to (``@source`` sets it on its own copy)
        self.source_name: str | None = None

    @classmethod
    def from_data(
        cls,
        data: TDataItem,
        name: str | None = None,
        section: str | None = None,
        hints: Mapping[str, StoredHint] | None = None,
        selected: bool = True,
        data_from: Resource | None = None,
    ) -> Resource:
        """A resource of ``data`` (a value, an iterable or a function), as dlt's
        ``DltResource.from_data``; ``hints`` is the stored hint dict (``compute_table_hints``
        of another resource)."""
        if isinstance(data, Resource):
            return data
        made = resource_from(
            data, name, None, dict(hints or {}), selected=selected, section=section
        )
        if data_from is not None:
            made.is_transformer = True
            made._args_bound = has_no_required_args(data, skip_first=True)
            made._parent = data_from
        return made

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
        clone._steps, clone._cursor_at = list(self._steps), self._cursor_at
        clone._variants = dict(self._variants)
        clone.key_as_given = self.key_as_given
        clone._hint_functions = dict(self._hint_functions)
        clone._parent = self._parent
        clone.is_transformer = self.is_transformer
        clone.parallelized = self.parallelized
        clone.source_name = self.source_name
        for attr in _WRAPPED:  # the function's name and docs, as functools.update_wrapper set them
            if attr in self.__dict__:
                clone.__dict__[attr] = self.__dict__[attr]
        return clone

    # -- hints ----------------------------------------------------------------------------
    @property
    def table_name(self) -> TTableHintTemplate[str]:
        """The table the items go to: a name, or a function of the item (dynamic tables)."""
        return self._table_name if self._table_name is not None else self.name

    @table_name.setter
    def table_name(self, value: TTableHintTemplate[str]) -> None:
        self._table_name = value

    @property
    def has_dynamic_table_name(self) -> bool:
        """Whether the table is a function of each item (dlt's ``has_dynamic_table_name``)."""
        return callable(self._table_name)

    @property
    def write_disposition(self) -> TWriteDispositionConfig:
        return disposition_config(self._hints)  # a merge strategy given: dlt's dict form

    @write_disposition.setter
    def write_disposition(self, value: TWriteDispositionConfig) -> None:
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
    def columns(self) -> dict[str, TColumnSchema]:
        """The column hints, by name (dlt's read-only ``columns``; ``{}`` when none)."""
        return {name: dict(col) for name, col in (self._hints.get("columns") or {}).items()}  # type: ignore[misc]  # a stored column is a TColumnSchema

    @property
    def schema_contract(self) -> TSchemaContract | None:
        """The contract hint (dlt's read-only ``schema_contract``), ``None`` when not given."""
        found: TSchemaContract | None = self._hints.get("schema_contract")
        return found

    @property
    def table_format(self) -> TTableFormat | None:
        """The table format hint (dlt's read-only ``table_format``), ``None`` when not given."""
        found: TTableFormat | None = self._hints.get("table_format")
        return found

    @property
    def incremental(self) -> Incremental | None:
        return self._incremental or self._incremental_argument()[1]

    def set_incremental(self, new_incremental: Incremental | None) -> Incremental | None:
        """Set (or with ``None`` remove) the resource's cursor; returns it, as dlt's."""
        if new_incremental is not None and not isinstance(new_incremental, Incremental):
            raise TypeError(
                f"set_incremental takes loadstone.sources.incremental(...) or None, "
                f"got {new_incremental!r}"
            )
        self._incremental, self._cursor_at = new_incremental, None  # a new cursor goes last
        return new_incremental

    @property
    def hints(self) -> StoredHints:
        return dict(self._hints)

    def compute_table_hints(self) -> StoredHints:
        """The hints extract stores for this resource's table(s), with the cursor's column
        marked (``incremental: true``, as dlt's; a cursor argument's too)."""
        cursor = self.incremental
        return merge_hints(
            self._hints, cursor_column_hints(None if cursor is None else cursor.cursor_path)
        )

    @property
    def has_hint_functions(self) -> bool:
        """Whether a hint is a function of the item (dlt's dynamic hints)."""
        return bool(self._hint_functions)

    def hints_of_item(self, item: TDataItem) -> StoredHints | None:
        """The hints the hint functions give for ``item`` (``None`` when there are none)."""
        if not self._hint_functions:
            return None
        return hints_of_item(self._hint_functions, item)

    @property
    def table_variants(self) -> dict[str, StoredHints]:
        """The hints kept for other tables the resource fills, by table name (given with
        ``create_table_variant=True``; see :mod:`loadstone.extract.table_variants`)."""
        return dict(self._variants)

    def compute_table_schema(self, item: TDataItem = None, meta: object = None) -> StoredHints:
        """The table this resource declares, in dlt's dict form (name, columns, hints): for
        ``item`` when the name is a function of it, for the table a ``with_table_name``
        mark (``meta``) names; a variant of that table gives its hints, as dlt's."""
        table_name = meta.table_name if isinstance(meta, TableNameMeta) else self.table_name
        if callable(table_name):
            if item is None:
                raise DataItemRequiredForDynamicTableHints(self.name)
            table_name = table_name(item)
        routed = isinstance(meta, TableNameMeta) or callable(self._table_name)
        cursor = self._incremental  # a cursor argument shows once bound to a run, as dlt's
        marked = cursor_column_hints(None if cursor is None else cursor.cursor_path)
        hints = self._hints
        if item is not None and self._hint_functions:  # dlt's dynamic hints, for this item
            hints = merge_hints(hints, hints_of_item(self._hint_functions, item))
        variant = variant_hints(hints, self._variants, table_name) if routed else None
        return declared_table(hints if variant is None else variant, table_name, self.name, marked)

    def apply_hints(
        self,
        table_name: TTableHintTemplate[str] | None = None,
        parent_table_name: TTableHintTemplate[str] | None = None,
        write_disposition: TWriteDispositionConfig | None = None,
        columns: TAnySchemaColumns | None = None,
        primary_key: TColumnNames | None = None,
        merge_key: TColumnNames | None = None,
        incremental: Incremental | None = None,
        schema_contract: TSchemaContract | None = None,
        additional_table_hints: Mapping[str, object] | None = None,
        table_format: TTableFormat | None = None,
        file_format: TLoaderFileFormat | None = None,
        references: object = None,
        create_table_variant: bool = False,
        nested_hints: Mapping[str | tuple[str, ...], Mapping[str, StoredHint]] | None = None,
        max_table_nesting: int | None = None,
    ) -> Resource:
        """Change the hints in place (dlt semantics: columns merge, the rest replaces);
        with ``create_table_variant`` they are kept for the table ``table_name`` names and
        the resource's own hints stay. A hint may be a function of the item when the table
        name is one (dlt's dynamic hints)."""
        given, functions = split_hint_functions(
            {"write_disposition": write_disposition, "primary_key": primary_key,
             "merge_key": merge_key, "columns": columns, "schema_contract": schema_contract,
             "table_format": table_format, "file_format": file_format,
             "references": references}
        )  # fmt: skip
        names_table = table_name if create_table_variant or table_name is not None else None
        check_hint_functions(names_table or self._table_name, functions)
        if incremental is not None and not create_table_variant:
            self._incremental, self._cursor_at = as_incremental(incremental), None
        if table_name is not None and not create_table_variant:
            self._table_name = table_name
        new = TableHints(
            **given,
            max_table_nesting=max_table_nesting,
            nested_hints=nested_hints,
            additional_table_hints=additional_table_hints,
            parent_table_name=parent_table_name,  # type: ignore[arg-type]  # a name here
        ).stored()
        if create_table_variant:
            self._variants = add_variant(self._variants, table_name, new)
            return self
        self._hints = merge_hints(self._hints, new)
        if given.get("primary_key") is not None:
            self.key_as_given = given["primary_key"]
        self._hint_functions.update(functions)
        add_model_validator(self, columns, self._hints.get("schema_contract"))
        return self

    def merge_hints(
        self, hints_template: Mapping[str, StoredHint], create_table_variant: bool = False
    ) -> Resource:
        """Apply hints made by ``loadstone.mark.make_hints`` (dlt's ``merge_hints``): columns
        merge, the rest replaces; a ``table_name`` in them names the table, or with
        ``create_table_variant`` the table the hints are kept for; an ``incremental`` in
        them is the resource's cursor, as ``apply_hints(incremental=...)``."""
        new = stored_hints_of(hints_template)
        table_name = new.pop("name", None)
        if create_table_variant:
            self._variants = add_variant(self._variants, table_name, new)
            return self
        if hints_template.get("incremental") is not None:
            self._incremental = as_incremental(hints_template["incremental"])
            self._cursor_at = None
        if table_name is not None:
            self._table_name = table_name
        self._hints = merge_hints(self._hints, new)
        return self

    @property
    def nested_hints(self) -> dict[str | tuple[str, ...], StoredHints] | None:
        """The hints of nested tables by field name (a path tuple for deeper ones), ``None``
        when none were given (dlt's ``nested_hints``)."""
        return nested_hints_by_path(self._hints.get("x-nested-hints") or [])

    @property
    def parent_table_name(self) -> str | None:
        """The table's parent given by ``apply_hints(parent_table_name=...)`` (dlt's)."""
        parent = self._hints.get("parent")
        return None if parent is None else str(parent)

    # -- state ----------------------------------------------------------------------------
    @property
    def state(self) -> StateDict:
        """The resource's persistent state: the live dict while a pipeline extracts it, else
        a copy of what the active pipeline saved (dlt's ``DltResource.state``)."""
        return resource_state_of(self.name, self.source_name)

    # -- binding --------------------------------------------------------------------------
    def __call__(self, *args: TDataItem, **kwargs: TDataItem) -> Resource:
        """Bind arguments of a decorated function: a new resource, same hints and steps."""
        if not callable(self._data) or (self._args_bound and not self._from_function):
            raise errors.ResourceNotCallable(self.name)
        bound = self._clone()
        if callable(self.name):  # dlt: name=lambda args: ... names the resource by its arguments
            bound.name = self.name(
                arguments_by_name(self._data, self._skip_item(args), kwargs, defaults=True)
            )
        bound._call_args = args
        given = self._skip_item(args)
        bound._call_kwargs = inject(self._data, bound.name, given, kwargs, self.section)
        bound._args_bound = True
        bound._from_function = False
        return bound

    def bind(self, *args: TDataItem, **kwargs: TDataItem) -> Resource:
        """Bind arguments in place and return the resource itself (dlt's ``bind``; calling
        the resource binds them on a copy)."""
        bound = self(*args, **kwargs)
        self.name = bound.name
        self._call_args, self._call_kwargs = bound._call_args, bound._call_kwargs
        self._args_bound, self._from_function = True, False
        return self

    @property
    def requires_args(self) -> bool:
        """Whether the function has required parameters not bound yet, as dlt's: always for
        a transformer (its item is bound only when it runs)."""
        return self.is_transformer or (callable(self._data) and not self._args_bound)

    @property
    def args_bound(self) -> bool:
        """Whether arguments were bound (the decorated function was called), as dlt's."""
        return self._args_bound and not self._from_function

    @property
    def explicit_args(self) -> dict[str, TDataItem] | None:
        """The arguments the call passed, by parameter name (dlt's ``explicit_args``);
        ``None`` for data that is not a function."""
        if not self.args_bound:
            raise TypeError(f"Resource `{self.name}` is not yet parametrized")
        if not callable(self._data):
            return None
        try:
            arguments = arguments_by_name(
                self._data, self._skip_item(self._call_args), self._call_kwargs, defaults=False
            )
        except (TypeError, ValueError):
            return dict(self._call_kwargs)
        if self.is_transformer:
            arguments.pop(next(iter(arguments), ""), None)  # the item, not an argument
        return arguments

    def _skip_item(self, args: tuple[TDataItem, ...]) -> tuple[TDataItem, ...]:
        """For a transformer the first parameter is the item: bind past it."""
        return (None, *args) if self.is_transformer else args

    def _incremental_argument(self) -> tuple[str | None, Incremental | None]:
        """The function parameter holding an incremental cursor (passed or default)."""
        if not callable(self._data) or isinstance(self._data, Resource):
            return None, None
        return incremental_argument(self._data, self._skip_item(self._call_args), self._call_kwargs)

    def _bind_incremental(self) -> tuple[str | None, Incremental | None]:
        """(the parameter the cursor goes to, the cursor for this run, its start read from
        the resource's state); see :func:`resource_signature.cursor_template`."""
        func = self._data if callable(self._data) and not isinstance(self._data, Resource) else None
        args = self._skip_item(self._call_args)
        param, template = cursor_template(func, args, self._call_kwargs, self._incremental)
        if template is None:
            return None, None
        from loadstone import current

        state: StateDict = {}
        if template.end_value is None:  # a backfill range leaves no trace in state
            with contextlib.suppress(current.NoActiveContext):
                state = current.resource_state(self.name)
        return param, template.bind(self.name, state, self._incremental_key(), self._hints)

    def _incremental_key(self) -> TColumnNames | None:
        """The primary key an incremental deduplicates by, in the form the code gave it."""
        stored = self._hints.get("primary_key")
        given = self.key_as_given
        if given is not None and stored == ([given] if isinstance(given, str) else list(given)):
            return given
        return stored  # a stored hint: a list of names

    def _call_data(
        self, param: str | None, cursor: Incremental | None, item: TDataItem = None
    ) -> TDataItem:
        data = self._data
        if not callable(data) or (isinstance(data, Iterable) and not self.is_transformer):
            return data
        args = self._skip_item(self._call_args)
        if self.is_transformer:
            args = (item, *args[1:])
        kwargs = self._call_kwargs
        unbound = not self._args_bound or self._from_function
        if unbound:
            kwargs = inject(data, self.name, args, kwargs, self.section)
        if param is not None:
            kwargs = {**kwargs, param: cursor}
        try:
            return data(*args, **kwargs)
        except TypeError:  # checked only on failure: a transformer is called once per page
            if unbound:
                require_arguments(self.name, data, args, kwargs)
            raise

    # -- data -----------------------------------------------------------------------------
    @property
    def data_from(self) -> Resource | None:
        """The resource a transformer reads its pages from (``None`` for one that reads data
        of its own, or a transformer nothing is piped into yet)."""
        return self._parent

    def bind_run(self) -> BoundPipe:
        """This resource's part of one extract: its cursor bound to the state, its steps
        fresh (a limit counts per run), and the call that makes its data."""
        param, cursor = self._bind_incremental()
        steps = self._run_steps(CursorStep(cursor) if cursor is not None else None)
        call = functools.partial(self._call_data, param, cursor)
        return BoundPipe(call, tuple(steps), self.parallelized)

    def pages(self) -> Iterator[TDataItem]:
        """What the resource yields, page by page (a page is an item, a list or a mark); a
        transformer's parents run once to feed it."""
        return pages_of(self)

    def __iter__(self) -> Iterator[TDataItem]:
        """Items one by one; a yielded list (or a list page) counts as its items."""
        for page in self.pages():
            data, _ = unwrap(page)
            yield from flatten([data])

    @property
    def data(self) -> TDataItem:
        return self._data

    def parallelize(self) -> Resource:
        """Read this resource's pages (a transformer's calls) on extract's thread pool, beside
        the other resources, as dlt's ``parallelize``; returns the resource."""
        self.parallelized = True
        return self

    def with_name(self, new_name: str) -> Resource:
        """A copy under another name (and table, unless the table was named apart), as dlt's.

        A transformer's parent is copied too, named ``<parent>_<new_name>`` as dlt 1.31 names
        it: each renamed pipe keeps its own incremental state (``filesystem() | read_csv()``
        renamed twice must not share one cursor)."""
        clone = self._clone(new_name)
        if self._parent is not None:
            base = self._parent._named_from or self._parent.name
            clone._parent = self._parent._clone(f"{base}_{new_name}")
            clone._parent._named_from = base
        return clone

    def __or__(self, other: Resource | Callable[[TDataItem], TDataItem]) -> Resource:
        """``resource | transformer``: the transformer reads this resource's pages."""
        if isinstance(other, Resource) and other.is_transformer:
            piped = other._clone()
            piped._parent = self
            return piped
        if callable(other) and not isinstance(other, Resource):
            return self._clone().add_map(other)
        raise ResourceError(f"cannot pipe resource {self.name!r} into {other!r}")

    def __ror__(self, data: TDataItem) -> Resource:
        """``data | transformer``: plain data piped into a transformer."""
        if not self.is_transformer:
            raise ResourceError(f"resource {self.name!r} is not a transformer")
        return resource_from(data, f"{self.name}_input") | self

    def __repr__(self) -> str:
        return f"Resource(name={self.name!r}, table_name={self.table_name!r}, hints={self._hints})"


#: what ``functools.update_wrapper`` copies from a decorated function onto its resource
_WRAPPED = (*functools.WRAPPER_ASSIGNMENTS, "__wrapped__")


def resource_from(
    target: TDataItem,
    name: str | None,
    table_name: TTableHintTemplate[str] | None = None,
    hints: StoredHints | None = None,
    *,
    selected: bool = True,
    section: str | None = None,
    cursor: Incremental | None = None,
    default_name: str | None = None,
) -> Resource:
    """A resource of data or of a function (``@resource``'s work on a new target).

    As dlt: a function or generator names its resource; ``table_name`` only names the
    data's; ``default_name`` (the source being made) names nameless data last.
    """
    res_name = name or data_name(target) or (table_name if isinstance(table_name, str) else None)
    res_name = res_name or default_name
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
        section=section or (section_of(target) if is_function else None),
        args_bound=not is_function or has_no_required_args(target),
        incremental=cursor,
    )
    if is_function:
        functools.update_wrapper(res, target, updated=())  # type: ignore[arg-type,unused-ignore]  # a Resource wraps the function
        res._args_bound = has_no_required_args(target)
        res._from_function = True
    return res
