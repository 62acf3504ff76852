"""``Source``: a named group of resources sharing one schema, and the schema in effect while
a source function runs (``loadstone.current.source_schema()``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from loadstone.current import current_schema as current_schema
from loadstone.current import current_source_name as current_source_name
from loadstone.current import schema_context as schema_context
from loadstone.exceptions import ResourceError, ResourcesNotFoundError
from loadstone.extract.pipe_iterator import items_of
from loadstone.extract.resource import Resource
from loadstone.extract.saved_state import StateDict, saved_source_state
from loadstone.typing import TDataItem, TSchemaContract

if TYPE_CHECKING:
    from loadstone.runtime.load_info import LoadInfo
    from loadstone.schema.schema import Schema


def own_resources(resources: Sequence[Resource], source_name: str) -> list[Resource]:
    """Copies of ``resources`` for a source named ``source_name``, as dlt's sources hold:
    hints applied to them stay on the source, and a transformer piped from one of them reads
    the copy."""
    copies = {id(res): res._clone() for res in resources}
    for res in copies.values():
        res.source_name = source_name
        if res._parent is not None and id(res._parent) in copies:
            res._parent = copies[id(res._parent)]
    return list(copies.values())


def started_generators(resources: Sequence[Resource]) -> list[str]:
    """The names of ``resources`` whose data is a generator object already started: it
    cannot give its items again (dlt's ``SourceExhausted``). A transformer's parent is not
    looked at, as dlt does not."""
    return [
        res.name
        for res in resources
        if inspect.isgenerator(res.data) and inspect.getgeneratorstate(res.data) != "GEN_CREATED"
    ]


class Resources(dict[str, Resource]):
    """The resources of a source by name; ``selected`` lists the ones that will run."""

    def __init__(self, source_name: str | None = None, source_section: str | None = None) -> None:
        super().__init__()
        #: the source's name and configuration section (dlt's ``DltResourceDict`` members)
        self.source_name = source_name
        self.source_section = source_section

    @property
    def selected(self) -> dict[str, Resource]:
        return {name: res for name, res in self.items() if res.selected}

    def select(self, *names: str) -> Resources:
        unknown = [n for n in names if n not in self]
        if unknown:
            raise ResourcesNotFoundError(self.source_name or "", list(self), names)
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
            if self.source_name is not None:
                res.source_name = self.source_name
            self[res.name] = res


class Source:
    """A named group of resources sharing one schema."""

    def __init__(
        self,
        name: str,
        schema: Schema,
        resources: Sequence[Resource],
        *,
        section: str | None = None,
        max_table_nesting: int | None = None,
        root_key: bool | None = None,
        schema_contract: TSchemaContract | None = None,
    ) -> None:
        self.name = name
        self.schema = schema
        self.section = section
        self.max_table_nesting = max_table_nesting
        self.root_key = root_key
        self.schema_contract = schema_contract
        self.resources = Resources(name, section)
        for res in resources:
            if res.name in self.resources:
                raise ResourceError(f"source {name!r} has two resources named {res.name!r}")
            res.source_name = name
            self.resources[res.name] = res

    @classmethod
    def from_data(cls, schema: Schema, section: str | None, data: TDataItem) -> Source:
        """A source named after ``schema`` holding ``data`` (a resource, a function, or a
        list of them), as dlt's ``DltSource.from_data``; a source is returned as it is."""
        if isinstance(data, Source):
            return data
        items = data if isinstance(data, (list, tuple)) else [data]
        resources = [Resource.from_data(item) for item in items]
        return cls(schema.name, schema, own_resources(resources, schema.name), section=section)

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
        """A clone of the source with only the named resources selected, as dlt 1.31's: the
        source itself keeps its selection, so ``s.with_resources("a")`` followed by
        ``run(s)`` still loads every resource of ``s`` (``resources.select`` works in place)."""
        clone = self.clone()
        clone.resources.select(*names)
        return clone

    def clone(self, with_name: str | None = None) -> Source:
        """A copy with copies of the resources and of the schema (renamed with the source by
        ``with_name``), as dlt's ``DltSource.clone``: hints changed on it stay on it."""
        name = with_name or self.name
        schema = self.schema.clone(with_name=name) if with_name else self.schema.clone()
        clone = Source(
            name,
            schema,
            own_resources(list(self.resources.values()), name),
            section=self.section,
            max_table_nesting=self.max_table_nesting,
            root_key=self.root_key,
            schema_contract=self.schema_contract,
        )
        return clone

    def discover_schema(self, item: TDataItem = None) -> Schema:
        """A copy of the source's schema with the tables the selected resources declare
        (their hints, names normalized), as dlt's ``discover_schema``; a resource with a
        dynamic table name adds the table of ``item``, or none without one."""
        schema = self.schema.clone()
        for res in self.selected_resources.values():
            if res.has_dynamic_table_name and item is None:
                continue
            schema.update_table(res.compute_table_schema(item))
        return schema

    @property
    def exhausted(self) -> bool:
        """Whether a selected resource's data is a generator already started (run to its end
        or partly read: extracting the source again loads nothing, or not all), as dlt's."""
        return bool(started_generators(list(self.selected_resources.values())))

    def parallelize(self) -> Source:
        """Read every selected resource on extract's thread pool (dlt's ``parallelize``);
        returns the source."""
        for res in self.selected_resources.values():
            res.parallelize()
        return self

    @property
    def state(self) -> StateDict:
        """The source's persistent state: the live dict while a pipeline extracts it, else a
        copy of what the active pipeline saved (dlt's ``DltSource.state``)."""
        from loadstone import current

        try:
            if current.source().name == self.name:
                return current.source_state()
        except current.NoActiveContext:
            pass
        return saved_source_state(self.name)

    @property
    def run(self) -> Callable[..., LoadInfo]:
        """``source.run(destination=..., ...)``: ``run`` of the active pipeline (a default one
        when there is none) with this source as the data, as dlt's."""
        from loadstone import current

        return functools.partial(current.pipeline().run, self)

    def __getattr__(self, name: str) -> Resource:
        resources = self.__dict__.get("resources")
        if resources is not None and name in resources:
            found: Resource = resources[name]
            return found
        raise AttributeError(f"source has no attribute or resource {name!r}")

    def __iter__(self) -> Iterator[TDataItem]:
        """The items of the selected resources, evaluated together as an extract does: a
        parent feeding several transformers is read once."""
        return items_of(list(self.selected_resources.values()))

    def __repr__(self) -> str:
        return f"Source(name={self.name!r}, resources={list(self.resources)})"
