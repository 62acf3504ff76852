"""Which chunks' files are final while later chunks still run: the load may take them early.

A chunk's files stay as written unless :mod:`.settle` re-runs the chunk, which it does when
the chunk typed a column otherwise than the column's globally first value, or when a chunk
before it failed. Both are known as soon as every chunk up to it has reported: a column's
globally first value lies in the first chunk that met it. So the chunks of the unbroken
prefix 0..k whose guesses all hold are final, and their files are reported to
``NormalizeContext.on_files`` (:class:`~loadstone.destinations.overlap.FinishedFiles`) with
the schema those chunks give, made the way ``_finish`` makes the package's (the same
:func:`.schema_updates.apply_facts` over the facts so far). The first chunk that failed or
guessed wrong ends the reports: its files and all later ones load after normalize.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loadstone.destinations.overlap import FilesSink, FinishedFiles
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, decide, misguessed
from loadstone.plugins.normalizers.relational.schema_updates import (
    RootPlan,
    TableSummary,
    apply_facts,
)
from loadstone.schema import Schema


class FinishedChunks:
    """Hears each first-round chunk's facts in chunk order; reports the final ones."""

    def __init__(self, schema: Schema, plans: Mapping[str, RootPlan], sink: FilesSink) -> None:
        #: the schema before this package: a copy, as the driver evolves its own later
        self._base = schema.copy()
        self._by_root = {plan.spec.root: plan for plan in plans.values()}
        self._sink = sink
        self._facts: list[ChunkFacts] = []
        self._stopped = False

    def chunk_done(self, fact: ChunkFacts) -> None:
        """The next chunk's facts (chunk order, first round only)."""
        if self._stopped:
            return
        if fact.chunk != len(self._facts) or fact.attempt != 0 or fact.error is not None:
            self._stopped = True
            return
        facts = (*self._facts, fact)
        if misguessed(fact, decide(list(facts))):
            self._stopped = True  # settle re-runs it: from here on, the files wait
            return
        self._facts.append(fact)
        tables = {name: tuple(Path(p) for p in paths) for name, paths in fact.files.items()}
        if any(tables.values()):
            self._sink(FinishedFiles(tables, lambda: self._schema_of(facts)))

    def _schema_of(self, facts: tuple[ChunkFacts, ...]) -> Schema:
        """The package's schema as ``facts`` make it (called by the load, in its thread)."""
        schema = self._base.copy()
        apply_facts(schema, TableSummary.of(facts), decide(list(facts)), self._by_root)
        return schema
