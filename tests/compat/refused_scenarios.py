"""Compatibility scenarios of issue 36: what loadstone used to refuse or name differently
(bad table names, blank nested keys, contracts on variants, marks that declare a table,
cursor lag, references, nested hints, pipeline_salt, progress names).

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


@scenario
def blank_table_names_refused_at_extract(ctx: Context) -> Any:
    """A table name with no letter or digit left after normalizing fails at extract, and the
    pipeline loads the next run as if nothing happened."""
    pipe = ctx.pipeline("blank_names")

    def refused_as(name: str) -> Any:
        try:
            pipe.run([{"a": 1}], table_name=name)
        except Exception as exc:  # the outcome is what we compare
            # dlt's cause is pathvalidate's error on the file name: a ValueError, as ours
            return [type(exc).__name__, exc.step, isinstance(exc.exception, ValueError)]
        return "loaded"

    refused = {repr(name): refused_as(name) for name in (" ", "__")}
    later = ctx.attempt(lambda: pipe.run([{"a": 2}], table_name="  kept") and None)
    return {
        "refused": refused,
        "later": later,
        "tables": ctx.tables(pipe),
        "schema_tables": sorted(pipe.default_schema.data_table_names()),
    }
