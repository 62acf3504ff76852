"""``loadstone pipeline P report`` in a real browser: Debian's Chromium, headless, driven by
Playwright (its own browser download is never used). The page of a real run renders without
a console error and shows the run's tables and chunks. No Chromium is a failure, not a skip:
``.ci/run`` installs it (apt-get install chromium)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _loadstone(folder: Path, *args: str) -> str:
    env = {
        **os.environ,
        "LOADSTONE_HOME": str(folder / "home"),
        # small chunks, so that the local worker pool runs several and the timeline has lanes
        "NORMALIZE__CHUNK_BYTES": "20000",
        "NORMALIZE__ENGINE": "local",
    }
    command = [str(Path(sys.executable).parent / "loadstone"), *args]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    shutil.copy(ROOT / "examples" / "data" / "orders.jsonl", folder / "orders.jsonl")
    _loadstone(folder, "run", "orders.jsonl", "--table", "orders", "--pipeline", "shop")
    _loadstone(folder, "pipeline", "shop", "report", "-o", "shop.html")
    return folder / "shop.html"


@pytest.fixture(scope="module")
def page(report: Path) -> Iterator[tuple[Any, list[str]]]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(report.as_uri())
        yield tab, errors
        browser.close()


def test_the_report_is_one_self_contained_file(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html and "<script src" not in html and "<link" not in html


def test_it_renders_without_console_errors(page: tuple[Any, list[str]]) -> None:
    tab, errors = page
    assert tab.title() == "loadstone report: shop"
    assert errors == []


def test_it_shows_rows_per_table_and_the_schema(page: tuple[Any, list[str]]) -> None:
    tab, _ = page
    rows = tab.locator("#row-counts tr[data-table]")
    assert rows.all_inner_texts() == [
        "orders\t200\t",
        "orders__items\t487\t",
        "orders__items__discounts\t223\t",
        "orders__tags\t189\t",
    ]
    for table in ("orders", "orders__items", "orders__tags", "_dlt_loads"):
        assert tab.locator(f"#schema-diagram g[data-table='{table}']").is_visible()
    assert tab.locator("#loads tr").count() == 2  # the header and the one load


def test_the_timeline_shows_the_chunks_of_the_run(page: tuple[Any, list[str]]) -> None:
    tab, errors = page
    chunks = tab.locator("#timeline rect.chunk")
    assert chunks.count() >= 3
    lanes = tab.locator("#timeline text.lane").all_text_contents()
    assert lanes[:3] == ["step extract", "step normalize", "step load"]
    assert any(lane.startswith("local worker ") for lane in lanes)
    assert tab.locator("#chunks tr").count() == chunks.count() + 1
    chunks.first.click()
    assert tab.locator("#chunk-detail").inner_text().startswith("chunk 0 ")
    assert errors == []


def test_pointing_at_a_table_row_highlights_its_box(page: tuple[Any, list[str]]) -> None:
    tab, _ = page
    tab.locator("#row-counts tr[data-table='orders__tags']").hover()
    assert "highlight" in (tab.locator("#table-orders__tags").get_attribute("class") or "")
