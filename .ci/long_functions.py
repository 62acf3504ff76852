"""List functions in core/ and plugins/ longer than 60 lines whose docstring gives no reason.

The house rule: a function is short enough to read at once. A longer one may stay when its
docstring says why, in a line starting ``Long because`` (e.g. "Long because: one SQL
statement per disposition, read top to bottom"). Exit 1 when any other is found.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

LIMIT = 60
ROOTS = ("core", "plugins")
REASON = "long because"


def long_functions(path: Path) -> list[tuple[int, str, int]]:
    """(line, qualified name, length) of each function over the limit without a reason."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                doc = (ast.get_docstring(child) or "").lower()
                if length > LIMIT and REASON not in doc:
                    found.append((child.lineno, name, length))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    failures = [
        f"{path.relative_to(root)}:{line}: {name} is {length} lines (limit {LIMIT}; "
        f"split it, or say 'Long because ...' in its docstring)"
        for folder in ROOTS
        for path in sorted((root / folder).rglob("*.py"))
        for line, name, length in long_functions(path)
    ]
    print("\n".join(failures) if failures else f"no function over {LIMIT} lines without a reason")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
