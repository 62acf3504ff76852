"""The graph of pipes one extract evaluates: every resource once, forked to its transformers.

A transformer reads the pages of its parent (``parent | transformer``, ``data_from=``); dlt
evaluates a parent once per run and forks each of its pages to every transformer that reads
it. :func:`pipe_graph` builds that graph from the resources a run selected: each resource is
a :class:`PipeNode` (one per resource object, however many transformers read it), and a
parent that was not selected joins the graph unselected: it runs, once, to feed its
children, and loads nothing itself. :func:`mermaid` draws the graph for the docs and for
users who want to see what a source will run.

    users ──> orders ──> order_lines
         └──> addresses

Evaluating the graph is :mod:`loadstone.extract.pipe_iterator`'s job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from loadstone.exceptions import ResourceError
from loadstone.extract.resource_pipe import BoundPipe


class PipeResource(Protocol):
    """What the graph needs of a resource (:class:`~loadstone.extract.resource.Resource`)."""

    name: str
    is_transformer: bool

    @property
    def data_from(self) -> PipeResource | None: ...

    def bind_run(self) -> BoundPipe: ...


@attrs.define(eq=False)
class PipeNode:
    """One resource of the graph; ``selected`` nodes load what they yield.

    A *tap* is a selected transformer that takes its parent's pages as they are, without
    calling its function: the extract step records what it reads in place (a file reader
    piped from a listing, :mod:`loadstone.extract.file_pipes`).
    """

    resource: PipeResource
    selected: bool
    parent: PipeNode | None = None
    children: list[PipeNode] = attrs.Factory(list)
    tap: bool = False
    #: the children in the order dlt hands them a page (see :func:`pipe_graph`)
    forks: list[PipeNode] = attrs.Factory(list)

    @property
    def name(self) -> str:
        return self.resource.name


@attrs.frozen
class PipeGraph:
    """The nodes of one extract: ``roots`` read data, the rest read their parent's pages.

    ``roots`` are in dlt's read order: each where the last selected resource it feeds is
    (``[a | t, b, a]`` reads ``b`` first, then ``a``).

    ``nodes`` lists every node, selected ones in the order the run gave them, each
    unselected parent before the first of its children.
    """

    roots: tuple[PipeNode, ...]
    nodes: tuple[PipeNode, ...]

    @property
    def selected(self) -> tuple[PipeNode, ...]:
        return tuple(node for node in self.nodes if node.selected)


def pipe_graph(resources: Sequence[PipeResource], taps: Sequence[PipeResource] = ()) -> PipeGraph:
    """The graph that runs ``resources`` (all selected), each parent once.

    A transformer's parent that is not among ``resources`` joins unselected; ``taps`` are
    selected transformers that receive their parent's pages as they are.
    """
    by_id: dict[int, PipeNode] = {}
    order: list[PipeNode] = []
    tap_ids = {id(res) for res in taps}

    def node_of(res: PipeResource, selected: bool) -> PipeNode:
        found = by_id.get(id(res))
        if found is not None:
            found.selected = found.selected or selected
            return found
        parent = None
        if res.is_transformer:
            if res.data_from is None:
                raise ResourceError(
                    f"transformer {res.name!r} has no input: pipe a resource into it "
                    f"(resource | {res.name}) or give data_from="
                )
            parent = node_of(res.data_from, False)
        node = by_id[id(res)] = PipeNode(res, selected, parent, tap=id(res) in tap_ids)
        if parent is not None:
            parent.children.append(node)
        order.append(node)
        return node

    picked = [node_of(res, True) for res in (*resources, *taps)]
    heads = [_fork_up(node) for node in reversed(picked)]
    # dlt reads the roots in the order of the last resource each one feeds
    roots = tuple(reversed(dict.fromkeys(heads)))
    return PipeGraph(roots, tuple(order))


def _fork_up(node: PipeNode) -> PipeNode:
    """Walk from ``node`` to its root, adding each node to its parent's ``forks`` if new;
    the root. Walked from the last selected resource back, this is dlt's order of forks."""
    while node.parent is not None:
        if all(fork is not node for fork in node.parent.forks):
            node.parent.forks.append(node)
        node = node.parent
    return node


def mermaid(graph: PipeGraph) -> str:
    """The graph as a Mermaid flowchart: selected resources as boxes, parents that only
    feed others as rounded boxes, an arrow from each parent to each transformer."""
    lines = ["flowchart LR"]
    ids = {id(node): f"n{number}" for number, node in enumerate(graph.nodes)}
    for node in graph.nodes:
        shape = '["{}"]' if node.selected else '("{}")'
        lines.append(f"    {ids[id(node)]}{shape.format(node.name)}")
    for node in graph.nodes:
        for child in node.children:
            lines.append(f"    {ids[id(node)]} --> {ids[id(child)]}")
    return "\n".join(lines)
