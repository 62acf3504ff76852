"""``loadstone plugins``: list installed plugins, and check a naming plugin's conformance.

``loadstone plugins`` (or ``loadstone plugins list``) prints every plugin that installed
packages declare (kind, name, module, distribution, version) from package metadata, without
importing any plugin. ``loadstone plugins check NAME_OR_MODULE`` loads one naming convention,
by short name or fully qualified module name, runs the conformance checks of
:func:`loadstone.testing.check_naming_convention` on it and exits 1 when any check fails, so
a plugin author can run it in CI before publishing.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

#: exit status when a conformance check fails
EXIT_CHECK_FAILED = 1

_COLUMNS = ("KIND", "NAME", "MODULE", "DISTRIBUTION", "VERSION")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``plugins`` (with ``list`` and ``check``) to the ``loadstone`` parser."""
    parser = subparsers.add_parser(
        "plugins",
        help="list installed plugins, check a naming plugin",
        description="List installed plugins, or check that a naming plugin conforms.",
    )
    parser.set_defaults(handler=list_command, kind=None)
    actions = parser.add_subparsers(dest="plugins_action", metavar="[ACTION]")

    listing = actions.add_parser("list", help="list installed plugins (the default)")
    listing.add_argument(
        "--kind", choices=("naming", "normalizers", "destinations"), help="only this kind"
    )
    listing.set_defaults(handler=list_command)

    check = actions.add_parser(
        "check",
        help="run the conformance checks on a naming convention",
        description="Load a naming convention by short name or module path and check it.",
    )
    check.add_argument("name", metavar="NAME_OR_MODULE", help="e.g. snake_case or my_pkg.my_naming")
    check.add_argument(
        "--max-length", type=int, default=None, help="check an instance with this max_length"
    )
    check.set_defaults(handler=check_command)


def render_table(rows: Sequence[Sequence[str]], header: Sequence[str] = _COLUMNS) -> str:
    """Rows as left-aligned columns separated by two spaces (header first)."""
    table = [list(header), *[list(row) for row in rows]]
    widths = [max(len(row[index]) for row in table) for index in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    return "\n".join(lines)


def list_command(args: argparse.Namespace) -> int:
    from loadstone import plugin_manager

    plugins = [
        plugin
        for plugin in plugin_manager.list_plugins()
        if args.kind is None or plugin.kind == args.kind
    ]
    rows = [(p.kind, p.name, p.module, p.distribution or "-", p.version or "-") for p in plugins]
    print(render_table(rows))
    return 0


def check_command(args: argparse.Namespace) -> int:
    from loadstone import plugin_manager

    convention_class = plugin_manager.naming_convention_class(args.name)
    from loadstone.testing import check_naming_convention

    subject = (
        convention_class
        if args.max_length is None
        else convention_class(max_length=args.max_length)
    )
    report = check_naming_convention(subject)
    print(report.render())
    return 0 if report.ok else EXIT_CHECK_FAILED
