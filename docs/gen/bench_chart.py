"""Draw the benchmark chart (docs/performance/benchmark.svg) from recorded figures.

The figures are the ones the benchmark scripts printed (bench/benchmark.py ...), written down
in ``docs/performance/figures.json`` with where they came from; nothing is measured here.
``python docs/gen/bench_chart.py`` rewrites the SVG, ``--check`` exits 1 when the committed
one differs (``tests/test_docs_generated.py``).
"""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "performance" / "figures.json"
CHART = ROOT / "docs" / "performance" / "benchmark.svg"
COLOURS = ("#7c9c2c", "#8fa8c8", "#c9b79c", "#b0707a")
LABEL, BAR, GAP, PLOT = 170, 16, 14, 520


def chart(figures: dict[str, Any]) -> str:
    """Horizontal grouped bars: one group per input size, one bar per tool, values written."""
    groups = figures["groups"]
    tools = list(dict.fromkeys(t for g in groups for t in g["values"]))
    top = max(v for g in groups for v in g["values"].values())
    width = LABEL + PLOT + 90
    parts = [f'<text x="10" y="20" class="title">{escape(figures["title"])}</text>']
    y = 40
    for group in groups:
        parts.append(f'<text x="10" y="{y + 12}" class="group">{escape(group["label"])}</text>')
        for index, tool in enumerate(tools):
            value = group["values"].get(tool)
            if value is None:
                continue
            length = max(1.0, value / top * PLOT)
            parts.append(
                f'<rect x="{LABEL}" y="{y}" width="{length:.1f}" height="{BAR - 3}" '
                f'fill="{COLOURS[index % len(COLOURS)]}"><title>{escape(tool)}: {value} '
                f"{figures['unit']}</title></rect>"
                f'<text x="{LABEL + length + 5:.1f}" y="{y + 11}">{value:g} {figures["unit"]}'
                f"</text>"
            )
            y += BAR
        y += GAP
    parts.extend(_legend(tools, y))
    y += 24
    steps = figures.get("steps", [])
    if steps:
        parts.extend(_step_bars(steps, figures["unit"], top, y))
        y += 30 + len(steps) * (BAR + 4) + 24
    height = y + 6
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'
        "<style>.title{font-weight:bold;font-size:13px}.group{fill:#333}</style>"
        f'<rect width="{width}" height="{height}" fill="white"/>{"".join(parts)}</svg>\n'
    )


def _legend(names: list[str], y: int) -> list[str]:
    parts, x = [], LABEL
    for index, name in enumerate(names):
        parts.append(
            f'<rect x="{x}" y="{y + 2}" width="12" height="12" '
            f'fill="{COLOURS[index % len(COLOURS)]}"/>'
            f'<text x="{x + 16}" y="{y + 12}">{escape(name)}</text>'
        )
        x += 22 + 8 * len(name)
    return parts


def _step_bars(steps: list[dict[str, Any]], unit: str, top: float, y: int) -> list[str]:
    """loadstone's run per size as one bar of its steps (extract, normalize, load), on the
    scale of the bars above."""
    names = list(dict.fromkeys(step for row in steps for step in row["values"]))
    parts = [f'<text x="10" y="{y + 14}" class="title">loadstone by step ({unit})</text>']
    y += 24
    for row in steps:
        parts.append(f'<text x="10" y="{y + 12}" class="group">{escape(row["label"])}</text>')
        x = float(LABEL)
        for index, name in enumerate(names):
            value = row["values"].get(name, 0.0)
            length = value / top * PLOT
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="{BAR - 3}" '
                f'fill="{COLOURS[index % len(COLOURS)]}"><title>{escape(name)}: {value} '
                f"{unit}</title></rect>"
            )
            x += length
        total = sum(row["values"].values())
        parts.append(f'<text x="{x + 5:.1f}" y="{y + 11}">{total:.2f} {unit} in steps</text>')
        y += BAR + 4
    return parts + _legend(names, y + 4)


def write_chart(figures: Path = FIGURES, target: Path = CHART) -> None:
    """The SVG of ``figures`` (a figures.json) written to ``target``."""
    target.write_text(chart(json.loads(figures.read_text(encoding="utf-8"))), encoding="utf-8")


def main(argv: list[str]) -> int:
    text = chart(json.loads(FIGURES.read_text(encoding="utf-8")))
    if "--check" in argv:
        if not CHART.exists() or CHART.read_text(encoding="utf-8") != text:
            print("docs/performance/benchmark.svg differs: run python docs/gen/bench_chart.py")
            return 1
        return 0
    write_chart()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
