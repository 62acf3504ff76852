"""dlt programs that import more than ``dlt``, and how a user ports them (issue 36).

Each program is dlt source text as a user writes it. :func:`port` is the whole port:
``import dlt`` -> ``import loadstone as dlt`` and ``from dlt.X`` -> ``from loadstone.X``.
:func:`run_program` runs a text in a fresh folder and returns what it loaded (tables with
their DuckDB column types and rows, the pipeline's source state) and what it put in
``OUTCOME``. This module imports neither library: the recorder
(``tests/compat/record_import_paths.py``) runs the dlt text under dlt 1.31,
``tests/test_dlt_import_paths.py`` the ported text under loadstone.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path
from typing import Any

from tests.compat.harness import VOLATILE, plain

PENDULUM_VALUES = """
import dlt
from dlt.common import pendulum

START = pendulum.datetime(2024, 1, 2, tz="UTC")


@dlt.resource
def events(updated_at=dlt.sources.incremental("updated_at", initial_value=START)):
    for day in range(1, 6):
        yield {
            "id": day,
            "updated_at": pendulum.datetime(2024, 1, day, 12),
            "day": pendulum.date(2024, 1, day),
            "local": pendulum.datetime(2024, 1, day, 8, tz="Europe/Berlin"),
            "parsed": pendulum.parse(f"2024-01-0{day}T10:00:00+02:00"),
            "at": pendulum.time(10, day),
            "nested": {"seen": pendulum.datetime(2023, 12, day)},
        }


@dlt.resource
def days(day=dlt.sources.incremental("day", initial_value=pendulum.date(2024, 1, 3))):
    for n in range(1, 6):
        yield {"n": n, "day": pendulum.date(2024, 1, n)}


pipeline = dlt.pipeline(
    "pendulum_values", destination="duckdb", pipelines_dir=PIPELINES_DIR, dataset_name="d"
)
pipeline.run([events(), days()])
pipeline.run([events(), days()])
OUTCOME["now_is_pendulum"] = isinstance(pendulum.now(), pendulum.DateTime)
"""

PENDULUM_DURATION = """
import dlt
from dlt.common import pendulum
from dlt.pipeline.exceptions import PipelineStepFailed

pipeline = dlt.pipeline(
    "pendulum_duration", destination="duckdb", pipelines_dir=PIPELINES_DIR, dataset_name="d"
)
try:
    pipeline.run([{"id": 1, "took": pendulum.duration(hours=2, seconds=30)}], table_name="jobs")
except PipelineStepFailed as failed:
    OUTCOME["failed_at"] = failed.step
    OUTCOME["cause"] = type(failed.exception).__name__
"""

TYPED_RESOURCE = """
import dlt
from dlt.common.typing import DictStrAny, TDataItem, TDataItems
from dlt.common.schema.typing import TColumnSchema, TTableSchemaColumns, TWriteDisposition
from dlt.sources import DltResource, DltSource

PRICE: TColumnSchema = {"data_type": "decimal", "precision": 10, "scale": 2}
COLUMNS: TTableSchemaColumns = {"price": PRICE, "sku": {"data_type": "text", "nullable": False}}
DISPOSITION: TWriteDisposition = "append"


@dlt.resource(columns=COLUMNS, write_disposition=DISPOSITION, table_name="products")
def products() -> TDataItems:
    page: list[TDataItem] = [{"sku": "a", "price": "1.50"}, {"sku": "b", "price": "2.25"}]
    yield page


@dlt.transformer(data_from=products, table_name="labels")
def labels(items: TDataItems) -> TDataItems:
    for item in items:
        label: DictStrAny = {"sku": item["sku"], "label": item["sku"].upper()}
        yield label


@dlt.source
def shop() -> list[DltResource]:
    return [products, labels]


source = shop()
OUTCOME["is_source"] = isinstance(source, DltSource)
OUTCOME["is_resource"] = isinstance(source.resources["products"], DltResource)
pipeline = dlt.pipeline(
    "typed_resource", destination="duckdb", pipelines_dir=PIPELINES_DIR, dataset_name="d"
)
pipeline.run(source)
"""

STEP_FAILED = """
import dlt
from dlt.extract.exceptions import ResourceExtractionError
from dlt.pipeline.exceptions import PipelineStepFailed
from dlt.common.exceptions import DltException


@dlt.resource
def broken():
    yield {"id": 1}
    raise RuntimeError("the API went away")


pipeline = dlt.pipeline(
    "step_failed", destination="duckdb", pipelines_dir=PIPELINES_DIR, dataset_name="d"
)
try:
    pipeline.run(broken())
except PipelineStepFailed as failed:
    OUTCOME["step"] = failed.step
    OUTCOME["cause_is_extraction_error"] = isinstance(failed.exception, ResourceExtractionError)
    OUTCOME["is_dlt_exception"] = isinstance(failed, DltException)
pipeline.run([{"id": 2}], table_name="broken")
"""

CREDENTIALS = """
import dlt
from dlt.common.configuration.specs import BaseConfiguration, configspec
from dlt.common.typing import TSecretStrValue
from dlt.sources.credentials import ConnectionStringCredentials


@configspec
class ApiCredentials(dlt.TCredentials):
    api_key: TSecretStrValue = None
    base_url: str = "https://api.example.com"


@configspec
class Paging(BaseConfiguration):
    page_size: int = 100
    max_pages: int = None


dsn = ConnectionStringCredentials("postgresql://loader:s3cr%40t@localhost:5432/dlt_data?sslmode=disable")
OUTCOME["dsn"] = dict(dsn)
OUTCOME["dsn_url"] = dsn.to_url()
OUTCOME["dsn_str"] = str(dsn)
OUTCOME["dsn_native"] = dsn.to_native_representation()
OUTCOME["from_dict"] = ConnectionStringCredentials(
    {"drivername": "postgresql", "username": "u", "host": "h", "database": "d"}
).to_native_representation()
OUTCOME["api"] = dict(ApiCredentials(api_key="k"))
OUTCOME["paging"] = dict(Paging())
OUTCOME["equal"] = ApiCredentials(api_key="k") == ApiCredentials(api_key="k")
try:
    ConnectionStringCredentials("not a connection string")
except ValueError as error:
    OUTCOME["bad"] = type(error).__name__
try:
    Paging()["nope"] = 1
except KeyError:
    OUTCOME["unknown_key"] = "KeyError"
"""

SCHEMA_AND_INFO = """
import dlt
from dlt.common.pipeline import LoadInfo
from dlt.common.schema import Schema

schema = Schema("shop")
pipeline = dlt.pipeline(
    "schema_and_info", destination="duckdb", pipelines_dir=PIPELINES_DIR, dataset_name="d"
)
info = pipeline.run([{"id": 1, "name": "a"}], table_name="items", schema=schema)
OUTCOME["is_load_info"] = isinstance(info, LoadInfo)
OUTCOME["schema_name"] = pipeline.default_schema_name
OUTCOME["has_failed_jobs"] = info.has_failed_jobs
"""

TIME_COERCIONS = """
import datetime as dt

import dlt
from dlt.common import pendulum
from dlt.common.time import ensure_pendulum_date, ensure_pendulum_datetime

VALUES = [
    "2024-01-02", "2024-01-02T10:00:00", "2024-01-02T10:00:00+02:00", "2024-01-02 10:00",
    "2024-01-02T10:00:00.123456Z", "2024-01-02T23:30:00-02:00", "10:00", "nope",
    dt.date(2024, 1, 2), pendulum.date(2024, 1, 2), dt.datetime(2024, 1, 2, 10),
    dt.datetime(2024, 1, 2, 23, 30), dt.datetime(2024, 1, 2, 10, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    pendulum.datetime(2024, 1, 2, tz="Europe/Berlin"), 1704189600, 1704189600.5, True, None, [1],
]
for value in VALUES:
    for tz in (None, pendulum.timezone("Europe/Berlin")):
        for coerce in (ensure_pendulum_datetime, ensure_pendulum_date):
            try:
                got = coerce(value, tz=tz)
                answer = [type(got).__name__, got.isoformat()]
            except Exception as error:
                answer = ["error", type(error).__name__]
            OUTCOME[f"{coerce.__name__}({value!r}, tz={tz})"] = answer
"""

#: name -> dlt program text
PROGRAMS: dict[str, str] = {
    "pendulum_values": PENDULUM_VALUES,
    "pendulum_duration": PENDULUM_DURATION,
    "typed_resource": TYPED_RESOURCE,
    "step_failed": STEP_FAILED,
    "credentials": CREDENTIALS,
    "schema_and_info": SCHEMA_AND_INFO,
    "time_coercions": TIME_COERCIONS,
}


def port(text: str) -> str:
    """The program as a user ports it: only its imports of ``dlt`` change."""
    text = re.sub(r"^import dlt$", "import loadstone as dlt", text, flags=re.MULTILINE)
    return re.sub(r"^from dlt\.", "from loadstone.", text, flags=re.MULTILINE)


def run_program(text: str, workdir: Path) -> dict[str, Any]:
    """Run ``text`` with ``workdir`` as the working directory; what it loaded and noted."""
    workdir.mkdir(parents=True, exist_ok=True)
    # a module of its own: dlt reads a spec's annotations from its module's globals
    module = types.ModuleType("dlt_program")
    namespace = module.__dict__
    namespace.update(PIPELINES_DIR=str(workdir / "pipelines"), OUTCOME={})
    previous = Path.cwd()
    os.chdir(workdir)
    sys.modules[module.__name__] = module
    try:
        exec(compile(text, "<dlt program>", "exec"), namespace)
    finally:
        os.chdir(previous)
        del sys.modules[module.__name__]
    pipeline = namespace.get("pipeline")
    loaded: dict[str, Any] = {"outcome": plain(namespace["OUTCOME"])}
    if pipeline is not None:
        loaded["tables"] = _tables(workdir / f"{pipeline.pipeline_name}.duckdb")
        loaded["state"] = plain(dict(pipeline.state.get("sources", {})))
    return loaded


def _tables(path: Path) -> dict[str, Any]:
    """Each data table of dataset ``d``: ``[column, DuckDB type]`` in order, rows sorted."""
    import duckdb

    out: dict[str, Any] = {}
    if not path.exists():  # nothing was loaded: loadstone does not create the file then
        return out
    with duckdb.connect(str(path), read_only=True) as conn:
        names = conn.execute(
            "select table_name from information_schema.tables where table_schema = 'd' "
            "and table_name not like '_dlt%' order by 1"
        ).fetchall()
        for (name,) in names:
            columns = conn.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'd' and table_name = ? order by ordinal_position",
                [name],
            ).fetchall()
            shown = [c for c, _ in columns if c not in VOLATILE]
            rows = conn.execute(
                f'select {", ".join(chr(34) + c + chr(34) for c in shown)} from d."{name}"'
            ).fetchall()
            out[name] = {
                "columns": [list(c) for c in columns],
                "rows": sorted((plain(list(r)) for r in rows), key=repr),
            }
    return out
