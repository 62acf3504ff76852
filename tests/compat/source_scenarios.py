"""Compatibility scenarios of the built-in sources (filesystem, rest_api, sql_database) and of
what they lean on, each found by running one program under dlt 1.31 and under loadstone.

Files are written into the scenario's folder; HTTP servers listen on the loopback only.
"""

from __future__ import annotations

import contextlib
import csv
import http.server
import json
import os
import threading
from collections.abc import Iterator
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import _state, scenario


def _write_csv(path: str, rows: list[list[Any]]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)


@scenario
def renamed_pipes_keep_their_own_incremental_state(ctx: Context) -> Any:
    """``(parent | transformer).with_name(n)`` copies the parent as ``<parent>_<n>``: each
    renamed pipe (and each renamed ``filesystem() | read_csv()``) has its own cursor."""
    dlt = ctx.dlt
    calls: list[Any] = []

    @dlt.resource
    def users(cur: Any = dlt.sources.incremental("id", initial_value=0)) -> Any:
        calls.append(cur.start_value)
        yield from [{"id": 1}, {"id": 2}]

    @dlt.transformer(data_from=users)
    def posts(user: Any) -> Any:
        yield {"pid": user["id"] * 10}

    @dlt.transformer
    def tags(user: Any) -> Any:
        yield {"tid": user["id"] * 100}

    pipe = ctx.pipeline("renamed")
    pipe.run([users, posts.with_name("p2")])
    pipe.run((users | tags).with_name("t2"))
    pipe.run((users | tags).with_name("t2"))
    pipe.run((users | tags).with_name("t3"))
    named = (users | tags).with_name("t2").with_name("t4")
    return {
        "calls": calls,
        "state": _state(pipe),
        "tables": ctx.tables(pipe),
        "renamed_twice": [named.name, _parent_name(named)],
        "files": _renamed_filesystem_pipes(ctx),
    }


def _parent_name(resource: Any) -> str:
    parent = getattr(resource, "_pipe", None)  # dlt keeps the parent on its pipe
    return parent.parent.name if parent is not None else resource._parent.name


def _renamed_filesystem_pipes(ctx: Context) -> Any:
    from importlib import import_module

    fs = import_module(f"{ctx.dlt.__name__}.sources.filesystem")
    base = os.path.abspath("files")
    _write_csv(f"{base}/jan/a.csv", [["id", "v"], [1, "x"]])
    _write_csv(f"{base}/feb/b.csv", [["id", "v"], [2, "y"]])
    pipe = ctx.pipeline("renamed_files")
    for folder in ("jan", "feb", "jan"):
        listing = fs.filesystem(bucket_url=base, file_glob=f"{folder}/*.csv")
        listing.apply_hints(incremental=ctx.dlt.sources.incremental("modification_date"))
        pipe.run((listing | fs.read_csv()).with_name(folder))
    state = _state(pipe)
    resources = next(iter(state.values()))["resources"]
    return {"state_keys": sorted(resources), "tables": ctx.tables(pipe)}


def _sqlite_with_documents(path: str) -> str:
    """A SQLite file whose ``products`` table holds a JSON column of documents."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.executescript(
        "create table products (id integer primary key, sku text not null, attrs json,"
        " tags json, note text);"
        "insert into products values (1, 'a', '{\"c\": 1, \"t\": [\"x\"]}', '[1, 2]', 'n');"
        "insert into products values (2, 'b', '{\"c\": 2, \"t\": []}', '[3]', null);"
    )
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


@scenario
def sql_json_columns_without_reflected_types(ctx: Context) -> Any:
    """At ``reflection_level="minimal"`` the ``pyarrow`` backend keeps a JSON column whole
    and typed ``json``; the ``sqlalchemy`` backend flattens its documents."""
    from importlib import import_module

    sql = import_module(f"{ctx.dlt.__name__}.sources.sql_database")
    url = _sqlite_with_documents(os.path.abspath("docs.db"))
    out: dict[str, Any] = {}
    for backend in ("pyarrow", "sqlalchemy"):
        pipe = ctx.pipeline(f"docs_{backend}")
        pipe.run(sql.sql_table(url, table="products", backend=backend, reflection_level="minimal"))
        out[backend] = {
            "types": {
                t["name"]: {c: v.get("data_type") for c, v in t["columns"].items()}
                for t in pipe.default_schema.data_tables()
            },
            "tables": ctx.tables(pipe),
        }
    return out


@scenario
def typed_hints_place_a_column_hinted_without_type(ctx: Context) -> Any:
    """A column hinted without a type (a cursor's ``incremental``, ``nullable``) holds no
    place in the table until hints with its type place it: ``sql_database`` with deferred
    reflection and a cursor keeps the table's column order."""
    from importlib import import_module

    dlt = ctx.dlt
    typed = dlt.mark.make_hints(columns={"a": {"data_type": "bigint"}, "b": {"data_type": "text"}})

    @dlt.resource(columns={"b": {"nullable": False}})
    def marked() -> Any:
        yield dlt.mark.with_hints({"a": 1, "b": "x", "c": 2}, typed)

    sql = import_module(f"{dlt.__name__}.sources.sql_database")
    url = _sqlite_with_documents(os.path.abspath("deferred.db"))
    source = sql.sql_database(url, table_names=["products"], defer_table_reflect=True)
    source.products.apply_hints(incremental=dlt.sources.incremental("sku"))
    marked_pipe, deferred_pipe = ctx.pipeline("placed"), ctx.pipeline("deferred")
    marked_pipe.run([marked()])
    deferred_pipe.run(source)
    return {
        "marked": list(marked_pipe.default_schema.get_table("marked")["columns"]),
        "products": list(deferred_pipe.default_schema.get_table("products")["columns"]),
    }


class _OwnersHandler(http.server.BaseHTTPRequestHandler):
    """``/owners``: a list; ``/owners/<login>...``: one owner holding a list and a next link."""

    seen: list[str]

    def log_message(self, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path.split("?")[0] == "/owners":
            body: Any = [{"login": "l0"}, {"login": "l1"}]
        elif self.path == "/missing":
            self.send_error(404)
            return
        elif "page=2" in self.path:
            body = {"login": "more", "repos": [{"r": "z"}]}
        else:
            login = self.path.split("/")[2].split("?")[0]
            body = {"login": login, "repos": [{"r": "a"}], "next": f"/owners/{login}?page=2"}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def _owners_api() -> Iterator[tuple[str, list[str]]]:
    """The owners API on a loopback port: its base URL and the paths it was asked for."""
    seen: list[str] = []
    handler = type("Handler", (_OwnersHandler,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # a short poll: shutdown() waits for the next one (0.5 s by default)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", seen
    finally:
        server.shutdown()
        server.server_close()


@scenario
def rest_api_paths_ending_in_a_placeholder_read_one_object(ctx: Context) -> Any:
    """A path whose last segment is a placeholder names one object: the whole body is the
    record, on one page, unless the endpoint names a data selector or a paginator."""
    from importlib import import_module

    rest_api = import_module(f"{ctx.dlt.__name__}.sources.rest_api")
    endpoints = {
        "whole": {"path": "owners/{resources.owners.login}"},
        "dotted": {"path": "owners/{resources.owners.login}.json"},
        "selected": {"path": "owners/{resources.owners.login}", "data_selector": "repos"},
        "paged": {"path": "owners/{resources.owners.login}", "paginator": "json_link"},
        "deeper": {"path": "owners/{resources.owners.login}/repos"},
    }
    next_link = {"type": "json_link", "next_url_path": "next"}  # the client's: not for one object
    out: dict[str, Any] = {}
    with _owners_api() as (base_url, seen):
        for name, endpoint in endpoints.items():
            seen.clear()
            config = {
                "client": {"base_url": base_url, "paginator": next_link},
                "resources": [
                    {"name": "owners", "endpoint": "owners", "selected": False},
                    {"name": name, "endpoint": endpoint},
                ],
            }
            records = list(rest_api.rest_api_source(config).resources[name])
            out[name] = {"records": records, "requests": sorted(seen)}
    return out


@scenario
def source_errors_are_the_resources_errors(ctx: Context) -> Any:
    """A failed request or an unreadable table fails extract with the resource's
    ``ResourceExtractionError`` (not a write error of the package), under ``run`` and when
    the resource is iterated."""
    import sqlite3
    from importlib import import_module

    rest_api = import_module(f"{ctx.dlt.__name__}.sources.rest_api")
    sql = import_module(f"{ctx.dlt.__name__}.sources.sql_database")
    path = os.path.abspath("gone.db")
    with sqlite3.connect(path) as conn:
        conn.execute("create table gone (id integer primary key)")
    table = sql.sql_table(f"sqlite:///{path}", table="gone")
    with sqlite3.connect(path) as conn:
        conn.execute("drop table gone")
    pipe = ctx.pipeline("errors")
    out: dict[str, Any] = {"sql": ctx.attempt(lambda: pipe.run(table))}
    with _owners_api() as (base_url, _):
        config = {"client": {"base_url": base_url}, "resources": [{"name": "missing"}]}
        out["http"] = ctx.attempt(lambda: pipe.run(rest_api.rest_api_source(config)))
        out["http_iterated"] = ctx.attempt(
            lambda: list(rest_api.rest_api_source(config).resources["missing"])
        )
    return out


@scenario
def sql_incremental_deduplicates_by_the_reflected_primary_key(ctx: Context) -> Any:
    """A table's reflected primary key is the key its incremental deduplicates by: a row
    changed at the last cursor value is not read again (its key was seen); a table without a
    key deduplicates by the whole row."""
    import sqlite3
    from importlib import import_module

    sql = import_module(f"{ctx.dlt.__name__}.sources.sql_database")
    path = os.path.abspath("keys.db")
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "create table ev (id integer primary key, v integer, at integer);"
            "create table loose (v integer, at integer);"
            "insert into ev values (1, 10, 1), (2, 20, 2), (3, 30, 3);"
            "insert into loose values (10, 1), (30, 3);"
        )
    pipe = ctx.pipeline("keys")

    def run() -> None:
        source = sql.sql_database(f"sqlite:///{path}", table_names=["ev", "loose"])
        for table in ("ev", "loose"):
            source.resources[table].apply_hints(incremental=ctx.dlt.sources.incremental("at"))
        pipe.run(source)

    run()
    with sqlite3.connect(path) as conn:  # changed at the last cursor value
        conn.executescript("update ev set v = 31 where id = 3; update loose set v = 31;")
    run()
    resources = pipe.state["sources"]["sql_database"]["resources"]
    return {
        # dlt keeps the hashes in a set's order, which varies between processes: sorted
        "hashes": {
            n: sorted(r["incremental"]["at"]["unique_hashes"]) for n, r in resources.items()
        },
        "tables": ctx.tables(pipe),
    }
