"""A system table's row (``_dlt_loads``, ``_dlt_pipeline_state``, ``_dlt_version``) as the
bytes of a one-row Parquet file, made in this process.

Why: these rows are made on the driver anyway; having Spark write them cost a job each
(about half a CPU second, and a ``_dlt_version`` insert twice that), three per package, which
was most of a small package's load. The file is written where Spark would have written it
(``table_files.py``) and read by Spark like any other: the columns are the table's own names
with Parquet types Spark reads as the table's types (``STRING``, ``BIGINT``, ``TIMESTAMP`` as
UTC microseconds).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.exceptions import DestinationError
from loadstone.plugins.destinations.spark.types import spark_type
from loadstone.schema import Column

#: the Parquet type of each Spark type a system table has
_ARROW_TYPES: dict[str, pa.DataType] = {
    "STRING": pa.string(),
    "BIGINT": pa.int64(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
}


def row_file(columns: Sequence[Column], values: Sequence[object]) -> bytes:
    """One row of ``columns`` (a system table's, already named by the naming convention)."""
    fields = []
    for column in columns:
        arrow_type = _ARROW_TYPES.get(spark_type(column))
        if arrow_type is None:
            raise DestinationError(f"no Parquet type for system column {column.name}")
        fields.append(pa.field(column.name, arrow_type))
    schema = pa.schema(fields)
    table = pa.Table.from_pylist([dict(zip(schema.names, values, strict=True))], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())
