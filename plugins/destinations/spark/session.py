"""Where the Spark destination's tables live, and the session that writes them.

Settings come from the factory (``loadstone.destinations.spark(catalog=..., warehouse_dir=...)``)
then ``[destination.spark]`` in config (env ``DESTINATION__SPARK__...``):

* ``catalog`` – the catalog holding the datasets (default: the session's current one,
  ``spark_catalog``).
* ``warehouse_dir`` – ``spark.sql.warehouse.dir``; ``metastore_dir`` – the embedded Derby
  metastore folder; ``metastore_uri`` – a Hive metastore service (``thrift://...``) instead.
* ``options`` – any other Spark options for a session the destination starts.

A running session (the one the normalizer started, or the user's) is used as it is: its
catalog is the user's choice. Without one, the destination starts a session with the Hive
metastore (``enableHiveSupport``), so another Spark application pointed at the same metastore
reads the tables. The writer works in its own ``newSession()``: same SparkContext and catalog,
its own SQL settings (ANSI casts that fail on overflow, microsecond Parquet timestamps, UTC),
so the user's session keeps its settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from loadstone.exceptions import DestinationError, InMemoryCatalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: SQL settings of the writer's own session (see module docstring).
WRITER_SETTINGS: Mapping[str, str] = {
    "spark.sql.ansi.enabled": "true",
    "spark.sql.ansi.doubleQuotedIdentifiers": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.caseSensitive": "false",
}


def _configured(name: str, key: str) -> Any:
    from loadstone import config

    return config.resolve(("destination", name, key), default=None)


def _absolute(path: Any) -> str | None:
    return None if path is None else str(Path(str(path)).expanduser().absolute())


@attrs.frozen
class SparkSettings:
    """The destination's settings, resolved once per client."""

    catalog: str | None = None
    warehouse_dir: str | None = None
    metastore_dir: str | None = None
    metastore_uri: str | None = None
    options: Mapping[str, str] = attrs.field(factory=dict)
    session: Any = None

    @classmethod
    def resolve(cls, name: str, explicit: Mapping[str, Any]) -> SparkSettings:
        """Factory arguments first, then configuration; ``credentials`` may be a session."""

        def get(key: str) -> Any:
            value = explicit.get(key)
            return value if value is not None else _configured(name, key)

        credentials = explicit.get("credentials")
        session = credentials if hasattr(credentials, "sparkContext") else None
        options = get("options") or {}
        return cls(
            catalog=get("catalog"),
            warehouse_dir=_absolute(get("warehouse_dir")),
            metastore_dir=_absolute(get("metastore_dir")),
            metastore_uri=get("metastore_uri"),
            options={str(k): str(v) for k, v in dict(options).items()},
            session=session,
        )

    def session_options(self) -> dict[str, str]:
        """Options for a session this destination starts: the Hive metastore by default."""
        from loadstone import config

        chosen = config.spark_options()
        options: dict[str, str] = {}
        if "spark.sql.catalogImplementation" not in chosen:
            options["spark.sql.catalogImplementation"] = "hive"
        if self.warehouse_dir:
            options["spark.sql.warehouse.dir"] = self.warehouse_dir
        if self.metastore_uri:
            options["spark.hadoop.hive.metastore.uris"] = str(self.metastore_uri)
        elif self.metastore_dir:
            options["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
                f"jdbc:derby:;databaseName={self.metastore_dir};create=true"
            )
        options.update(self.options)
        return options


def writer_session(settings: SparkSettings) -> tuple[SparkSession, SparkSession]:
    """The user's (or a new) session and the one the client works in (module docstring)."""
    from pyspark.sql import SparkSession

    base = settings.session or SparkSession.getActiveSession()
    if base is None:
        from loadstone.spark_session import get_spark_session

        base = get_spark_session(settings.session_options())
    if type(base).__module__.startswith("pyspark.sql.connect"):
        raise DestinationError(
            "destination 'spark' needs a classic SparkSession (it moves table files through "
            "the session's JVM); this one is a Spark Connect session"
        )
    session = base.newSession()
    for key, value in WRITER_SETTINGS.items():
        session.conf.set(key, value)
    if settings.catalog is None and _is_in_memory(session):
        raise InMemoryCatalog(
            "the running SparkSession keeps tables in its in-memory catalog, which forgets them "
            "when it stops; start it with Hive support (config [spark] "
            'spark.sql.catalogImplementation = "hive") or name a persistent catalog '
            "in [destination.spark] catalog"
        )
    return base, session


def _is_in_memory(session: SparkSession) -> bool:
    implementation = session.conf.get("spark.sql.catalogImplementation", "in-memory")
    current = session.catalog.currentCatalog()
    return implementation == "in-memory" and current == "spark_catalog"
