"""Where the tests find their data, wherever in ``tests/`` a test module lives.

Test modules sit in folders that mirror ``core/`` and ``plugins/``; the data they read is in
one place, ``tests/fixtures/``, and the examples in ``examples/``.
"""

from __future__ import annotations

from pathlib import Path

#: the ``tests/`` folder (on ``sys.path``: its ``conftest.py`` puts it there)
TESTS = Path(__file__).resolve().parent
#: the repository's root
REPO = TESTS.parent
#: recorded data the tests read (dlt outcomes, shared cases, seed examples)
FIXTURES = TESTS / "fixtures"
#: the example data shipped with the repository
EXAMPLES = REPO / "examples" / "data"
