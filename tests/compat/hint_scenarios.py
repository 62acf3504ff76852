"""Compatibility scenarios of the hints a table records: the ``resource`` key of a table a
resource fills under another name (a dynamic name, a mark, a variant, ``run(table_name=)``).

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


def _resource_keys(pipe: Any) -> dict[str, Any]:
    """Each data table's ``resource`` key, as the pipeline's schema records it."""
    schema = pipe.default_schema
    return {name: schema.get_table(name).get("resource") for name in schema.data_table_names()}


@scenario
def resource_key_of_renamed_tables(ctx: Context) -> Any:
    """A table a resource fills under another name (a name from the item, a mark, a variant,
    ``run(table_name=)``) records the resource's name; its nested tables record none."""
    dlt = ctx.dlt

    @dlt.resource(name="dyn", table_name=lambda item: item["kind"])
    def dyn() -> Any:
        yield [{"kind": "a_t", "x": 1}, {"kind": "b_t", "x": 2}]

    @dlt.resource(name="marked")
    def marked() -> Any:
        yield dlt.mark.with_table_name({"x": 1}, "m_other")
        yield {"x": 2}

    @dlt.resource(name="variant")
    def variant() -> Any:
        yield {"x": 1}
        hints = dlt.mark.make_hints(table_name="v_other")
        yield dlt.mark.with_hints({"x": 2}, hints, create_table_variant=True)

    @dlt.resource(name="plain")
    def plain() -> Any:
        yield {"x": 1, "kids": [{"y": 1}]}

    @dlt.resource(name="hinted", table_name="fixed_t")
    def hinted() -> Any:
        yield {"x": 1}

    out: dict[str, Any] = {}
    for name, data, kwargs in (
        ("dynamic", dyn, {}),
        ("with_table_name", marked, {}),
        ("variant", variant, {}),
        ("run_table_name", plain, {"table_name": "other"}),
        ("static_table_name", hinted, {}),
    ):
        pipe = ctx.pipeline(f"resource_key_{name}")
        pipe.run(data(), **kwargs)
        out[name] = _resource_keys(pipe)
    return out


@scenario
def scalars_into_a_json_column_go_to_variants(ctx: Context) -> Any:
    """A ``json`` column holds documents (dicts, lists); a string, number, bool or date
    arriving at it goes to a variant column of its own type (``blob__v_text`` ...), as into
    any column that cannot hold it."""
    dlt = ctx.dlt
    pipe = ctx.pipeline("json_scalars")
    rows = [
        {"id": 1, "blob": {"a": 1}},
        {"id": 2, "blob": "text"},
        {"id": 3, "blob": 5},
        {"id": 4, "blob": 1.5},
        {"id": 5, "blob": True},
        {"id": 6, "blob": [1, 2]},
        {"id": 7, "blob": None},
    ]
    pipe.run(
        dlt.resource(rows, name="docs", columns={"blob": {"data_type": "json"}}),
    )
    return ctx.tables(pipe)
