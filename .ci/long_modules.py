"""List modules in core/ and plugins/ over 600 lines without a reason, and any over 800.

The house rule: a module holds one idea, and a reader takes it in one sitting. A module over
600 lines may stay when its docstring says why, in a line starting ``Long because`` (e.g.
"Long because: dlt's 21 arguments per decorator, documented one by one"); none may pass 800.
Exit 1 when any is found.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

LIMIT = 600
HARD_LIMIT = 800
ROOTS = ("core", "plugins")
REASON = "long because"


def problem(path: Path) -> str | None:
    """Why this module fails the gate, or None."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    if lines > HARD_LIMIT:
        return f"{lines} lines (no module may pass {HARD_LIMIT}: split it)"
    docstring = (ast.get_docstring(ast.parse(text, str(path))) or "").lower()
    if lines > LIMIT and REASON not in docstring:
        return (
            f"{lines} lines (limit {LIMIT}; split it, or say 'Long because ...' in its docstring)"
        )
    return None


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    failures = [
        f"{path.relative_to(root)}: {reason}"
        for folder in ROOTS
        for path in sorted((root / folder).rglob("*.py"))
        if (reason := problem(path)) is not None
    ]
    print("\n".join(failures) if failures else f"no module over {LIMIT} lines without a reason")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
