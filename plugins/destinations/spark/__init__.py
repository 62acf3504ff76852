"""Spark: the normalized tables become tables of the Spark session's catalog.

``loadstone.destinations.spark(catalog=None, warehouse_dir=None, metastore_dir=None,
metastore_uri=None, options=None)``, or ``[destination.spark]`` in config (see
``session.py``); a SparkSession given as ``credentials`` is used as it is. One database per
dataset; tables are Parquet tables of the catalog, so ``spark.table("<dataset>.<table>")`` in
another Spark application that shares the metastore reads them. See ``client.py`` for how a
package is loaded exactly once without transactions, ``types.py`` for the type mapping and
what is lossy.

Identifiers: Spark SQL and the Hive metastore are case-insensitive and store names in lower
case, hence ``casefold="lower"``. The metastore's name columns (``package.jdo`` of
hive-metastore 2.3) hold 128 characters for databases, 256 for tables and 767 for columns:
datasets and tables are kept within 128, columns within 767.
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination, LazyClient
from loadstone.hookspecs import hookimpl

CAPABILITIES = Capabilities(
    max_identifier_length=128,
    max_column_identifier_length=767,
    has_case_sensitive_identifiers=False,
    casefold="lower",
    preferred_naming="snake_case",
    preferred_loader_file_format="parquet",
    supported_loader_file_formats=("parquet",),
    supported_merge_strategies=("delete-insert",),
    timestamp_precision=6,
    decimal_precision=(38, 9),
    wei_precision=(38, 0),
    supports_transactions=False,
    supports_ddl_transactions=False,
    supports_truncate_command=False,
)


SPARK = Destination(
    name="spark",
    capabilities=CAPABILITIES,
    client_class=LazyClient("loadstone.plugins.destinations.spark.client", "SparkClient"),
    description="tables of the Spark session's catalog (Hive metastore by default)",
)


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """The Spark destination."""
    return [SPARK]
