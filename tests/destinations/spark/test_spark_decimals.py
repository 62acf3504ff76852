"""Decimals in Spark catalog tables keep every digit (issue 39): a ``decimal(38,10)`` hint is
the table's ``decimal(38,10)``, a value beyond it is refused, and random decimals read back
digit for digit (``spark_decimals_child.py``, one Spark application)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jvm_options
import pytest

CHILD = Path(__file__).resolve().parent / "spark_decimals_child.py"


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("spark_decimals")
    jvm_options.refresh()
    done = subprocess.run(
        [sys.executable, str(CHILD), str(work)],
        cwd=work,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads((work / "decimals.json").read_text(encoding="utf-8"))
    return found


@pytest.mark.spark
def test_a_decimal_38_10_hint_is_the_spark_tables_type_with_every_digit(
    seen: dict[str, Any],
) -> None:
    assert seen["issue"]["types"]["x"] == "decimal(38,10)"
    assert seen["issue"]["x"] == [
        "1234567890123.0123456789",
        "-1.00E-10",  # Python's text of -1E-10 at scale 10: the same number
        "99999999999999999999999999.9999999999",
    ]


@pytest.mark.spark
def test_a_value_beyond_the_precision_is_refused_before_spark_sees_it(
    seen: dict[str, Any],
) -> None:
    assert seen["refused"] == {"error": "ValueDoesNotFit", "failed_packages": 1}


@pytest.mark.spark
def test_random_decimals_read_back_digit_for_digit_or_are_refused(seen: dict[str, Any]) -> None:
    assert seen["property"] == "held"
