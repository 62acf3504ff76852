"""The extract tests use the rest_api tests' loopback server (tests/sources/rest_api_app.py)
for transformers that call an API: its folder joins the import path here."""

from __future__ import annotations

import sys
from pathlib import Path

SOURCES_TESTS = str(Path(__file__).resolve().parent.parent / "sources")
if SOURCES_TESTS not in sys.path:
    sys.path.insert(0, SOURCES_TESTS)
