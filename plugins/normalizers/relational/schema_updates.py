"""The driver's side: code hints and engine facts become schema updates, through the schema API.

Two moments of one package:

* before the tasks run, :func:`plan_root` reads each source table's code hints (the
  package's ``table_hints``, dlt's dict form) into a partial :class:`~loadstone.schema.Table`
  with :func:`~loadstone.schema.hints.table_from_hints` and
  :func:`~loadstone.schema.hints.normalize_hints`, and into the engine's :class:`RootSpec`;
* after the tasks settled, :func:`apply_facts` creates tables and columns in first-seen order
  with :meth:`Schema.update_table` and :meth:`Schema.new_column`, so the rules for a new
  column (default hints, variant description) are the schema's own, never restated here.

The engine decides *types* value by value (its hot path); this module only applies them.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

import attrs

from loadstone.destinations.capabilities import Capabilities
from loadstone.exceptions import IdentifierCollisionError
from loadstone.extract.resource_hints import table_keys_of
from loadstone.naming import NamingConvention
from loadstone.normalizers.contract import BAD_RECORDS_TABLE, NormalizeContext
from loadstone.plugins.normalizers.relational.facts import (
    ChunkFacts,
    ColumnDecision,
    ColumnKey,
    Decisions,
    Position,
)
from loadstone.plugins.normalizers.relational.known_columns import (
    drop_untyped,
    hints_on_known_columns,
    with_hinted_columns,
)
from loadstone.plugins.normalizers.relational.nested_hints import (
    NestedTablePlan,
    nested_keys,
    nested_spec,
    plan_nested,
    with_nested_hints,
)
from loadstone.plugins.normalizers.relational.row_keys import (
    LIST_IDX,
    LOAD_ID,
    PARENT_ID,
    ROOT_ID,
    ROW_ID,
    VALID_FROM,
)
from loadstone.plugins.normalizers.relational.task import RootSpec
from loadstone.schema import Column, Schema, Table
from loadstone.schema.collisions import find_identifier_collisions
from loadstone.schema.contracts import SchemaContract
from loadstone.schema.decimals import DecimalShape, shape_of
from loadstone.schema.hints import (
    declared_key_order,
    disposition_of,
    hints_first,
    normalize_hints,
    table_from_hints,
)
from loadstone.schema.settings import SchemaSettings, hints_for_column
from loadstone.schema.stored import TTableSchema
from loadstone.typing import TSchemaContract

#: one source table's hints as code gives them (dlt's hint dict: ``columns``, ``x-*`` keys
#: and values written by users, read key by key below)
_Caps: TypeAlias = "Capabilities | None"
TableHints: TypeAlias = Mapping[str, Any]

#: Data types of the relational normalizer's system columns; their hints are the relational
#: default hints (:data:`loadstone.schema.settings.RELATIONAL_DEFAULT_HINTS`), not restated.
_SYSTEM_TYPES: Final[Mapping[str, str]] = {
    LOAD_ID: "text",
    ROW_ID: "text",
    PARENT_ID: "text",
    LIST_IDX: "bigint",
    ROOT_ID: "text",
}
_RELATIONAL: Final = SchemaSettings.relational_defaults()

_BAD_RECORDS: Final[TTableSchema] = {
    "write_disposition": "append",
    "columns": {
        "file": {"data_type": "text", "nullable": False},
        "line": {"data_type": "bigint", "nullable": False},
        "error": {"data_type": "text", "nullable": False},
        "raw": {"data_type": "text", "nullable": True},
    },
}

#: Default nesting depth when neither code nor the schema sets one (dlt's default).
DEFAULT_MAX_NESTING: Final = 1000


def system_column(name: str) -> Column:
    """A system column: its data type, not null, plus the relational default hints."""
    stored = {"data_type": _SYSTEM_TYPES[name], "nullable": False}
    stored.update(hints_for_column(_RELATIONAL, name))
    return Column.from_dict(stored, name)


@attrs.frozen
class RootPlan:
    """What code hints say about one root table, ready for the engine and the schema."""

    spec: RootSpec
    #: the hinted columns, normalized, in hint order (scd2 system columns first)
    columns: Mapping[str, Column]
    #: write disposition and merge strategy to store (None: leave the table's own)
    disposition: tuple[str, str | None] | None
    max_nesting: int | None
    schema_contract: TSchemaContract | None
    #: table hints kept in the schema as dlt does: ``file_format`` / ``table_format`` and
    #: the scd2 options (validity column names, active record and boundary timestamps)
    formats: Mapping[str, object] = attrs.field(factory=dict)
    #: hinted columns of nested tables (``nested_hints=``), by nested table
    nested: Mapping[str, Mapping[str, Column]] = attrs.field(factory=dict)
    #: ``materialize_table_schema()``: the table exists even without data
    materialize: bool = False
    #: the resource that fills the table (dlt's ``resource`` key): extract records it
    #: when a table is filled under another name; else the table's own name
    resource: str | None = None
    #: every hinted nested table's plan (``nested_hints=``), by nested table
    nested_tables: Mapping[str, NestedTablePlan] = attrs.field(factory=dict)


def _max_nesting(schema: Schema, hints: TableHints, existing: Table | None) -> int:
    """Code hint, then the table's stored limit, then the schema's normalizer config."""
    x_normalizer = hints.get("x-normalizer") or {}
    value = hints.get(
        "max_nesting", hints.get("max_table_nesting", x_normalizer.get("max_nesting"))
    )
    if value is None and existing is not None:
        value = existing.max_nesting
    if value is None:
        value = schema.json_normalizer_config.get("max_nesting", DEFAULT_MAX_NESTING)
    return int(value)


def _record_propagation(schema: Schema, root: str, schema_wide: bool) -> None:
    """Store root key propagation in the schema as dlt does, so the schema file carries it."""
    config = schema.json_normalizer_config
    if schema_wide:
        config["root_key_propagation"] = True
    config.setdefault("propagation", {}).setdefault("tables", {})[root] = {ROW_ID: ROOT_ID}
    schema.set_json_normalizer_config(config)


#: scd2 options of the write disposition, kept as table hints the destination reads
SCD2_TABLE_HINTS: Final = (
    "x-validity-column-names",
    "x-active-record-timestamp",
    "x-boundary-timestamp",
    "x-row-version-column-name",
)


def _scd2_options(hints: TableHints, naming: NamingConvention) -> dict[str, object]:
    """The scd2 options, given as ``x-`` hints or inside a write disposition dict; names in
    destination form, dates as ISO text."""
    options = {key: hints[key] for key in SCD2_TABLE_HINTS if hints.get(key) is not None}
    value = hints.get("write_disposition")
    if isinstance(value, Mapping):
        for key, option in value.items():
            hint = "x-" + str(key).replace("_", "-")
            if hint in SCD2_TABLE_HINTS and option is not None:
                options[hint] = option
    names = options.get("x-validity-column-names")
    if names:
        options["x-validity-column-names"] = [naming.normalize_path(str(n)) for n in names]
    version = options.get("x-row-version-column-name")
    if version:
        options["x-row-version-column-name"] = naming.normalize_path(str(version))
    for key, option in options.items():
        if isinstance(option, _dt.datetime | _dt.date):
            options[key] = option.isoformat()
    return options


def _run_disposition(hints: TableHints, existing: Table | None) -> tuple[str, str | None]:
    """The disposition and merge strategy this run loads a root table with.

    No disposition in code: an existing table keeps the one it was created with. A merge
    without a strategy keeps the table's strategy (dlt 1.31: a bare ``"merge"`` after an
    ``scd2`` run still versions rows)."""
    explicit = hints.get("write_disposition") is not None
    if explicit or existing is None:
        declared = disposition_of(hints if explicit else {})
    else:
        stored = {"write_disposition": existing.write_disposition}
        declared = disposition_of({**stored, "x-merge-strategy": existing.merge_strategy})
    disposition, strategy = declared[0] or "append", declared[1]
    if disposition == "merge" and strategy is None and existing is not None:
        strategy = existing.merge_strategy
    return disposition, strategy


def _stored_scd2(existing: Table | None) -> dict[str, object]:
    """The scd2 options an existing table stores: a run that keeps its strategy keeps them."""
    extra = existing.extra if existing is not None else {}
    return {key: extra[key] for key in SCD2_TABLE_HINTS if extra.get(key) is not None}


def _not_null(existing: Table | None, hinted: Mapping[str, Column]) -> tuple[str, ...]:
    """Key columns of a root that hold no null: hinted or stored ``nullable: false``."""
    columns = {**(existing.columns if existing is not None else {}), **hinted}
    return tuple(
        name
        for name, column in columns.items()
        if column.nullable is False and (column.primary_key or column.merge_key)
    )


def _null_refused(
    schema: Schema,
    root: str,
    hinted: Mapping[str, Column],
    nested: Mapping[str, NestedTablePlan],
) -> dict[str, tuple[str, ...]]:
    """Per table of ``root``, the data columns code or the schema declares not nullable."""
    declared: dict[str, dict[str, Column]] = {root: dict(hinted)}
    for table, plan in nested.items():
        declared[table] = dict(plan.columns)
    for name, stored in schema.tables.items():
        if name == root or name.startswith(root + "__"):
            declared[name] = {**stored.columns, **declared.get(name, {})}
    refused = {
        table: tuple(
            column
            for column, hint in columns.items()
            if hint.nullable is False and not column.startswith("_dlt")
        )
        for table, columns in declared.items()
    }
    return {table: names for table, names in refused.items() if names}


def _hinted_columns(
    root: str,
    hints: TableHints,
    disposition: str,
    strategy: str | None,
    naming: NamingConvention,
    use_break_path: bool,
    scd2: Mapping[str, object],
) -> dict[str, Column]:
    """The columns code hints declare, through the schema's one reading of hints."""
    write_disposition: str | dict[str, object] = disposition
    if strategy is not None:
        write_disposition = {"disposition": disposition, "strategy": strategy, **scd2}
    partial = table_from_hints(
        root,
        columns=hints.get("columns"),
        primary_key=hints.get("primary_key"),
        merge_key=hints.get("merge_key"),
        write_disposition=write_disposition,
    )
    return dict(normalize_hints(partial, naming, use_break_path=use_break_path).columns)


def _propagates_root_key(
    schema: Schema, root: str, hints: TableHints, disposition: str, strategy: str | None
) -> bool:
    """Whether nested tables of ``root`` get ``_dlt_root_id`` (recorded in the schema if so)."""
    x_normalizer = hints.get("x-normalizer") or {}
    asked = bool(hints.get("root_key_propagation") or x_normalizer.get("root_key_propagation"))
    json_config = schema.json_normalizer_config
    propagate = (
        (disposition == "merge" and strategy != "scd2")
        or asked
        or bool(json_config.get("root_key_propagation"))
        or root in (json_config.get("propagation") or {}).get("tables", {})
    )
    if propagate:
        _record_propagation(schema, root, schema_wide=asked)
    return propagate


def _contract(schema: Schema, hints: TableHints, existing: Table | None) -> SchemaContract:
    """The root's contract: the hint's (else the table's), then the schema's."""
    own = hints.get("schema_contract") or (existing.schema_contract if existing else None)
    return SchemaContract.parse(own).over(SchemaContract.parse(schema.settings.schema_contract))


def plan_root(
    schema: Schema, source_name: str, hints: TableHints, naming: NamingConvention, caps: _Caps
) -> RootPlan:
    """The plan of one source table: its root name, spec and hints (propagation recorded)."""
    use_break_path = schema.use_break_path_on_normalize
    root = (
        naming.normalize_tables_path(source_name)
        if use_break_path
        else naming.normalize_table_identifier(source_name)
    )
    existing = schema.tables.get(root)
    explicit = hints.get("write_disposition") is not None
    disposition, strategy = _run_disposition(hints, existing)
    scd2 = {**_stored_scd2(existing), **_scd2_options(hints, naming)} if strategy == "scd2" else {}
    columns = _hinted_columns(root, hints, disposition, strategy, naming, use_break_path, scd2)
    fmt = hints.get("table_format") or (existing.extra.get("table_format") if existing else None)
    merges = caps is None or caps.merges(fmt)  # else it loads as append
    propagate = _propagates_root_key(schema, root, hints, disposition if merges else "-", strategy)
    nested = plan_nested(root, hints, naming, use_break_path)
    max_nesting = _max_nesting(schema, hints, existing)
    primary_key = tuple(c for c, col in columns.items() if col.primary_key)
    spec = RootSpec(
        source_name=source_name,
        root=root,
        max_nesting=max_nesting,
        propagate_root_key=propagate,
        primary_key=primary_key if strategy in ("upsert", "insert-only") else (),
        row_hash=strategy == "scd2",
        valid_from=_valid_from(scd2),
        contract=_contract(schema, hints, existing),
        existing_table=existing is not None,
        typed_declared=existing is None and any(c.data_type for c in columns.values()),
        not_null=_not_null(existing, columns),
        null_refused=_null_refused(schema, root, columns, nested),
        **nested_spec(schema, root, hints.get("resource") or source_name, nested, propagate),
    )
    nesting_hinted = (
        hints.get("max_nesting") is not None or hints.get("max_table_nesting") is not None
    )
    return RootPlan(
        spec=spec,
        columns=columns,
        disposition=(disposition, strategy) if explicit or existing is None else None,
        max_nesting=max_nesting if nesting_hinted else None,
        schema_contract=hints.get("schema_contract"),
        formats={
            **scd2,
            **{k: hints[k] for k in ("file_format", "table_format") if hints.get(k) is not None},
            **table_keys_of(hints),  # references and additional hints, kept as given (dlt's)
        },
        nested={table: plan.columns for table, plan in nested.items()},
        materialize=bool(hints.get("x-materialize")),
        nested_tables=nested,
        resource=str(hints["resource"]) if hints.get("resource") else None,
    )


def _valid_from(scd2: Mapping[str, object]) -> str:
    """scd2's "valid from" column: the first validity column name (dlt's default if none)."""
    names = scd2.get("x-validity-column-names")
    return str(names[0]) if isinstance(names, list) and names else VALID_FROM


def known_types(schema: Schema, plans: Sequence[RootPlan]) -> dict[str, dict[str, str]]:
    """Table -> column -> data type the engine must use: the schema's and hinted types."""
    known = {
        name: {c: col.data_type for c, col in table.columns.items() if col.data_type}
        for name, table in schema.tables.items()
    }
    for table, columns in hinted_by_table(plans).items():
        for name, column in columns.items():
            if column.data_type:
                known.setdefault(table, {})[name] = column.data_type
    return known


def known_decimals(schema: Schema, plans: Sequence[RootPlan]) -> dict[str, dict[str, DecimalShape]]:
    """Table -> column -> shape of every decimal column the schema or a hint declares.

    A column the schema already types keeps its shape (its table holds data of that shape;
    a hint cannot change it there), so the arrays written are what the table holds."""
    known = {
        name: {c: shape_of(col.precision, col.scale) for c, col in table.columns.items()
               if col.data_type == "decimal"}
        for name, table in schema.tables.items()
    }  # fmt: skip
    for table, columns in hinted_by_table(plans).items():
        existing = schema.tables[table].columns if table in schema.tables else {}
        for name, column in columns.items():
            typed = existing.get(name)
            if column.data_type == "decimal" and (typed is None or not typed.data_type):
                known.setdefault(table, {})[name] = shape_of(column.precision, column.scale)
    return {table: shapes for table, shapes in known.items() if shapes}


def hinted_by_table(plans: Sequence[RootPlan]) -> dict[str, dict[str, Column]]:
    """Columns code declares, per table: each root's and its nested tables'."""
    hinted: dict[str, dict[str, Column]] = {}
    for plan in plans:
        hinted[plan.spec.root] = dict(plan.columns)
        for table, columns in plan.nested.items():
            hinted[table] = dict(columns)
    return hinted


def with_root_hints(table: Table, plan: RootPlan) -> Table:
    """The root table with what code says about it; marks it as having seen data."""
    write_disposition = table.write_disposition
    extra = dict(table.extra)
    if plan.disposition is not None:
        write_disposition, strategy = plan.disposition
        if strategy is not None:  # none in code keeps the table's (dlt 1.31), even under append
            extra["x-merge-strategy"] = strategy
    if plan.max_nesting is not None:
        extra["x-normalizer"] = {"max_nesting": plan.max_nesting}
    extra.update(plan.formats)
    extra["x-normalizer"] = {**(extra.get("x-normalizer") or {}), "seen-data": True}
    return attrs.evolve(
        table,
        extra=extra,
        write_disposition=write_disposition,
        schema_contract=(
            table.schema_contract if plan.schema_contract is None else plan.schema_contract
        ),
        resource=plan.resource or table.resource or plan.spec.source_name,  # the last writer's
    )


@attrs.frozen
class TableSummary:
    """What all chunks together say about the tables: first-seen order, parents, rows, files."""

    order: tuple[str, ...]
    parents: Mapping[str, str | None]
    rows: Mapping[str, int]
    files: Mapping[str, tuple[str, ...]]
    sources: Mapping[str, str]

    @classmethod
    def of(cls, facts: Sequence[ChunkFacts]) -> TableSummary:
        first: dict[str, Position] = {}
        parents: dict[str, str | None] = {}
        rows: dict[str, int] = {}
        files: dict[str, list[str]] = {}
        sources: dict[str, str] = {}
        for fact in facts:
            for name, source in fact.table_sources.items():
                sources.setdefault(name, source)
            for name, table in fact.tables.items():
                if name not in first or table.first < first[name]:
                    # the first row of a table names its parent, as in one pass: a name two
                    # paths share (a dict's list, then a list's list) keeps the first one
                    first[name] = table.first
                    parents[name] = table.parent
                rows[name] = rows.get(name, 0) + table.rows
            for name, paths in fact.files.items():
                files.setdefault(name, []).extend(paths)
        order = tuple(sorted(first, key=lambda t: first[t]))
        return cls(order, parents, rows, {t: tuple(p) for t, p in files.items()}, sources)


def _by_table(decisions: Decisions) -> dict[str, list[tuple[str, ColumnDecision]]]:
    """Decided columns per table, in order of first appearance."""
    grouped: dict[str, list[tuple[str, ColumnDecision]]] = {}
    for (table, column), decision in sorted(decisions.items(), key=lambda kv: kv[1].first):
        grouped.setdefault(table, []).append((column, decision))
    return grouped


#: dlt's link columns of nested rows: in a root table a user key of that name is user data
_NESTED_ONLY: Final = (PARENT_ID, LIST_IDX)


def _new_column(
    schema: Schema, table: str, name: str, decision: ColumnDecision, hinted: Column | None
) -> Column:
    is_root = schema.tables[table].parent is None
    if name in _SYSTEM_TYPES and not (is_root and name in _NESTED_ONLY):
        column = system_column(name)
        return column if hinted is None else hints_first(column.merge(hinted), hinted)
    column = schema.new_column(table, name, decision.data_type, variant=decision.variant)
    if name in _NESTED_ONLY:  # typed by the user's values, not null by dlt's default hints
        column = attrs.evolve(column, nullable=False)
    if hinted is None:
        return column
    return hints_first(column.merge(attrs.evolve(hinted, data_type=None)), hinted)


def apply_facts(
    schema: Schema,
    summary: TableSummary,
    decisions: Decisions,
    plans: Mapping[str, RootPlan],
) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """Create and evolve the tables the chunks wrote, in first-seen order.

    Returns the new tables and the new columns per table. A new table starts with the typed
    columns code declared; hints from code also apply to columns an existing table already
    has (their data type stays: the column holds data).
    """
    new_tables: list[str] = []
    new_columns: dict[str, tuple[str, ...]] = {}
    grouped = _by_table(decisions)
    hinted_tables = hinted_by_table(list(plans.values()))
    nested_plans = {
        table: (nested, plan.resource or plan.spec.source_name)
        for plan in plans.values()
        for table, nested in plan.nested_tables.items()
    }
    # dlt's order: the roots as extract met them (``plans`` keeps it), then nested tables
    roots = [name for name in plans if name in summary.parents]
    for name in [*roots, *(name for name in summary.order if name not in plans)]:
        plan = plans.get(name)
        hinted = hinted_tables.get(name, {})
        if name not in schema.tables:
            # every hinted column, typed or not (dlt keeps one no data fills as incomplete);
            # a root made from code hints writes its keys as dlt's hint table does
            keys = (
                declared_key_order(plan.disposition[0] if plan.disposition else None)
                if plan is not None
                else nested_keys(nested_plans.get(name))
            )
            parent = summary.parents[name]
            schema.update_table(
                Table(name, parent=parent, columns=[*hinted.values()], key_order=keys)
            )
            new_tables.append(name)
        if plan is not None:
            schema.replace_table(with_root_hints(schema.tables[name], plan))
        elif summary.rows.get(name, 0) > 0:
            # dlt marks every table that received data, nested ones too
            schema.replace_table(schema.tables[name].with_normalizer_hint("seen-data", True))
        if name in nested_plans:
            schema.replace_table(with_nested_hints(schema.tables[name], *nested_plans[name]))
        known = with_hinted_columns(schema, name, hinted)
        retyped = hints_on_known_columns(hinted, known)
        # a column the schema declares without a type (``update_table``) is new to the data:
        # typed now, it moves after the typed columns, in data order (as dlt 1.31)
        added = [
            _new_column(schema, name, column, decision, hinted.get(column))
            for column, decision in grouped.get(name, [])
            if column not in known or not known[column].is_complete
        ]
        drop_untyped(schema, name, [column.name for column in added])
        schema.update_table(Table(name, columns=[*retyped, *added]), merge_compound_props=False)
        if added:
            new_columns[name] = tuple(column.name for column in added)
    return new_tables, new_columns


#: first position of a table asked for by materialize_table_schema() that got no data: last
_MATERIALIZED: Final[Position] = (1 << 30, 0, 0)


def with_materialized(
    summary: TableSummary, decisions: Decisions, plans: Sequence[RootPlan]
) -> tuple[TableSummary, dict[ColumnKey, ColumnDecision]]:
    """Tables asked for with ``materialize_table_schema()`` exist even without data: the
    ones the chunks did not meet get their load id and row key columns."""
    order = list(summary.order)
    parents = dict(summary.parents)
    decided = dict(decisions)
    for name in sorted(p.spec.root for p in plans if p.materialize):
        if name in parents:
            continue
        order.append(name)
        parents[name] = None
        for column in (LOAD_ID, ROW_ID):
            decided[(name, column)] = ColumnDecision(_MATERIALIZED, "text", False, "")
    return attrs.evolve(summary, order=tuple(order), parents=parents), decided


def add_bad_records_table(schema: Schema) -> bool:
    """The quarantine table (file, line, error, raw); True when it is new."""
    if BAD_RECORDS_TABLE in schema.tables:
        return False
    schema.update_table(Table.from_dict(_BAD_RECORDS, BAD_RECORDS_TABLE))
    return True


def check_collisions(
    context: NormalizeContext, schema: Schema, summary: TableSummary, decisions: Decisions
) -> None:
    """A case-sensitive naming on a case-insensitive destination must not merge identifiers.

    Identifiers already in the schema take part, so ``id`` arriving after ``Id`` was
    loaded is caught too. Runs before any output is kept; the files are then discarded.
    """
    caps = context.capabilities
    if caps is None or not caps.case_collision_risk(context.naming.is_case_sensitive):
        return
    tables = schema.tables
    table_pairs = [(name, name) for name in tables]
    table_pairs += [
        (name, summary.sources.get(name, name)) for name in summary.order if name not in tables
    ]
    collisions = find_identifier_collisions(table_pairs)
    for table, entries in _by_table(decisions).items():
        existing = tables[table].columns if table in tables else {}
        pairs = [(column, column) for column in existing]
        pairs += [(c, d.source) for c, d in entries if c not in existing]
        collisions.extend(find_identifier_collisions(pairs, table=table))
    if collisions:
        raise IdentifierCollisionError(collisions)
