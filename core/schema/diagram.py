"""A schema as a diagram: Mermaid, DBML and Graphviz DOT, the formats dlt's schema export offers.

People would rather look at the tables a load made than read their YAML: ``loadstone
pipeline P schema --format mermaid|dbml|dot`` prints one of these, :meth:`Schema.to_mermaid`
and friends return it, and the run report draws the same graph. Every renderer works on the
stored document (``Schema.to_dict()``), so a schema file written by dlt renders too.

The shape follows dlt 1.31's output for the same schema (checked as a black box): tables in
schema order (DBML: data tables first), one line per typed column, and the references a load
creates: each root table to ``_dlt_loads`` through ``_dlt_load_id``, each nested table to its
parent through ``_dlt_parent_id`` (and to its root through ``_dlt_root_id`` when the source
propagates it), and ``_dlt_version`` to ``_dlt_loads`` through the schema's name and hash.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from loadstone.schema.stored import TColumnSchema, TStoredSchema, TTableSchema

#: the formats :func:`render` writes
FORMATS = ("mermaid", "dbml", "dot")

LOADS = "_dlt_loads"
VERSION = "_dlt_version"


@attrs.frozen
class Reference:
    """One line between two tables: ``table.column`` refers to ``target.target_column``."""

    table: str
    column: str
    target: str
    target_column: str
    #: dlt's label of the reference (``_dlt_load``, ``_dlt_parent``, ``_dlt_root`` ...)
    label: str
    #: the relation: many-to-one for every reference but the version's two
    kind: str = "many_to_one"


def _is_dlt_table(name: str) -> bool:
    return name.startswith("_dlt")


def tables_of(stored: TStoredSchema, include_dlt_tables: bool = True) -> dict[str, TTableSchema]:
    """The tables to draw, in schema order, each with only its typed columns."""
    out: dict[str, TTableSchema] = {}
    for name, table in (stored.get("tables") or {}).items():
        if not include_dlt_tables and _is_dlt_table(name):
            continue
        columns = {
            column_name: column
            for column_name, column in (table.get("columns") or {}).items()
            if column.get("data_type")
        }
        if columns or not _is_dlt_table(name):
            out[name] = {**table, "columns": columns}
    return out


def _hinted(table: TTableSchema, hint: str, default: str) -> str:
    for name, column in table["columns"].items():
        if column.get(hint):
            return str(name)
    return default


def references(tables: Mapping[str, TTableSchema]) -> list[Reference]:
    """The references a load creates between ``tables``, in dlt's order."""
    refs: list[Reference] = []
    if LOADS in tables:
        for name, table in tables.items():
            if not table.get("parent") and "_dlt_load_id" in table["columns"]:
                refs.append(Reference(name, "_dlt_load_id", LOADS, "load_id", "_dlt_load"))
    for name, table in tables.items():
        parent = table.get("parent")
        if parent is not None and parent in tables:
            column = _hinted(table, "parent_key", "_dlt_parent_id")
            target_column = _hinted(tables[parent], "row_key", "_dlt_id")
            refs.append(Reference(name, column, parent, target_column, "_dlt_parent"))
    for name, table in tables.items():
        root = _root_of(tables, name)
        if root != name and "_dlt_root_id" in table["columns"]:
            target_column = _hinted(tables[root], "row_key", "_dlt_id")
            refs.append(Reference(name, "_dlt_root_id", root, target_column, "_dlt_root"))
    if LOADS in tables and VERSION in tables:
        refs.append(
            Reference(
                VERSION,
                "version_hash",
                LOADS,
                "schema_version_hash",
                "_dlt_schema_version",
                "one_to_many",
            )
        )
        refs.append(
            Reference(VERSION, "schema_name", LOADS, "schema_name", "_dlt_schema_name", "many")
        )
    return refs


def _root_of(tables: Mapping[str, TTableSchema], name: str) -> str:
    seen = {name}
    while (parent := tables[name].get("parent")) is not None and parent in tables:
        if parent in seen:
            break
        name = parent
        seen.add(name)
    return name


def column_keys(column: TColumnSchema) -> list[str]:
    return [key for hint, key in (("primary_key", "PK"), ("unique", "UK")) if column.get(hint)]


def to_mermaid(
    stored: TStoredSchema,
    *,
    hide_columns: bool = False,
    hide_descriptions: bool = False,
    include_dlt_tables: bool = True,
) -> str:
    """A Mermaid ``erDiagram`` (renders on GitHub, in MkDocs Material, in mermaid.live)."""
    tables = tables_of(stored, include_dlt_tables)
    lines = ["erDiagram"]
    for name, table in tables.items():
        lines.append(f"    {name}{{")
        for column_name, column in ({} if hide_columns else table["columns"]).items():
            line = f"    {column['data_type']} {column_name}"
            keys = column_keys(column)
            if keys:
                line += " " + ",".join(keys)
            description = column.get("description")
            if description and not hide_descriptions:
                line += ' "' + str(description).replace('"', "'") + '"'
            lines.append(line)
        lines.append("}")
    arrows = {"many_to_one": "}|--||", "one_to_many": "||--|{", "many": "}|--|{"}
    for ref in references(tables):
        lines.append(f'    {ref.table} {arrows[ref.kind]} {ref.target} : "{ref.label}"')
    return "\n".join(lines) + "\n"


def _dbml_settings(column: TColumnSchema) -> str:
    settings = [
        setting
        for hint, setting in (("primary_key", "pk"), ("unique", "unique"))
        if column.get(hint)
    ]
    if column.get("nullable") is False:
        settings.append("not null")
    if column.get("description"):
        settings.append("note: '" + str(column["description"]).replace("'", "\\'") + "'")
    return f" [{', '.join(settings)}]" if settings else ""


def to_dbml(stored: TStoredSchema, *, include_dlt_tables: bool = True) -> str:
    """DBML (dbdiagram.io, dbdocs): data tables first, then dlt's, then the references."""
    tables = tables_of(stored, include_dlt_tables)
    ordered = sorted(tables.items(), key=lambda item: _is_dlt_table(item[0]))
    blocks: list[str] = []
    for name, table in ordered:
        lines = [f'Table "{name}" {{']
        for column_name, column in table["columns"].items():
            lines.append(f'    "{column_name}" {column["data_type"]}{_dbml_settings(column)}')
        if table.get("description"):
            note = str(table["description"]).replace("'", "\\'")
            lines += ["    Note {", f"        '{note}'", "    }"]
        lines.append("}")
        blocks.append("\n".join(lines))
    signs = {"many_to_one": ">", "one_to_many": "<", "many": "<>"}
    for ref in references(tables):
        blocks.append(
            f'Ref {{\n    "{ref.table}"."{ref.column}" {signs[ref.kind]} '
            f'"{ref.target}"."{ref.target_column}"\n}}'
        )
    return "\n\n".join(blocks) + "\n"


def _dot_label(name: str, table: TTableSchema) -> Iterator[str]:
    yield '    <table border="0" cellborder="1" cellspacing="0" cellpadding="6">'
    yield f'    <tr><td port="p0" bgcolor="#bbca06"><b>{html.escape(name)}</b></td></tr>'
    for index, (column_name, column) in enumerate(table["columns"].items(), start=1):
        flags = " NN" if column.get("nullable") is False else ""
        yield (
            f'    <tr><td align="left" port="f{index}" bgcolor="#e7e2dd">'
            f"{html.escape(column_name)} <i>{html.escape(column['data_type'])}{flags}</i></td></tr>"
        )
    yield "    </table>"


def to_dot(stored: TStoredSchema, *, include_dlt_tables: bool = True) -> str:
    """Graphviz DOT: one HTML-like record per table, an edge per reference, column to column."""
    tables = tables_of(stored, include_dlt_tables)
    graph_name = str(stored.get("name") or "schema")
    lines = [
        f'digraph "{graph_name}" {{',
        '    graph [fontname="helvetica", rankdir="BT", ranksep=1];',
        '    node [shape=plaintext, margin=0, fontname="helvetica"];',
        '    edge [fontname="helvetica", color="#1c1c34"];',
    ]
    for name, table in tables.items():
        lines.append(f'"{name}" [id="{name}", label=<')
        lines.extend(_dot_label(name, table))
        lines.append(">];")
    for ref in references(tables):
        ports = [list(tables[t]["columns"]).index(c) + 1 for t, c in _ends(ref)]
        lines.append(
            f'"{ref.table}":f{ports[0]} -> "{ref.target}":f{ports[1]} '
            f'[dir=both, arrowtail="vee", arrowhead="dot", label="{ref.label}"];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _ends(ref: Reference) -> tuple[tuple[str, str], tuple[str, str]]:
    return (ref.table, ref.column), (ref.target, ref.target_column)


def render(stored: TStoredSchema, fmt: str, *, include_dlt_tables: bool = True) -> str:
    """The schema document ``stored`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "mermaid":
        return to_mermaid(stored, include_dlt_tables=include_dlt_tables)
    if fmt == "dbml":
        return to_dbml(stored, include_dlt_tables=include_dlt_tables)
    if fmt == "dot":
        return to_dot(stored, include_dlt_tables=include_dlt_tables)
    raise ValueError(f"unknown diagram format {fmt!r}: choose one of {', '.join(FORMATS)}")
