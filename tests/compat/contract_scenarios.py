"""Compatibility scenarios of schema contracts given on resources: what loads, what is
refused, at which step and with which errors.

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


@scenario
def frozen_tables_refuse_a_new_table_at_extract(ctx: Context) -> Any:
    """A new table under ``tables: freeze`` is refused at extract, every run: none of its
    rows ever loads, and a table already loaded takes rows under the same contract."""
    dlt = ctx.dlt

    def rows_of(name: str, contract: Any, value: int) -> Any:
        @dlt.resource(name=name, schema_contract=contract)
        def rows() -> Any:
            yield {"id": value}

        return rows()

    fresh = ctx.pipeline("frozen_fresh")
    refused = [
        ctx.attempt(lambda i=i: fresh.run(rows_of("t", {"tables": "freeze"}, i)) and None)
        for i in range(3)
    ]
    known = ctx.pipeline("frozen_known")
    known.run(rows_of("t", None, 1))
    later = {
        "new": ctx.attempt(lambda: known.run(rows_of("u", "freeze", 2)) and None),
        "known": ctx.attempt(lambda: known.run(rows_of("t", "freeze", 3)) and None),
    }
    return {
        "refused": refused,
        "fresh_tables": ctx.tables(fresh),
        "later": later,
        "known_tables": ctx.tables(known),
        "known_schema": sorted(known.default_schema.data_table_names()),
    }


@scenario
def pydantic_contract_given_by_apply_hints(ctx: Context) -> Any:
    """A model-typed resource validates its items by the contract ``apply_hints`` gives it
    later (extra keys kept under ``columns: evolve``, bad rows dropped under ``data_type:
    discard_row``); a violation is the resource's ``ResourceExtractionError``, caused by the
    ``DataValidationError``."""
    from pydantic import BaseModel

    dlt = ctx.dlt

    class Item(BaseModel):
        id: int
        name: str

    def items(rows: list[dict[str, Any]], contract: Any) -> Any:
        res = dlt.resource(rows, name="items", columns=Item)
        if contract is not None:
            res.apply_hints(schema_contract=contract)
        return res

    rows = [{"id": 1, "name": "a", "more": 5}, {"id": "bad", "name": "b"}, {"id": 3, "name": "c"}]
    out: dict[str, Any] = {}
    for name, contract in {
        "evolve_columns": {"columns": "evolve", "data_type": "discard_row"},
        "discard_rows": {"data_type": "discard_row"},
        "frozen": "freeze",
    }.items():
        pipe = ctx.pipeline(f"pydantic_hints_{name}")
        try:
            pipe.run(items(rows, contract))
            out[name] = ctx.tables(pipe)
        except Exception as exc:  # the outcome is what we compare
            inner = exc.exception  # type: ignore[attr-defined]  # PipelineStepFailed
            out[name] = [exc.step, type(inner).__name__, type(inner.__cause__).__name__]  # type: ignore[attr-defined]  # PipelineStepFailed
    return out


@scenario
def frozen_columns_error_chain(ctx: Context) -> Any:
    """A new column under ``columns: freeze`` fails normalize: ``PipelineStepFailed``
    reports the failed normalize job, whose cause is the ``DataValidationError``; the chain
    of ``__cause__`` is the same."""
    dlt = ctx.dlt
    pipe = ctx.pipeline("frozen_chain")
    pipe.run([{"id": 1}], table_name="t")

    @dlt.resource(name="t", schema_contract={"columns": "freeze"})
    def later() -> Any:
        yield {"id": 2, "extra": "x"}

    try:
        pipe.run(later())
    except Exception as exc:  # the outcome is what we compare
        chain, cause = [], exc.__cause__
        while cause is not None:
            chain.append(type(cause).__name__)
            cause = cause.__cause__
        inner = exc.exception  # type: ignore[attr-defined]  # PipelineStepFailed
        return {"step": exc.step, "exception": type(inner).__name__, "chain": chain}  # type: ignore[attr-defined]  # PipelineStepFailed
    return "loaded"


@scenario
def run_and_source_contracts_are_the_schemas(ctx: Context) -> Any:
    """A contract given to ``run`` or to a ``@source`` becomes the schema's contract, kept
    for later runs (a new column of another table is refused); ``run``'s also goes on the
    run's table. A package refused by it leaves the contract as it was."""
    dlt = ctx.dlt

    def contracts(pipe: Any) -> Any:
        schema = pipe.default_schema
        tables = {t: schema.tables[t].get("schema_contract") for t in schema.data_table_names()}
        return [schema.settings.get("schema_contract"), tables]

    out: dict[str, Any] = {}
    pipe = ctx.pipeline("run_contract")
    pipe.run([{"id": 1}], table_name="t", schema_contract={"columns": "freeze"})
    pipe.run([{"id": 2, "x": 1}], table_name="u")
    out["later_run"] = ctx.attempt(lambda: pipe.run([{"id": 3, "w": 1}], table_name="u") and None)
    out["run"] = contracts(pipe)

    @dlt.source(schema_contract={"columns": "discard_value"})
    def shop() -> Any:
        return dlt.resource([{"id": 1}], name="r")

    src = ctx.pipeline("source_contract")
    src.run(shop())
    src.run([{"id": 2, "y": 1}], table_name="r")
    out["source"] = contracts(src)
    out["source_tables"] = ctx.tables(src)

    refused = ctx.pipeline("refused_contract")
    refused.run([{"id": 1}], table_name="t")
    failed = ctx.attempt(
        lambda: refused.run([{"id": 2, "x": 1}], table_name="t", schema_contract="freeze")
    )
    refused.drop_pending_packages()  # dlt keeps the package pending; loadstone set it aside
    out["refused"] = [failed, contracts(refused)]
    return out


@scenario
def contracts_of_a_new_table_with_typed_columns(ctx: Context) -> Any:
    """A new table whose hints declare typed columns holds its values to the ``data_type``
    contract as an existing table does (bad values dropped, rows dropped, or the package
    refused); a refused package leaves no trace of the table in the schema."""
    dlt = ctx.dlt
    pipe = ctx.pipeline("typed_new")
    rows = [{"n": "2", "f": "2.5"}, {"n": "x", "f": "nope"}, {"n": 3.0, "f": 3}]
    out: dict[str, Any] = {}
    for mode in ("discard_value", "discard_row", "freeze"):
        res = dlt.resource(
            list(rows),
            name=f"typed_{mode}",
            columns={"n": {"data_type": "bigint"}, "f": {"data_type": "double"}},
            schema_contract={"data_type": mode},
        )
        out[mode] = ctx.attempt(lambda res=res: pipe.run(res) and None)
    pipe.drop_pending_packages()  # dlt keeps the refused package pending; loadstone set it aside
    out["schema_tables"] = sorted(pipe.default_schema.data_table_names())
    out["tables"] = ctx.tables(pipe)
    return out


@scenario
def new_tables_discarded_at_extract(ctx: Context) -> Any:
    """Rows of a new table whose contract discards ``tables`` are dropped at extract: a run
    that brings nothing else loads no package (after the first, which carries the state)."""
    dlt = ctx.dlt
    pipe = ctx.pipeline("discarded_new")
    packages = []
    for mode in ("discard_row", "discard_value", "discard_row"):
        res = dlt.resource([{"id": 1}], name="t", schema_contract={"tables": mode})
        packages.append(len(pipe.run(res).loads_ids))
    kept = dlt.resource([{"id": 2}], name="u", schema_contract={"tables": "discard_row"})
    pipe.run([kept, dlt.resource([{"id": 3}], name="known")])
    return {
        "packages": packages,
        "tables": ctx.tables(pipe),
        "schema_tables": sorted(pipe.default_schema.data_table_names()),
    }


@scenario
def the_run_that_creates_a_table_takes_all_its_columns(ctx: Context) -> Any:
    """A table declared by a ``columns`` hint but not loaded yet takes every key of its first
    load, whatever its ``columns`` contract says; the contract holds from the second load on
    (``discard_value`` drops the new key, ``freeze`` refuses it, ``discard_row`` the row)."""
    dlt = ctx.dlt
    out: dict[str, Any] = {}
    for mode in ("discard_value", "freeze", "discard_row"):
        pipe = ctx.pipeline(f"creates_{mode}")
        first = [{"id": 1, "a": {"b": 1}, "c": 2, "l": [1]}]
        declared = {"id": {"data_type": "bigint"}}
        res = dlt.resource(first, name="t", columns=declared, schema_contract={"columns": mode})
        out[f"{mode}_first"] = ctx.attempt(lambda res=res, pipe=pipe: pipe.run(res) and None)
        second = [{"id": 2, "a": {"b": 2, "x": 3}, "d": 4, "l": [2]}]
        res = dlt.resource(second, name="t", schema_contract={"columns": mode})
        out[f"{mode}_second"] = ctx.attempt(lambda res=res, pipe=pipe: pipe.run(res) and None)
        pipe.drop_pending_packages()  # dlt keeps a refused package pending; loadstone set it aside
        out[mode] = ctx.tables(pipe)
    return out


@scenario
def a_model_that_skips_nested_types_declares_its_nested_models_fields(ctx: Context) -> Any:
    """``dlt_config = {"skip_nested_types": True}`` on a pydantic model given as ``columns``:
    a nested model's fields are columns ``<field>__<name>`` (a missing one too), lists go to
    nested tables, and the second load is held to the model's contract (``discard_value``:
    a key the model lacks is dropped, in the nested tables too)."""
    from typing import ClassVar, Optional

    from pydantic import BaseModel

    dlt = ctx.dlt

    class Address(BaseModel):
        city: str
        zip: Optional[str] = None  # noqa: UP045 (pydantic evaluates it: Python 3.10's types)

    class User(BaseModel):
        id: int
        name: str
        address: Address
        tags: list[str] = []
        friends: list[Address] = []

    class UserSkip(User):
        dlt_config: ClassVar[dict[str, bool]] = {"skip_nested_types": True}  # dlt's DltConfig

    first = [{"id": 1, "name": "a", "address": {"city": "X"}, "tags": ["t1", "t2"],
              "friends": [{"city": "Y", "zip": "1"}]}]  # fmt: skip
    second = [{"id": 2, "name": "b", "address": {"city": "Z", "street": "s"}, "new": 1,
               "friends": [{"city": "Q", "extra": 5}]}]  # fmt: skip
    out: dict[str, Any] = {}
    for model in (User, UserSkip):
        pipe = ctx.pipeline(f"skip_nested_{model.__name__.lower()}")
        for rows in (first, second):
            pipe.run(dlt.resource(rows, name="users", columns=model))
        schema = pipe.default_schema
        out[model.__name__] = {
            "columns": {
                table: {
                    c: schema.tables[table]["columns"][c].get("data_type")
                    for c in schema.tables[table]["columns"]
                }
                for table in sorted(schema.data_table_names())
            },
            "tables": ctx.tables(pipe),
        }
    return out
