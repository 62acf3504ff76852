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
    height = 50 + len(groups) * (len(tools) * BAR + GAP) + 24
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
    x = LABEL
    for index, tool in enumerate(tools):
        parts.append(
            f'<rect x="{x}" y="{y + 2}" width="12" height="12" fill="{COLOURS[index]}"/>'
            f'<text x="{x + 16}" y="{y + 12}">{escape(tool)}</text>'
        )
        x += 22 + 8 * len(tool)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'
        "<style>.title{font-weight:bold;font-size:13px}.group{fill:#333}</style>"
        f'<rect width="{width}" height="{height}" fill="white"/>{"".join(parts)}</svg>\n'
    )


def main(argv: list[str]) -> int:
    text = chart(json.loads(FIGURES.read_text(encoding="utf-8")))
    if "--check" in argv:
        if not CHART.exists() or CHART.read_text(encoding="utf-8") != text:
            print("docs/performance/benchmark.svg differs: run python docs/gen/bench_chart.py")
            return 1
        return 0
    CHART.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
