"""The run report: one self-contained HTML page about a pipeline and its last run.

``loadstone pipeline P report`` (or :func:`write_report`) writes it: the schema as a diagram,
rows per table, the load history from ``_dlt_loads``, and a timeline of the last run's steps
and of the chunks its normalize step ran (which executor, from when to when), read from the
trace. The page needs no network and no library: its pictures are SVG drawn here, its few
lines of JavaScript are its own, so it opens from a mail attachment or a CI artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.report.collect import ReportData, collect
from loadstone.report.render import render_html

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline

__all__ = ["ReportData", "collect", "render_html", "write_report"]


def write_report(pipeline: Pipeline, path: str | Path) -> Path:
    """Write the report of ``pipeline`` (a :class:`~loadstone.Pipeline`) to ``path``."""
    target = Path(path)
    target.write_text(render_html(collect(pipeline)), encoding="utf-8")
    return target.resolve()
