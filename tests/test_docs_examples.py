"""Every example in README.md and docs/ runs: each ```python and ```bash block is executed.

Blocks run page by page, in order, in a fresh folder of the page's own (``LOADSTONE_HOME``
inside it, a copy of ``examples/``, ``orders.jsonl`` and a link to ``tests/sources``), so an
example may use the sample data or a file an earlier block of the page wrote. A comment on
the line before a block says how it runs (several words separated by commas):

* ``<!-- example: continue -->``: a Python block that goes on in the namespace of the page's
  previous Python block;
* ``<!-- example: postgres -->``: needs the tests' PostgreSQL server: runs with
  ``DESTINATION__POSTGRES__CREDENTIALS`` set from ``LOADSTONE_TEST_POSTGRES`` (missing is
  an error, as for every PostgreSQL test);
* ``<!-- example: landing -->`` / ``sqlite``: the folder also holds ``landing/`` (CSV and
  Parquet files) / ``shop.db`` (a SQLite database with an ``orders`` table);
* ``<!-- example: file -->``: a Python module whose first line names its path (``# pkg/mod.py``):
  written there (packages get an ``__init__.py``), then run; its ``test_*`` functions too;
* ``<!-- example: skip: REASON -->``: not run, for the reason given (a cluster, a bucket, a
  fragment); the page says so too.

The README's main command runs without its set-up part (the venv and the install are this
interpreter's); its test command is the suite itself and is not run from here.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(python|bash)\s*$")
MARK = re.compile(r"<!--\s*example:\s*(.*?)\s*-->")
#: at most this many blocks are left out: an example that cannot run is the exception
MAX_SKIPPED = 12


@attrs.frozen
class Example:
    page: Path
    line: int
    language: str
    code: str
    modes: frozenset[str]
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _marks(comment: str) -> tuple[frozenset[str], str]:
    match = MARK.search(comment)
    if not match:
        return frozenset(), ""
    text = match.group(1)
    if text.startswith("skip"):
        return frozenset({"skip"}), text.partition(":")[2].strip()
    return frozenset(word.strip() for word in text.split(",") if word.strip()), ""


def examples_of(page: Path) -> Iterator[Example]:
    """The page's python and bash blocks with the modes their comment gives."""
    lines = page.read_text(encoding="utf-8").splitlines()
    region = ""
    previous = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("<!-- main-command -->") or line.startswith("<!-- test-command -->"):
            region = line[5:-4].strip()
        fence = FENCE.match(line)
        if fence:
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            modes, reason = _marks(previous)
            if region == "test-command":
                modes, reason = frozenset({"skip"}), "the test command runs this suite itself"
            elif region == "main-command":
                modes = frozenset({"main-command"})
            code = "\n".join(lines[index + 1 : end]) + "\n"
            yield Example(page, index + 1, fence.group(1), code, modes, reason)
            index, region = end, ""
        if line.strip():
            previous = line
        index += 1


EXAMPLES = [example for page in PAGES for example in examples_of(page)]
RUN_PAGES = sorted({e.page for e in EXAMPLES if "skip" not in e.modes})


def _landing(folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "landing" / "2024").mkdir(parents=True)
    (folder / "landing" / "orders.csv").write_text("id,total\n1,9.5\n2,12.0\n")
    (folder / "landing" / "2024" / "orders.csv").write_text("id,total\n3,7.25\n")
    pq.write_table(pa.table({"sku": ["a", "b"], "price": [1.5, 2.5]}), folder / "landing/p.parquet")


def _sqlite(folder: Path) -> None:
    with sqlite3.connect(folder / "shop.db") as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, updated_at TEXT, total REAL)")
        db.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)",
            [(1, "2024-01-01", 9.5), (2, "2024-01-02", 12.0)],
        )
        db.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 10")


def _folder(tmp_path: Path, examples: list[Example]) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copy(ROOT / "examples" / "data" / "orders.jsonl", tmp_path / "orders.jsonl")
    (tmp_path / "tests").mkdir()  # the tests' sources (a REST API app) are read, never written
    (tmp_path / "tests" / "sources").symlink_to(ROOT / "tests" / "sources")
    modes = {mode for example in examples for mode in example.modes}
    if "landing" in modes:
        _landing(tmp_path)
    if "sqlite" in modes:
        _sqlite(tmp_path)
    return tmp_path


def _environment(tmp_path: Path, example: Example) -> dict[str, str]:
    env = {"LOADSTONE_HOME": str(tmp_path / "home")}
    if "postgres" in example.modes:
        url = os.environ.get("LOADSTONE_TEST_POSTGRES")
        if not url:
            pytest.fail(
                f"{example.where} needs PostgreSQL: LOADSTONE_TEST_POSTGRES is not set "
                '(eval "$(bash .ci/postgres start)")',
                pytrace=False,
            )
        env["DESTINATION__POSTGRES__CREDENTIALS"] = url
    return env


def main_command(code: str) -> str:
    """The README's main command without its set-up (venv and install): this interpreter's."""
    steps = [s for s in code.strip().split(" && ") if "-m venv" not in s and "pip " not in s]
    return " && ".join(steps).replace(".venv/bin/", f"{Path(sys.executable).parent}/")


def run_bash(example: Example, folder: Path, env: dict[str, str]) -> None:
    code = main_command(example.code) if "main-command" in example.modes else example.code
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=folder,
        env={**os.environ, **env, "PATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"{example.where} exited {done.returncode}:\n{done.stderr[-3000:]}")


def write_module(example: Example, folder: Path) -> None:
    """A ``file`` example: saved under the path its first line names, packages made."""
    path = folder / example.code.splitlines()[0].lstrip("# ").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    for package in path.relative_to(folder).parents:
        if package != Path("."):
            (folder / package / "__init__.py").touch()
    path.write_text(example.code, encoding="utf-8")


def run_python(example: Example, namespace: dict[str, Any]) -> None:
    # dont_inherit: not this module's `from __future__ import annotations` (a reader's paste
    # evaluates annotations, which pydantic models in an example need without a module)
    code = compile(example.code, example.where, "exec", dont_inherit=True)
    exec(code, namespace)  # the example is the test: it runs as a reader would paste it
    if "file" in example.modes:
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value):
                value()


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_of_the_page_run(page: Path, tmp_path: Path, monkeypatch: Any) -> None:
    examples = [e for e in EXAMPLES if e.page == page and "skip" not in e.modes]
    folder = _folder(tmp_path, examples)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    namespace: dict[str, Any] = {}
    for example in examples:
        env = _environment(folder, example)
        if example.language == "bash":
            run_bash(example, folder, env)
            continue
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        if "file" in example.modes:
            write_module(example, folder)
        if "continue" not in example.modes:
            namespace = {"__name__": "__docs_example__"}
        run_python(example, namespace)


def test_every_skipped_example_says_why() -> None:
    skipped = [e for e in EXAMPLES if "skip" in e.modes]
    assert [e.where for e in skipped if not e.reason] == []
    assert len(skipped) <= MAX_SKIPPED, [f"{e.where}: {e.reason}" for e in skipped]


def test_the_readme_main_command_is_run() -> None:
    mains = [e for e in EXAMPLES if e.page == ROOT / "README.md" and "main-command" in e.modes]
    assert len(mains) == 1
    assert main_command(mains[0].code).count("/loadstone ") == 2
