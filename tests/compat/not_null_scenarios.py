"""Compatibility scenarios of nulls in columns that cannot hold them: a pydantic model's
required field under ``data_type="evolve"`` (missing in every row, in one row, or null) and a
column hinted ``nullable: false`` (null; a missing value fails at load under dlt, at normalize here when no row has it).

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario

_ROWS = {
    "missing_everywhere": [{"id": 1}, {"id": 2}],
    "missing_in_one_row": [{"id": 1, "name": "a"}, {"id": 2}],
    "null": [{"id": 1, "name": "a"}, {"id": 2, "name": None}],
}


def _failure(exc: BaseException) -> Any:
    """The step and the chain of exception classes (with the innermost's table and column)."""
    chain = []
    cause = getattr(exc, "exception", None)
    while cause is not None:
        chain.append(type(cause).__name__)
        inner = cause
        cause = cause.__cause__ or cause.__context__
    named = {}
    if chain:  # dlt's exception keeps the schema's name; table and column are in its text
        named = {"schema_name": getattr(inner, "schema_name", None),
                 "names": all(f"{n}" in str(inner) for n in ("users", "name"))}  # fmt: skip
    return {"step": getattr(exc, "step", None), "chain": chain[-2:], "innermost": named}


def _outcomes(ctx: Context, name: str, make: Any, cases: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in cases:
        rows = _ROWS[case]
        pipe = ctx.pipeline(f"{name}_{case}")
        try:
            pipe.run(make(list(rows)))
            out[case] = {"tables": ctx.tables(pipe)}
        except Exception as exc:  # the outcome is what we compare
            out[case] = _failure(exc)
    return out


@scenario
def pydantic_evolve_missing_or_null_field(ctx: Context) -> Any:
    """``columns=<model>`` with ``data_type="evolve"``: a required field missing in every
    row, in one row, or null fails normalize with CannotCoerceNullException."""
    from pydantic import BaseModel

    class User(BaseModel):
        id: int
        name: str

    def make(rows: list[dict[str, Any]]) -> Any:
        contract = {"data_type": "evolve"}
        return ctx.dlt.resource(rows, name="users", columns=User, schema_contract=contract)

    return _outcomes(ctx, "pyd_evolve", make, tuple(_ROWS))


@scenario
def null_in_a_column_hinted_not_nullable(ctx: Context) -> Any:
    """A null in a column hinted ``nullable: false`` fails normalize with
    CannotCoerceNullException, naming table and column."""
    columns = {"name": {"data_type": "text", "nullable": False}}

    def make(rows: list[dict[str, Any]]) -> Any:
        return ctx.dlt.resource(rows, name="users", columns=columns)

    return _outcomes(ctx, "hinted", make, ("null",))
