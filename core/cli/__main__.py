"""``python -m loadstone.cli``: the same as the ``loadstone`` console script."""

from __future__ import annotations

import sys

from loadstone.cli import main

sys.exit(main())
