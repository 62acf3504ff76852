"""The ``loadstone`` command: a thin argparse front over the library, one module per command.

Each command lives in its own module under ``loadstone.cli`` and exposes
``register(subparsers)``, which adds its sub-parser and sets ``handler`` (a function
``(args: argparse.Namespace) -> int``) with ``set_defaults``. To add a command, write
``loadstone/cli/<name>_command.py`` with ``register`` and list its module name in
:data:`COMMAND_MODULES`; nothing else changes.

Command modules import heavy parts (Spark, DuckDB) inside their handlers, so that
``loadstone plugins`` or ``loadstone --help`` answer at once.

Exit status, so that a scheduler can tell a usage error from a failed load:

* 0: success;
* 1: the run or step failed (any :class:`~loadstone.exceptions.LoadstoneError`): one ``error:``
  line on stderr, no traceback;
* 2: usage error: argparse's own, or the command line names something that does not exist
  (an input path, a pipeline, a plugin): one ``error:`` line.

A traceback means a bug in loadstone.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from loadstone.exceptions import LoadstoneError
from loadstone.spark_session import stopped_on_error

#: the command modules, in the order their commands are listed by ``loadstone --help``
COMMAND_MODULES: tuple[str, ...] = (
    "loadstone.cli.plugins_command",
    "loadstone.cli.run_command",
    "loadstone.cli.pipeline_command",
)

#: exit status of a failed run or step
EXIT_FAILED = 1
#: exit status of a usage error (same as argparse's)
EXIT_USAGE = 2
#: kept for callers of the earlier name: a usage error
EXIT_ERROR = EXIT_USAGE


def _is_usage_error(error: LoadstoneError) -> bool:
    """Errors that mean the command line names something missing (not a failed run)."""
    from loadstone.exceptions import (
        InputError,
        InvalidTableName,
        PipelineNotFound,
        PipelineStepFailed,
        PluginImportError,
        UnknownPluginError,
    )

    if isinstance(error, PipelineStepFailed):
        # a --table that names nothing is refused at extract: the command line is wrong
        return isinstance(error.exception, InvalidTableName)
    return isinstance(error, (PipelineNotFound, InputError, PluginImportError, UnknownPluginError))


def build_parser() -> argparse.ArgumentParser:
    """The full parser: the top-level options and one sub-parser per command module."""
    from loadstone import __version__

    parser = argparse.ArgumentParser(
        prog="loadstone",
        description="Load messy, nested JSON into clean relational tables, normalized on Spark.",
    )
    parser.add_argument("--version", action="version", version=f"loadstone {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with stopped_on_error():  # the JVM's log lines come before the error, not after it
            return int(handler(args))
    except LoadstoneError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE if _is_usage_error(error) else EXIT_FAILED
