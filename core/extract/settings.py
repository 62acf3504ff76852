"""The settings of extract's pipe iterator, each read in one place (dlt's ``[extract]`` keys).

``extract.workers`` sizes the thread pool that runs ``parallelized`` resources and ``@defer``
functions (dlt's default 5); ``extract.max_parallel_items`` caps the work in flight at once,
threads and coroutines together (dlt's default 20); ``extract.next_item_mode`` is the order
pipes are read in: ``round_robin`` (default) takes a page from each in turn, ``fifo`` drains
the newest pipe first (depth first: a parent's page through its transformers before the next
page).
"""

from __future__ import annotations

import attrs

from loadstone import config

#: ``extract.next_item_mode``'s values, as dlt's
NEXT_ITEM_MODES = ("round_robin", "fifo")


@attrs.frozen
class ExtractSettings:
    """How one extract evaluates its pipes (see the module docstring)."""

    workers: int = 5
    max_parallel_items: int = 20
    next_item_mode: str = "round_robin"


def extract_workers() -> int:
    """``extract.workers``: threads for ``parallelized`` resources and ``@defer`` (dlt's 5)."""
    return config.get_int("extract.workers", 5, minimum=1)


def max_parallel_items() -> int:
    """``extract.max_parallel_items``: work in flight at once, threads and coroutines (20)."""
    return config.get_int("extract.max_parallel_items", 20, minimum=1)


def next_item_mode() -> str:
    """``extract.next_item_mode``: ``round_robin`` (default) or ``fifo``, as dlt's."""
    return config.get_choice("extract.next_item_mode", NEXT_ITEM_MODES, "round_robin")


def extract_settings() -> ExtractSettings:
    """The settings in force now (read on every extract: tests and users change them)."""
    return ExtractSettings(extract_workers(), max_parallel_items(), next_item_mode())
