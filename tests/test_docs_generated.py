"""The generated docs equal what their generators write today, so they cannot drift:
the CLI and configuration references (docs/gen/reference.py), the benchmark chart
(docs/gen/bench_chart.py) and the sample's schema diagram on docs/schema.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("script", ["docs/gen/reference.py", "docs/gen/bench_chart.py"])
def test_committed_pages_equal_what_the_code_generates(script: str) -> None:
    done = subprocess.run(
        [sys.executable, script, "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_sample_diagram_on_the_schema_page_is_what_the_pipeline_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import loadstone

    monkeypatch.setenv("LOADSTONE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    pipeline = loadstone.pipeline("quickstart", destination="duckdb")
    pipeline.run(str(ROOT / "examples" / "data" / "orders.jsonl"), table_name="orders")
    page = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    drawn = re.search(r"```mermaid\n(.*?)```", page, re.S)
    assert drawn is not None
    assert drawn.group(1) == pipeline.default_schema.to_mermaid()
