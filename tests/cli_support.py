"""Running ``loadstone run`` / ``loadstone pipeline`` commands in-process, for the tests."""

from __future__ import annotations

import argparse

from loadstone.cli import pipeline_command, run_command


def cli(*argv: str) -> int:
    """Run a command through the parsers of the two command modules under test."""
    parser = argparse.ArgumentParser(prog="loadstone")
    subparsers = parser.add_subparsers()
    run_command.register(subparsers)
    pipeline_command.register(subparsers)
    args = parser.parse_args(argv)
    return int(args.handler(args))
