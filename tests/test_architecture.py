"""The layer picture at the top of docs/ARCHITECTURE.md is the import-linter contract.

``lint-imports`` (in ``.ci/check``) holds the code to the ``layers`` contract of
``[tool.importlinter]``; this test holds the picture to that contract, so neither can drift.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport (a dependency there)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def _picture_layers() -> list[list[str]]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers -->", 1)[1].split("<!-- /layers -->", 1)[0]
    boxes = dict(re.findall(r'^\s*(L\d+)\["([^"]*)"\]', block, flags=re.MULTILINE))
    arrows = re.findall(r"^\s*(L\d+) --> (L\d+)", block, flags=re.MULTILINE)
    order = [arrows[0][0]] + [target for _, target in arrows] if arrows else list(boxes)
    return [[name.strip() for name in boxes[box].split("&#124;")] for box in order]


def test_the_architecture_picture_draws_the_layers_contract_top_to_bottom() -> None:
    assert _picture_layers() == _contract_layers()
