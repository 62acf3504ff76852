"""The report's two pictures as inline SVG: the schema's tables, and the last run's timeline.

Drawn here rather than by a diagram library in the browser, so that the page needs no
network and no vendored JavaScript, and a test can read the picture's parts by their ids.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING

import attrs

from loadstone.schema import diagram

if TYPE_CHECKING:
    from loadstone.runtime.trace import PipelineTrace
    from loadstone.schema.stored import TStoredSchema, TTableSchema

BOX_WIDTH = 250
COLUMN_GAP = 70
HEADER = 24
ROW = 16
#: columns listed per table before "... N more"
MAX_ROWS = 24


@attrs.frozen
class Box:
    name: str
    x: int
    y: int
    height: int


def _depths(tables: Mapping[str, TTableSchema]) -> dict[str, int]:
    """Each data table's nesting depth; dlt's own tables go in a column after the deepest."""
    depths: dict[str, int] = {}
    for name in tables:
        depth, current = 0, name
        while (parent := tables[current].get("parent")) and parent in tables:
            if depth >= len(tables):  # a cycle in a hand-edited schema: stop
                break
            depth, current = depth + 1, parent
        depths[name] = depth
    data = [d for n, d in depths.items() if not n.startswith("_dlt")]
    last = max(data, default=-1) + 1
    return {n: (last if n.startswith("_dlt") else d) for n, d in depths.items()}


def _layout(tables: Mapping[str, TTableSchema]) -> dict[str, Box]:
    depths = _depths(tables)
    heights: dict[int, int] = {}
    boxes: dict[str, Box] = {}
    for name, table in tables.items():
        column = depths[name]
        shown = min(len(table["columns"]), MAX_ROWS + 1)
        height = HEADER + shown * ROW + 8
        y = heights.get(column, 10)
        boxes[name] = Box(name, 10 + column * (BOX_WIDTH + COLUMN_GAP), y, height)
        heights[column] = y + height + 20
    return boxes


def _table_box(box: Box, table: TTableSchema) -> str:
    kind = "dlt" if box.name.startswith("_dlt") else "data"
    parts = [
        f'<g class="table {kind}" id="table-{escape(box.name)}" data-table="{escape(box.name)}">',
        f'<rect x="{box.x}" y="{box.y}" width="{BOX_WIDTH}" height="{box.height}" rx="4"/>',
        f'<rect class="head" x="{box.x}" y="{box.y}" width="{BOX_WIDTH}" height="{HEADER}" rx="4"/>',
        f'<text class="name" x="{box.x + 8}" y="{box.y + 16}">{escape(box.name)}</text>',
    ]
    columns = list(table["columns"].items())
    for index, (name, column) in enumerate(columns[:MAX_ROWS]):
        y = box.y + HEADER + 13 + index * ROW
        keys = "".join(f" {k}" for k in diagram.column_keys(column))
        parts.append(f'<text x="{box.x + 8}" y="{y}">{escape(name)}</text>')
        parts.append(
            f'<text class="type" x="{box.x + BOX_WIDTH - 8}" y="{y}" text-anchor="end">'
            f"{escape(column['data_type'])}{keys}</text>"
        )
    if len(columns) > MAX_ROWS:
        y = box.y + HEADER + 13 + MAX_ROWS * ROW
        more = len(columns) - MAX_ROWS
        parts.append(f'<text class="more" x="{box.x + 8}" y="{y}">... {more} more columns</text>')
    parts.append("</g>")
    return "".join(parts)


def _edge(source: Box, target: Box, label: str) -> str:
    """A curve between two tables' headers, leaving and entering on the facing sides."""
    sy, ty = source.y + HEADER // 2, target.y + HEADER // 2
    bend = COLUMN_GAP // 2
    if target.x < source.x:
        sx, tx, out, into = source.x, target.x + BOX_WIDTH, -bend, bend
    elif target.x > source.x:
        sx, tx, out, into = source.x + BOX_WIDTH, target.x, bend, -bend
    else:  # same column: loop out on the right
        sx = tx = source.x + BOX_WIDTH
        out = into = bend
    return (
        f'<path class="ref" d="M{sx},{sy} C{sx + out},{sy} {tx + into},{ty} {tx},{ty}">'
        f"<title>{escape(label)}</title></path>"
    )


def schema_svg(stored: TStoredSchema) -> str:
    """The schema's tables as boxes, nested tables right of their parents, references drawn."""
    tables = diagram.tables_of(stored)
    boxes = _layout(tables)
    width = max((b.x + BOX_WIDTH for b in boxes.values()), default=BOX_WIDTH) + 20
    height = max((b.y + b.height for b in boxes.values()), default=40) + 20
    edges = [
        _edge(boxes[ref.table], boxes[ref.target], f"{ref.table}.{ref.column} -> {ref.target}")
        for ref in diagram.references(tables)
    ]
    body = "".join(edges) + "".join(_table_box(boxes[n], t) for n, t in tables.items())
    return (
        f'<svg id="schema-diagram" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">{body}</svg>'
    )


def _seconds(value: object) -> float | None:
    """A trace time (Unix seconds, or ISO text for the steps) as Unix seconds."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return dt.datetime.fromisoformat(str(value)).timestamp()


@attrs.frozen
class Bar:
    lane: str
    start: float
    end: float
    css: str
    title: str
    chunk: int | None = None


def timeline_bars(trace: PipelineTrace) -> list[Bar]:
    """The steps, then every timed chunk in the lane of the executor that ran it."""
    bars = []
    for name, step in (trace.get("steps") or {}).items():
        start, end = _seconds(step.get("started_at")), _seconds(step.get("finished_at"))
        if start is not None and end is not None:
            title = f"{name}: {end - start:.3f} s, {step.get('rows', 0)} rows"
            bars.append(Bar(f"step {name}", start, end, f"step {name}", title))
    for chunk in (trace.get("normalize") or {}).get("chunks") or []:
        start, end = _seconds(chunk.get("started_at")), _seconds(chunk.get("ended_at"))
        if start is None or end is None:
            continue
        title = (
            f"chunk {chunk['chunk']} (round {chunk.get('round', 0)}) on {chunk['executor']}: "
            f"{end - start:.3f} s wall, {float(chunk.get('cpu_seconds') or 0):.3f} s CPU"
        )
        bars.append(Bar(str(chunk["executor"]), start, end, "chunk", title, int(chunk["chunk"])))
    return bars


LABEL_WIDTH = 190
PLOT_WIDTH = 760
LANE = 26


def _axis(t0: float, span: float, bottom: int) -> str:
    ticks = []
    for i in range(6):
        x = LABEL_WIDTH + PLOT_WIDTH * i / 5
        ticks.append(
            f'<line class="tick" x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{bottom}"/>'
            f'<text class="axis" x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">'
            f"{span * i / 5:.2f} s</text>"
        )
    return "".join(ticks)


def timeline_svg(trace: PipelineTrace) -> str:
    """The last run as lanes: one per step, one per executor with a bar per chunk."""
    bars = timeline_bars(trace)
    if not bars:
        return '<p class="empty">The trace holds no timed steps.</p>'
    lanes = list(dict.fromkeys(bar.lane for bar in bars))
    t0 = min(bar.start for bar in bars)
    span = max(max(bar.end for bar in bars) - t0, 1e-3)
    height = len(lanes) * LANE + 24
    parts = [_axis(t0, span, len(lanes) * LANE)]
    for index, lane in enumerate(lanes):
        parts.append(f'<text class="lane" x="4" y="{index * LANE + 17}">{escape(lane[:28])}</text>')
    for bar in bars:
        x = LABEL_WIDTH + (bar.start - t0) / span * PLOT_WIDTH
        width = max((bar.end - bar.start) / span * PLOT_WIDTH, 1.5)
        y = lanes.index(bar.lane) * LANE + 4
        data = "" if bar.chunk is None else f' data-chunk="{bar.chunk}"'
        parts.append(
            f'<rect class="{bar.css}"{data} x="{x:.1f}" y="{y}" width="{width:.1f}" '
            f'height="{LANE - 8}"><title>{escape(bar.title)}</title></rect>'
        )
    total = LABEL_WIDTH + PLOT_WIDTH + 30
    return (
        f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{total}" '
        f'height="{height}" viewBox="0 0 {total} {height}">{"".join(parts)}</svg>'
    )
