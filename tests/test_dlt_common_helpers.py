"""``from dlt.common import json, logger`` and ``dlt.common.utils`` port: ``loadstone.common``'s
give what dlt 1.31's gave for the same values (``tests/common_helpers_program.py``, its
output under dlt in ``tests/fixtures/import_paths/common_helpers_dlt.txt``)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
PROGRAM = TESTS / "common_helpers_program.py"
DLT = (TESTS / "fixtures" / "import_paths" / "common_helpers_dlt.txt").read_text(encoding="utf-8")


def test_json_and_digests_write_what_dlt_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(PROGRAM), "loadstone"], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == DLT.splitlines()


def test_the_logger_writes_to_the_loadstone_logger(caplog: pytest.LogCaptureFixture) -> None:
    from loadstone.common import logger

    with caplog.at_level(logging.INFO, logger="loadstone"):
        logger.info("rows: %d", 3)
        logger.warning("late")
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("loadstone", "INFO", "rows: 3"),
        ("loadstone", "WARNING", "late"),
    ]
