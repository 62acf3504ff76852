"""Programs written as dlt users write them, run under dlt 1.31 (recorded by
tests/fixtures/pipe_graph/record_dlt.py) and under loadstone (tests/extract/test_pipe_graph.py):
one definition, so the comparison is of the same programs. Each takes the ``dlt`` module
(``dlt`` or ``loadstone``) and a folder and returns what a user would look at: the calls made,
the rows of each table, the cursor."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

Outcome = dict[str, Any]


def _pipeline(dlt: Any, folder: str, name: str) -> Any:
    return dlt.pipeline(
        name,
        destination=dlt.destinations.duckdb(f"{folder}/{name}.duckdb"),
        pipelines_dir=folder,
        dataset_name="d",
    )


def _rows(pipeline: Any, table: str, columns: str) -> list[list[Any]] | None:
    """The table's rows, sorted; ``None`` when the run made no such table."""
    with pipeline.sql_client() as client:
        found = client.execute_sql(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'd' "
            f"AND table_name = '{table}'"
        )
        if not found[0][0]:
            return None
        return [
            list(row)
            for row in client.execute_sql(f"SELECT {columns} FROM d.{table} ORDER BY 1, 2")
        ]


def _shop(dlt: Any, calls: dict[str, Any]) -> Any:
    """Users in two pages, read once for their orders and their addresses."""

    @dlt.resource(primary_key="id")
    def users() -> Any:
        calls["users"] += 1
        yield [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]
        yield [{"id": 3, "name": "cy"}]

    @dlt.transformer(data_from=users)
    def orders(page: Any) -> Any:
        calls["orders"].append(len(page) if isinstance(page, list) else "item")
        for user in page:
            yield {"user_id": user["id"], "total": user["id"] * 10}

    @dlt.transformer(data_from=users)
    def addresses(page: Any) -> Any:
        calls["addresses"].append(len(page) if isinstance(page, list) else "item")
        yield [{"user_id": user["id"], "city": f"city {user['id']}"} for user in page]

    @dlt.source
    def shop() -> Any:
        return users, orders, addresses

    return shop


def counted_parent(dlt: Any, folder: str, parent_selected: bool) -> Outcome:
    """A parent with side effects feeding two transformers, loaded or only feeding them."""
    calls: dict[str, Any] = {"users": 0, "orders": [], "addresses": []}
    shop = _shop(dlt, calls)
    source = shop() if parent_selected else shop().with_resources("orders", "addresses")
    pipeline = _pipeline(dlt, folder, f"shop_{parent_selected}")
    pipeline.run(source)
    return {
        "calls": calls,
        "users": _rows(pipeline, "users", "id, name"),
        "orders": _rows(pipeline, "orders", "user_id, total"),
        "addresses": _rows(pipeline, "addresses", "user_id, city"),
    }


def incremental_parent(dlt: Any, folder: str) -> Outcome:
    """A parent with a cursor feeding two transformers, over two runs: the children get only
    the parent's new rows."""
    data = [{"id": i, "updated": i} for i in (1, 2, 3)]
    calls = {"users": 0, "orders": 0, "addresses": 0}

    @dlt.resource(primary_key="id")
    def users(updated: Any = dlt.sources.incremental("updated", initial_value=0)) -> Any:
        calls["users"] += 1
        yield list(data)

    @dlt.transformer(data_from=users)
    def orders(page: Any) -> Any:
        calls["orders"] += 1
        yield [{"user_id": user["id"], "updated": user["updated"]} for user in page]

    @dlt.transformer(data_from=users)
    def addresses(page: Any) -> Any:
        calls["addresses"] += 1
        for user in page:
            yield {"user_id": user["id"], "city": f"city {user['id']}"}

    @dlt.source
    def crm() -> Any:
        return users, orders, addresses

    pipeline = _pipeline(dlt, folder, "crm")
    runs = []
    for run in range(3):
        if run == 1:
            data.extend([{"id": 4, "updated": 4}, {"id": 2, "updated": 5}])
        pipeline.run(crm())
        cursor = pipeline.state["sources"]["crm"]["resources"]["users"]["incremental"]["updated"]
        runs.append(
            {
                "orders": _rows(pipeline, "orders", "user_id, updated"),
                "addresses": _rows(pipeline, "addresses", "user_id, city"),
                "last_value": cursor["last_value"],
                "calls": dict(calls),
            }
        )
    return {"runs": runs}


def chain_with_limit(dlt: Any, folder: str) -> Outcome:
    """Pages -> items -> details with a limit on the pages and only details selected."""
    calls = {"pages": 0, "items": 0, "details": 0}

    @dlt.resource
    def pages() -> Any:
        for number in range(10):
            calls["pages"] += 1
            yield [{"n": number, "k": k} for k in range(2)]

    @dlt.transformer(data_from=pages)
    def items(page: Any) -> Any:
        calls["items"] += 1
        for row in page:
            yield {"n": row["n"], "k": row["k"]}

    @dlt.transformer(data_from=items)
    def details(item: Any) -> Any:
        calls["details"] += 1
        yield {"n": item["n"], "k": item["k"], "detail": item["n"] * 10 + item["k"]}

    @dlt.source
    def catalog() -> Any:
        return pages, items, details

    source = catalog().with_resources("details")
    source.resources["pages"].add_limit(3)
    pipeline = _pipeline(dlt, folder, "catalog")
    pipeline.run(source)
    return {
        "calls": calls,
        "details": _rows(pipeline, "details", "n, k, detail"),
        "pages": _rows(pipeline, "pages", "n, k"),
        "items": _rows(pipeline, "items", "n, k"),
    }


def parallel_and_deferred(dlt: Any, folder: str) -> Outcome:
    """``parallelized`` resources and transformers, and ``@defer`` calls: what ran off the
    main thread and what loaded."""
    off_main: dict[str, bool] = {}

    def note(name: str) -> None:
        off_main[name] = off_main.get(name, False) or (
            threading.current_thread() is not threading.main_thread()
        )

    @dlt.resource(parallelized=True)
    def alphas() -> Any:
        for number in range(4):
            note("alphas")
            yield {"a": number}

    @dlt.transformer(data_from=alphas, parallelized=True)
    def alpha_squares(item: Any) -> Any:
        note("alpha_squares")
        yield {"a": item["a"], "square": item["a"] ** 2}

    @dlt.resource
    def betas() -> Any:
        for number in range(4):
            yield {"b": number}

    @dlt.transformer(data_from=betas)
    def beta_negatives(item: Any) -> Any:
        @dlt.defer
        def fetch() -> Any:
            note("fetch")
            return {"b": item["b"], "negative": -item["b"]}

        yield fetch()

    pipeline = _pipeline(dlt, folder, "parallel")
    pipeline.run([alphas, alpha_squares, betas, beta_negatives])
    return {
        "off_main": off_main,
        "alphas": _rows(pipeline, "alphas", "a, a"),
        "alpha_squares": _rows(pipeline, "alpha_squares", "a, square"),
        "beta_negatives": _rows(pipeline, "beta_negatives", "b, negative"),
    }


def async_resources(dlt: Any, folder: str) -> Outcome:
    """An async generator resource and an async transformer (a coroutine per item)."""

    @dlt.resource
    async def tickets() -> Any:
        for number in range(5):
            await asyncio.sleep(0)
            yield {"id": number, "kind": "ticket"}

    @dlt.transformer(data_from=tickets)
    async def ticket_scores(item: Any) -> Any:
        await asyncio.sleep(0)
        return {"id": item["id"], "score": item["id"] * 3}

    pipeline = _pipeline(dlt, folder, "asyncs")
    pipeline.run([tickets, ticket_scores])
    return {
        "tickets": _rows(pipeline, "tickets", "id, kind"),
        "ticket_scores": _rows(pipeline, "ticket_scores", "id, score"),
    }


def steps_and_pipes(dlt: Any, folder: str) -> Outcome:
    """Maps and filters on a parent (its transformers get what passes), ``|`` pipes, a
    yield_map on a transformer, ``data_from=`` plain data, and a cursor on a transformer,
    over two runs."""
    calls = {"numbers": 0}
    feed = [1, 2, 3, 4, 5, 6]

    @dlt.resource
    def numbers() -> Any:
        calls["numbers"] += 1
        yield [{"n": n} for n in feed]

    numbers.add_filter(lambda item: item["n"] % 2 == 0).add_map(lambda item: {**item, "even": True})

    @dlt.transformer
    def squares(page: Any) -> Any:
        yield [{"n": item["n"], "square": item["n"] ** 2, "even": item["even"]} for item in page]

    @dlt.transformer
    def halves(page: Any) -> Any:
        for item in page:
            yield {"n": item["n"], "half": item["n"] // 2}

    halves_piped = (numbers | halves).add_yield_map(
        lambda item: [item, {**item, "half": -item["half"]}]
    )

    @dlt.transformer(data_from=dlt.resource([{"tag": "a"}, {"tag": "b"}], name="tag_list"))
    def tags(item: Any) -> Any:
        yield {"tag": item["tag"].upper()}

    @dlt.transformer(data_from=numbers)
    def stamped(page: Any, seen: Any = dlt.sources.incremental("n", initial_value=0)) -> Any:
        yield [{"n": item["n"]} for item in page]

    pipeline = _pipeline(dlt, folder, "steps")
    runs = []
    for run in range(2):
        if run == 1:
            feed.extend([7, 8, 10])
        pipeline.run([numbers, numbers | squares, halves_piped, tags, stamped])
        runs.append(
            {
                "numbers": _rows(pipeline, "numbers", "n, even"),
                "squares": _rows(pipeline, "squares", "n, square"),
                "halves": _rows(pipeline, "halves", "n, half"),
                "tags": _rows(pipeline, "tags", "tag, tag"),
                "stamped": _rows(pipeline, "stamped", "n, n"),
                "calls": dict(calls),
            }
        )
    return {"runs": runs}


def marks_through_a_fork(dlt: Any, folder: str) -> Outcome:
    """A parent page marked with a table name: its transformer's items without a mark of
    their own go to that table too (dlt hands the mark down the pipe), whether or not the
    parent itself is loaded."""

    @dlt.resource
    def users() -> Any:
        yield [{"id": 1}, {"id": 2}]
        yield dlt.mark.with_table_name({"id": 3}, "vip_users")

    @dlt.transformer(data_from=users)
    def orders(page: Any) -> Any:
        for user in page if isinstance(page, list) else [page]:
            yield {"uid": user["id"]}
        yield dlt.mark.with_table_name({"uid": -1}, "audit")

    pipeline = _pipeline(dlt, folder, "marks")
    pipeline.run(orders)
    alone = {t: _rows(pipeline, t, "*, 0") for t in ("users", "orders", "vip_users", "audit")}
    pipeline.run([users, orders])
    both = {t: _rows(pipeline, t, "*, 0") for t in ("users", "orders", "vip_users", "audit")}
    return {"transformer_alone": _without_keys(alone), "both": _without_keys(both)}


def yielded_generators(dlt: Any, folder: str) -> Outcome:
    """A resource or transformer that yields a generator (``map``, ``iter``, a generator of
    generators, a list of them): its items are more pages of the same pipe."""

    @dlt.resource
    def numbers() -> Any:
        yield map(lambda i: {"id": i}, range(2))
        yield iter([{"id": 7}])
        yield (({"id": j} for j in range(i, i + 2)) for i in (10, 20))

    @dlt.resource
    def listed() -> Any:
        return [({"id": i} for i in range(2))]

    @dlt.transformer(data_from=numbers)
    def doubled(page: Any) -> Any:
        yield ({"twice": row["id"] * 2} for row in (page if isinstance(page, list) else [page]))

    pipeline = _pipeline(dlt, folder, "generators")
    pipeline.run([numbers, listed, doubled])
    return {
        "numbers": _rows(pipeline, "numbers", "id, 0"),
        "listed": _rows(pipeline, "listed", "id, 0"),
        "doubled": _rows(pipeline, "doubled", "twice, 0"),
    }


def read_order(dlt: Any, folder: str) -> Outcome:
    """Several resources and transformers read together: the order dlt reads them in (each
    in turn, a page's transformer calls queued behind it), what a transformer returning a
    list hands on, and a table two resources write: its first writer's hints and columns."""
    calls: list[str] = []

    def numbers(name: str, count: int, disposition: str) -> Any:
        @dlt.resource(name=name, table_name="events", write_disposition=disposition)
        def rows() -> Any:
            for i in range(count):
                calls.append(f"{name}{i}")
                yield {"id": i, name: i}

        return rows

    a, b = numbers("a", 3, "replace"), numbers("b", 4, "append")

    @dlt.transformer(data_from=a)
    def twice(item: Any) -> Any:
        for j in range(2):
            calls.append(f"twice{item['id']}.{j}")
            yield {"parent": item["id"], "j": j}

    @dlt.transformer(data_from=a)
    def listed(item: Any) -> Any:
        calls.append(f"listed{item['id']}")
        return [{"parent": item["id"]}]

    @dlt.transformer(data_from=listed)
    def seen(page: Any) -> Any:
        calls.append(f"seen:{type(page).__name__}")
        yield page

    pipeline = _pipeline(dlt, folder, "order")
    pipeline.run([twice, b, seen, a])
    events = pipeline.default_schema.tables["events"]
    with pipeline.sql_client() as client:
        columns = client.execute_sql(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'd' "
            "AND table_name = 'events' ORDER BY ordinal_position"
        )
    return {
        "calls": calls,
        "events": [events.get("resource"), events.get("write_disposition")],
        "columns": [row[0] for row in columns],
        "rows": _rows(pipeline, "events", "id, coalesce(a, b)"),
    }


def shared_table_hints(dlt: Any, folder: str) -> Outcome:
    """Two resources write one table: the first that writes an item gives its hints (columns,
    keys, disposition); the other's are ignored, as is a resource's that yields nothing."""

    @dlt.resource(table_name="events", columns={"v": {"data_type": "text"}}, primary_key="id")
    def first() -> Any:
        yield {"id": 1, "v": 1}

    @dlt.resource(
        table_name="events",
        columns={"w": {"data_type": "double"}, "v": {"data_type": "bigint"}},
        merge_key="w",
        write_disposition="replace",
    )
    def second() -> Any:
        yield {"id": 2, "v": 2, "w": 3}

    @dlt.resource(table_name="other", columns={"q": {"data_type": "text"}})
    def empty() -> Any:
        yield from ()

    @dlt.resource(table_name="other", columns={"z": {"data_type": "text"}})
    def filled() -> Any:
        yield {"z": 5}

    pipeline = _pipeline(dlt, folder, "shared")
    pipeline.run([first, second, empty, filled])
    tables = {}
    for name in ("events", "other"):
        table = pipeline.default_schema.tables[name]
        columns = {
            column: [
                hints.get("data_type"),
                bool(hints.get("primary_key")),
                bool(hints.get("merge_key")),
            ]
            for column, hints in table["columns"].items()
        }
        tables[name] = [table.get("resource"), table.get("write_disposition"), columns]
    return {"tables": tables, "events": _rows(pipeline, "events", "id, v")}


def yield_map_and_limit(dlt: Any, folder: str) -> Outcome:
    """``add_yield_map``'s items read as a feed of their own, each a page for the steps
    after it (interleaved with the data, as dlt reads the map's generator as a new source),
    and ``add_limit`` before or after it: the limit closes the data at once, the map's pages
    after the next page that leaves the pipe."""
    calls: list[Any] = []

    @dlt.resource
    def numbers() -> Any:
        try:
            for i in range(6):
                calls.append(i)
                yield {"i": i}
        finally:
            calls.append("closed")

    def three(item: Any) -> Any:
        return ({"i": item["i"], "k": k} for k in range(3))

    outcome: dict[str, Any] = {}
    for name, resource in {
        "limit_then_map": numbers().add_limit(2).add_yield_map(three),
        "map_then_limit": numbers().add_yield_map(three).add_limit(4),
        "map_filter_limit": numbers()
        .add_yield_map(three)
        .add_filter(lambda item: item["k"] == 1)
        .add_limit(2),
        "rows_then_map": numbers().add_limit(1, count_rows=True).add_yield_map(lambda x: [x, x]),
    }.items():
        outcome[name] = [list(resource), list(calls)]
        calls.clear()
    return outcome


def table_order(dlt: Any, folder: str) -> Outcome:
    """The schema lists a run's tables in the order they got their first page (a page of
    transformer ``lines`` comes before its parent ``orders``' own page, as dlt forks it; an
    empty page names its table too)."""

    @dlt.resource
    def users() -> Any:
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer(data_from=users)
    def orders(page: Any) -> Any:
        yield [{"oid": user["id"] * 10} for user in page]

    @dlt.transformer(data_from=orders)
    def lines(page: Any) -> Any:
        yield [{"oid": order["oid"], "line": 1} for order in page]

    @dlt.resource
    def late() -> Any:
        yield []
        yield {"x": 1}

    @dlt.resource
    def early() -> Any:
        yield {"y": 1}

    pipeline = _pipeline(dlt, folder, "table_order")
    pipeline.run([users, orders, lines, late, early])
    return {"tables": list(pipeline.default_schema.tables)}


def wide_fan_out(dlt: Any, folder: str) -> Outcome:
    """Four resources, one feeding a chain of transformers that opens more than
    ``max_parallel_items`` generators at once: past that many feeds besides the roots' own,
    dlt reads the newest first. The order every generator body ran in."""
    calls: list[str] = []

    def numbers(name: str, count: int) -> Any:
        @dlt.resource(name=name)
        def rows() -> Any:
            for i in range(count):
                calls.append(f"{name}{i}")
                yield {"id": i}

        return rows

    def fan(name: str, count: int) -> Any:
        @dlt.transformer(name=name)
        def items(item: Any) -> Any:
            for j in range(count):
                calls.append(f"{name}{item['id']}.{j}")
                yield {"id": item["id"]}

        return items

    root = numbers("a", 5)
    first = root | fan("t", 4)
    second = first | fan("u", 3)
    pipeline = _pipeline(dlt, folder, "fan_out")
    pipeline.extract([numbers("b", 6), second, numbers("c", 2), first, numbers("d", 3)])
    return {"calls": calls}


def _without_keys(tables: dict[str, Any]) -> dict[str, Any]:
    """Rows without the random ``_dlt_id`` and the load id (sorted text of the rest)."""
    return {
        name: None
        if rows is None
        else sorted(str([v for v in row if not _is_key(v)]) for row in rows)
        for name, rows in tables.items()
    }


def _is_key(value: Any) -> bool:
    return isinstance(value, str) and (len(value) == 14 or "." in value)


def rest_boards(
    dlt: Any, folder: str, app: Any, config: Callable[..., Any], source: Any
) -> Outcome:
    """The boards API, a parent with two children, over two incremental runs, then once
    without a cursor: the requests asked and the rows loaded."""
    from rest_api_app import make_boards

    app.boards = make_boards()
    pipeline = _pipeline(dlt, folder, "boards")
    runs = []
    for run in range(2):
        if run == 1:
            app.boards += make_boards(7)[5:]
        app.requests.clear()
        pipeline.run(source(config(app.url, incremental=True), name="trello"))
        runs.append(_boards_outcome(pipeline, app))
    plain = _pipeline(dlt, folder, "boards_plain")
    app.requests.clear()
    plain.run(source(config(app.url, incremental=False), name="trello"))
    return {"incremental": runs, "plain": _boards_outcome(plain, app)}


def _boards_outcome(pipeline: Any, app: Any) -> Outcome:
    asked: dict[str, int] = {}
    for request in app.requests:
        query = "&".join(f"{k}={v[0]}" for k, v in sorted(request["query"].items()))
        key = request["path"] + ("?" + query if query else "")
        asked[key] = asked.get(key, 0) + 1
    return {
        "requests": dict(sorted(asked.items())),
        "boards": _rows(pipeline, "boards", "id, name"),
        "cards": _rows(pipeline, "cards", "id, title"),
        "members": _rows(pipeline, "members", "id, name"),
    }


#: the programs the fixtures record, by name: (dlt module, folder) -> outcome
PROGRAMS: dict[str, Callable[[Any, str], Outcome]] = {
    "counted_parent_loaded": lambda dlt, folder: counted_parent(dlt, folder, True),
    "counted_parent_not_loaded": lambda dlt, folder: counted_parent(dlt, folder, False),
    "incremental_parent": incremental_parent,
    "chain_with_limit": chain_with_limit,
    "parallel_and_deferred": parallel_and_deferred,
    "async_resources": async_resources,
    "steps_and_pipes": steps_and_pipes,
    "marks_through_a_fork": marks_through_a_fork,
    "yielded_generators": yielded_generators,
    "read_order": read_order,
    "shared_table_hints": shared_table_hints,
    "yield_map_and_limit": yield_map_and_limit,
    "table_order": table_order,
    "wide_fan_out": wide_fan_out,
}
