"""Compatibility scenarios of issue 36: what loadstone used to refuse or name differently
(bad table names, blank nested keys, contracts on variants, marks that declare a table,
cursor lag, references, nested hints, pipeline_salt, progress names).

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

import datetime as _dt
import os
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


@scenario
def blank_nested_keys_name_child_tables(ctx: Context) -> Any:
    """A blank or empty key of a nested object holding a list adds nothing to the child
    table's name: ``t__nested``, as a key that is not there would."""
    pipe = ctx.pipeline("blank_keys")
    rows = [
        {"id": 1, "nested": {"": [{"x": 1}, {"x": 2}], "k": 5}},
        {"id": 2, "nested": {" ": [{"x": 3}]}, "other": {"": {"deep": [1, 2]}}},
    ]
    outcome = ctx.attempt(lambda: pipe.run(rows, table_name="t") and None)
    schema = pipe.default_schema
    return {
        "run": outcome,
        "tables": ctx.tables(pipe),
        "schema": {
            name: sorted(schema.get_table(name)["columns"])
            for name in sorted(schema.data_table_names())
        },
    }


@scenario
def frozen_contract_names_the_variant_column(ctx: Context) -> Any:
    """A value of a new type under a frozen column contract: DataValidationError names the
    variant column it refused."""
    pipe = ctx.pipeline("frozen_variant")
    pipe.run([{"id": 1, "score": 5}], table_name="t")

    @ctx.dlt.resource(name="t", schema_contract={"data_type": "freeze"})
    def later() -> Any:
        yield {"id": 2, "score": "high"}

    try:
        pipe.run(later())
    except Exception as exc:  # the outcome is what we compare
        cause = exc.__context__ if exc.__cause__ is None else exc.__cause__
        while cause is not None and type(cause).__name__ != "DataValidationError":
            cause = cause.__cause__ or cause.__context__
        seen = {
            attr: getattr(cause, attr, "-")
            for attr in ("schema_name", "table_name", "column_name", "schema_entity",
                         "contract_mode", "data_item")
        }  # fmt: skip
        item = seen["data_item"]
        if isinstance(item, dict):  # without the row's ids of this run
            seen["data_item"] = {k: v for k, v in item.items() if not k.startswith("_dlt")}
        return {"error": type(exc).__name__, "step": exc.step, "cause": seen}
    return {"error": None, "tables": ctx.tables(pipe)}


@scenario
def materialize_with_hinted_columns(ctx: Context) -> Any:
    """``with_hints(materialize_table_schema(), make_hints(columns=...))`` creates the empty
    table with the declared columns."""
    dlt = ctx.dlt

    @dlt.resource(name="sensor_faults")
    def faults() -> Any:
        yield dlt.mark.with_hints(
            dlt.mark.materialize_table_schema(),
            dlt.mark.make_hints(
                columns={"sensor": {"data_type": "text"}, "at": {"data_type": "timestamp"}}
            ),
        )

    pipe = ctx.pipeline("mat_hinted")
    outcome = ctx.attempt(lambda: pipe.run(faults()) and None)
    table = pipe.default_schema.tables.get("sensor_faults") or {}
    return {
        "run": outcome,
        "tables": ctx.tables(pipe),
        "columns": {
            name: column.get("data_type") for name, column in (table.get("columns") or {}).items()
        },
    }


REFERENCES = [{"referenced_table": "users", "columns": ["user_id"], "referenced_columns": ["id"]}]


def _without_columns(table: Any) -> Any:
    return {key: value for key, value in dict(table).items() if key != "columns"}


@scenario
def references_and_additional_table_hints(ctx: Context) -> Any:
    """``references=`` and ``additional_table_hints=`` go into the table as they are: in
    compute_table_schema, in the schema, and in its file (read back by attach)."""
    dlt = ctx.dlt

    @dlt.resource(references=REFERENCES)
    def orders() -> Any:
        yield {"id": 1, "user_id": 2}

    res = orders()
    declared = _without_columns(res.compute_table_schema())
    res.apply_hints(additional_table_hints={"x-owner": "sales", "x-rank": 1})
    pipe = ctx.pipeline("references")
    pipe.run(res)
    attached = dlt.attach("references", pipelines_dir=str(ctx.workdir / "pipelines"))
    stored = attached.default_schema.tables["orders"]
    return {
        "declared": declared,
        "with_additional": _without_columns(res.compute_table_schema()),
        "schema": {k: stored.get(k) for k in ("references", "x-owner", "x-rank", "resource")},
        "make_hints": dlt.mark.make_hints(
            references=REFERENCES, additional_table_hints={"x-a": 1}, parent_table_name="p"
        ),
        "tables": ctx.tables(pipe),
    }


@scenario
def parent_table_name_hint(ctx: Context) -> Any:
    """``apply_hints(parent_table_name=...)`` names the parent in compute_table_schema; a
    resource that fills such a table fails at extract and the pipeline goes on."""
    dlt = ctx.dlt
    pipe = ctx.pipeline("parent_hint")
    pipe.run([{"id": 1}], table_name="orders")
    lines = dlt.resource([{"sku": "a"}], name="lines")
    lines.apply_hints(parent_table_name="orders", table_name="orders__lines")
    refused = ctx.attempt(lambda: pipe.run(lines) and None)
    later = ctx.attempt(lambda: pipe.run([{"id": 2}], table_name="orders") and None)
    return {
        "declared": _without_columns(lines.compute_table_schema()),
        "parent_table_name": lines.parent_table_name,
        "refused": {k: v for k, v in refused.items() if k != "cause"},
        "later": later,
        "tables": ctx.tables(pipe),
    }


def _lagged_runs(ctx: Context, name: str, runs: list[list[dict[str, Any]]], **cursor: Any) -> Any:
    """Each run's rows through ``incremental("v", lag=...)``: the rows each run loads."""
    dlt = ctx.dlt
    pipe = ctx.pipeline(name)
    loaded = []
    for rows in runs:

        @dlt.resource(name="r", primary_key="id")
        def r(batch: Any, v: Any = dlt.sources.incremental("v", **cursor)) -> Any:
            yield from batch

        pipe.run(r(rows))
        loaded.append(pipe.last_trace.last_normalize_info.row_counts.get("r", 0))
    return {"loaded": loaded, "tables": ctx.tables(pipe)}


@scenario
def incremental_lag(ctx: Context) -> Any:
    """``lag`` starts a run before the last value kept (numbers: units, datetimes and ISO
    text: seconds, dates: days; forward for ``min``), never before an ``initial_value``;
    the rows within the lag load again (no deduplication)."""
    at = lambda s: _dt.datetime.fromisoformat(s).replace(tzinfo=_dt.timezone.utc)  # noqa: E731
    return {
        "numbers": _lagged_runs(
            ctx, "lag_num",
            [[{"id": 1, "v": 10}, {"id": 2, "v": 20}],
             [{"id": 3, "v": 15}, {"id": 4, "v": 19}, {"id": 5, "v": 21}, {"id": 2, "v": 20}],
             [{"id": 6, "v": 11}]],
            lag=5,
        ),
        "datetimes": _lagged_runs(
            ctx, "lag_ts",
            [[{"id": 1, "v": at("2024-01-01T00:00:10")}],
             [{"id": 2, "v": at("2024-01-01T00:00:05")}, {"id": 3, "v": at("2024-01-01T00:00:01")}]],
            lag=6,
        ),
        "dates": _lagged_runs(
            ctx, "lag_date",
            [[{"id": 1, "v": _dt.date(2024, 1, 10)}],
             [{"id": 2, "v": _dt.date(2024, 1, 8)}, {"id": 3, "v": _dt.date(2024, 1, 7)}]],
            lag=2,
        ),
        "iso_text": _lagged_runs(
            ctx, "lag_text",
            [[{"id": 1, "v": "2024-01-01T00:00:10Z"}],
             [{"id": 2, "v": "2024-01-01T00:00:05Z"}, {"id": 3, "v": "2024-01-01T00:00:01Z"}]],
            lag=6,
        ),
        "min": _lagged_runs(
            ctx, "lag_min", [[{"id": 1, "v": 10}], [{"id": 2, "v": 14}, {"id": 3, "v": 16}]],
            lag=5, last_value_func=min,
        ),
        "initial_value": _lagged_runs(
            ctx, "lag_initial", [[{"id": 1, "v": 3}, {"id": 2, "v": 8}]], lag=5, initial_value=10
        ),
    }  # fmt: skip


@scenario
def progress_names(ctx: Context) -> Any:
    """Each of dlt's progress names makes a pipeline that loads as any other; an unknown
    name is a ValueError."""
    out: dict[str, Any] = {}
    for name in ("log", "tqdm", "enlighten", "alive_progress"):
        pipe = ctx.pipeline(f"progress_{name}", progress=name)
        pipe.run([{"id": 1}, {"id": 2}], table_name="t")
        out[name] = ctx.tables(pipe)
    try:
        ctx.pipeline("progress_bogus", progress="bogus")
    except Exception as exc:  # the outcome is what we compare
        out["bogus"] = isinstance(exc, ValueError)
    return out


@scenario
def pipeline_salt(ctx: Context) -> Any:
    """``pipeline.config.pipeline_salt``: given, configured (``PIPELINE_SALT``) or made from
    the pipeline's name."""
    given = ctx.pipeline("salted", pipeline_salt="pepper").config.pipeline_salt
    made = ctx.pipeline("salted_by_name").config.pipeline_salt
    os.environ["PIPELINE_SALT"] = "from_env"
    try:
        configured = ctx.pipeline("salted_by_env").config.pipeline_salt
    finally:
        del os.environ["PIPELINE_SALT"]
    return {"given": given, "made": made, "configured": configured}


def _pydantic_user() -> Any:
    from typing import Optional

    from pydantic import BaseModel

    class Address(BaseModel):
        city: str
        zip: Optional[str] = None  # noqa: UP045  # dlt users write Optional

    class User(BaseModel):
        id: int
        name: str
        score: Optional[float] = None  # noqa: UP045
        active: bool = True
        joined: Optional[_dt.datetime] = None  # noqa: UP045
        tags: list[str] = []
        address: Optional[Address] = None  # noqa: UP045

    return User


_USERS = [
    {"id": 1, "name": "ann", "score": 1.5, "tags": ["a"], "address": {"city": "x"}, "extra": 1},
    {"id": "2", "name": "bo", "joined": "2024-01-01T00:00:00Z"},
    {"id": "bad", "name": "cy"},
]


def _validation_error(exc: BaseException) -> Any:
    """The DataValidationError in ``exc``'s chain, by dlt's attributes."""
    cause: BaseException | None = exc
    while cause is not None and type(cause).__name__ != "DataValidationError":
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    return {
        attr: getattr(cause, attr)
        for attr in ("table_name", "column_name", "schema_entity", "contract_mode", "data_item")
    }


@scenario
def pydantic_model_columns(ctx: Context) -> Any:
    """``columns=<pydantic model>``: the model's columns, dlt's contract for it, items
    validated at extract by the contract's mode per entity."""
    dlt = ctx.dlt
    user = _pydantic_user()
    out: dict[str, Any] = {}
    contracts: dict[str, Any] = {
        "default": None,
        "discard_row": {"data_type": "discard_row"},
        "freeze": "freeze",
        "columns_discard_row": {"columns": "discard_row", "data_type": "discard_row"},
        "columns_evolve": {"columns": "evolve", "data_type": "discard_row"},
        "evolve": {"columns": "evolve", "data_type": "evolve"},
        "discard_value": {"data_type": "discard_value"},
    }
    for name, contract in contracts.items():
        try:
            res = dlt.resource(list(_USERS), name="users", columns=user, schema_contract=contract)
        except Exception as exc:  # the outcome is what we compare
            out[name] = {"refused": type(exc).__name__}
            continue
        declared = res.compute_table_schema()
        pipe = ctx.pipeline(f"pydantic_{name}")
        try:
            pipe.run(res)
            outcome: Any = {"tables": ctx.tables(pipe)}
        except Exception as exc:  # the outcome is what we compare
            outcome = {"error": [type(exc).__name__, exc.step], "cause": _validation_error(exc)}
        out[name] = {
            "contract": declared.get("schema_contract"),
            "columns": {c: [v.get("data_type"), v.get("nullable")]
                        for c, v in declared["columns"].items()},
            **outcome,
        }  # fmt: skip
    later = dlt.resource([{"id": "7", "name": "di"}], name="users")
    later.apply_hints(columns=user)
    pipe = ctx.pipeline("pydantic_apply_hints")
    pipe.run(later)
    out["apply_hints"] = ctx.tables(pipe)
    return out
