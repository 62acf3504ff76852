"""The report's HTML: sections, tables, styles and a few lines of its own JavaScript."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING

from loadstone.report.collect import ReportData
from loadstone.report.svg import schema_svg, timeline_svg

if TYPE_CHECKING:
    from loadstone.runtime.trace import PipelineTrace

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 2rem 3rem; color: #1c1c34; }
h1 { font-size: 1.5rem; margin-top: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table.grid { border-collapse: collapse; } .grid td, .grid th { padding: 2px 10px;
  border-bottom: 1px solid #ddd; text-align: left; } .grid td.num { text-align: right; }
.bar { display: inline-block; height: 10px; background: #7c9c2c; }
.scroll { overflow-x: auto; border: 1px solid #eee; padding: 6px; }
svg text { font: 11px monospace; fill: #1c1c34; }
g.table rect { fill: #f6f4f1; stroke: #8a8a96; } g.table rect.head { fill: #bbca06; }
g.table.dlt rect.head { fill: #d9d4ce; } g.table text.name { font-weight: bold; }
g.table text.type, g.table text.more { fill: #666; } g.table.highlight rect { stroke: #c0392b;
  stroke-width: 2.5; } path.ref { fill: none; stroke: #555; stroke-width: 1.2; }
rect.step { fill: #8fa8c8; } rect.chunk { fill: #7c9c2c; cursor: pointer; }
rect.chunk.selected { fill: #c0392b; } line.tick { stroke: #eee; } text.axis { fill: #888; }
.error { color: #c0392b; } .muted { color: #777; }
#chunk-detail { min-height: 1.4em; font-family: monospace; }
"""

#: highlight a table's box when its row is pointed at; show a chunk's details on click
SCRIPT = """
document.querySelectorAll("tr[data-table]").forEach(function (row) {
  var box = document.getElementById("table-" + row.dataset.table);
  if (!box) { return; }
  row.addEventListener("mouseenter", function () { box.classList.add("highlight"); });
  row.addEventListener("mouseleave", function () { box.classList.remove("highlight"); });
});
document.querySelectorAll("rect.chunk").forEach(function (bar) {
  bar.addEventListener("click", function () {
    document.querySelectorAll("rect.chunk.selected").forEach(function (other) {
      other.classList.remove("selected");
    });
    bar.classList.add("selected");
    document.getElementById("chunk-detail").textContent = bar.textContent;
  });
});
"""


class Markup(str):
    """A cell that is already HTML (the bars): placed as it is, not escaped."""


def _cell(value: object) -> str:
    if isinstance(value, Markup):
        return f"<td>{value}</td>"
    if isinstance(value, (int, float)):
        return f'<td class="num">{value}</td>'
    return f"<td>{'' if value is None else escape(str(value))}</td>"


def _grid(
    element_id: str, header: Sequence[str], rows: Iterable[Sequence[object]], data: str = ""
) -> str:
    """An HTML table; a row whose first cell is a data table carries ``data-table``."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(_cell(value) for value in row)
        attribute = f' data-{data}="{escape(str(row[0]))}"' if data else ""
        body.append(f"<tr{attribute}>{cells}</tr>")
    return f'<table class="grid" id="{element_id}"><tr>{head}</tr>{"".join(body)}</table>'


def _rows_section(report: ReportData) -> str:
    if report.destination_error:
        return f'<p class="error">The destination could not be read: {escape(report.destination_error)}</p>'
    if not report.row_counts:
        return '<p class="muted">No data tables at the destination yet.</p>'
    most = max(rows for _, rows in report.row_counts) or 1
    rows = [
        (
            table,
            count,
            Markup(f'<span class="bar" style="width:{max(1, 160 * count // most)}px"></span>'),
        )
        for table, count in report.row_counts
    ]
    return _grid("row-counts", ("table", "rows", ""), rows, "table")


def _chunks_section(trace: PipelineTrace) -> str:
    normalize = trace.get("normalize") or {}
    chunks = normalize.get("chunks") or []
    where = normalize.get("remote") or normalize.get("master") or "this machine"
    intro = (
        f"<p>Engine <b>{escape(str(normalize.get('engine', '-')))}</b> on "
        f"{escape(str(where))}: {len(chunks)} chunk run(s).</p>"
    )
    rows = [
        (
            chunk["chunk"],
            chunk.get("round", 0),
            chunk["executor"],
            "C" if chunk.get("native") else "Python",
            round(float(chunk.get("cpu_seconds") or 0), 3),
            round(float(chunk.get("wall_seconds") or 0), 3),
            chunk.get("input"),
        )
        for chunk in chunks
    ]
    header = ("chunk", "round", "executor", "engine", "CPU s", "wall s", "input")
    return intro + _grid("chunks", header, rows)


def _steps_section(trace: PipelineTrace) -> str:
    rows = [
        (name, round(float(step.get("elapsed") or 0), 3), step.get("rows", 0), step.get("files"))
        for name, step in (trace.get("steps") or {}).items()
    ]
    failed = trace.get("error")
    error = f'<p class="error">The run failed: {escape(str(failed))}</p>' if failed else ""
    return error + _grid("steps", ("step", "seconds", "rows", "files"), rows)


def _run_sections(trace: PipelineTrace | None) -> list[str]:
    if trace is None:
        return ["<h2>Last run</h2>", '<p class="muted">The pipeline has no trace yet.</p>']
    return [
        "<h2>Last run</h2>",
        _steps_section(trace),
        "<h2>Timeline of the last run</h2>",
        '<p class="muted">One lane per step and one per executor; a bar per chunk. Point at '
        "a bar for its times, click a chunk for its details here:</p>",
        '<div id="chunk-detail"></div>',
        f'<div class="scroll">{timeline_svg(trace)}</div>',
        "<h2>Chunks</h2>",
        _chunks_section(trace),
    ]


def render_html(report: ReportData) -> str:
    """The whole page, self-contained (inline styles, SVG and script; no network)."""
    generated = dt.datetime.fromtimestamp(report.generated_at, dt.timezone.utc)
    loads = [(r.load_id, r.schema_name, r.status, r.inserted_at) for r in report.loads]
    title = f"loadstone report: {report.pipeline_name}"
    sections = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">Destination <b>{escape(report.destination)}</b>, dataset '
        f"<b>{escape(report.dataset)}</b>, schema <b>{escape(str(report.schema.get('name')))}</b>"
        f" version {escape(str(report.schema.get('version')))}; written "
        f"{generated:%Y-%m-%d %H:%M:%S} UTC.</p>",
        "<h2>Rows per table</h2>",
        _rows_section(report),
        "<h2>Schema</h2>",
        f'<div class="scroll">{schema_svg(report.schema)}</div>',
        "<h2>Load history</h2>",
        _grid("loads", ("load_id", "schema", "status", "inserted_at"), loads)
        if loads
        else '<p class="muted">No completed loads.</p>',
        *_run_sections(report.trace),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(sections)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )
