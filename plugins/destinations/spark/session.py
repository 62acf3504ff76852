"""Where the Spark destination's tables live, and the session that writes them.

Settings come from the factory (``loadstone.destinations.spark(catalog=..., warehouse_dir=...)``)
then ``[destination.spark]`` in config (env ``DESTINATION__SPARK__...``):

* ``catalog`` – the catalog holding the datasets (default: the session's current one,
  ``spark_catalog``).
* ``warehouse_dir`` – ``spark.sql.warehouse.dir``; ``metastore_dir`` – the embedded Derby
  metastore folder; ``metastore_uri`` – a Hive metastore service (``thrift://...``) instead.
* ``options`` – any other Spark options for a session the destination starts.

A running session (the one the normalizer started, or the user's; classic or Spark Connect) is
used as it is: its catalog is the user's choice. Without one, the destination starts a session
from ``[spark]`` config: with ``spark.remote`` a Spark Connect session (the server owns its
catalog), else one with the Hive metastore (``enableHiveSupport``), so another Spark
application pointed at the same metastore reads the tables. The writer works in its own
``newSession()``: same catalog (and SparkContext, or Connect server), its own SQL settings
(ANSI casts that fail on overflow, microsecond Parquet timestamps, UTC), so the user's session
keeps its settings. Over Spark Connect that session is made once per user's session and
stopped at exit (each is a channel to the server).
"""

from __future__ import annotations

import atexit
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import attrs

from loadstone.exceptions import InMemoryCatalog
from loadstone.spark_session import configured_target, is_remote_session

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


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _absolute(path: object) -> str | None:
    return None if path is None else str(Path(str(path)).expanduser().absolute())


def _is_session(value: object) -> TypeGuard[SparkSession]:
    """A classic SparkSession, or a Spark Connect one (which has no ``sparkContext``)."""
    return hasattr(value, "sparkContext") or is_remote_session(value)


def _options(value: object) -> dict[str, str]:
    """More Spark options (a table in config, a dict in code), as text."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


@attrs.frozen
class SparkSettings:
    """The destination's settings, resolved once per client."""

    catalog: str | None = None
    warehouse_dir: str | None = None
    metastore_dir: str | None = None
    metastore_uri: str | None = None
    options: Mapping[str, str] = attrs.field(factory=dict)
    #: the user's session, classic or Spark Connect (the latter duck-types the former)
    session: SparkSession | None = None

    @classmethod
    def resolve(cls, name: str, explicit: Mapping[str, object]) -> SparkSettings:
        """Factory arguments first, then configuration; ``credentials`` may be a session."""
        from loadstone import config

        def get(key: str) -> object:
            value = explicit.get(key)
            if value is not None:
                return value
            return config.resolve(("destination", name, key), default=None)

        credentials = explicit.get("credentials")
        options = get("options")
        return cls(
            catalog=_text(get("catalog")),
            warehouse_dir=_absolute(get("warehouse_dir")),
            metastore_dir=_absolute(get("metastore_dir")),
            metastore_uri=_text(get("metastore_uri")),
            options=_options(options),
            session=credentials if _is_session(credentials) else None,
        )

    def session_options(self) -> dict[str, str]:
        """Options for a session this destination starts: the Hive metastore by default (a
        Connect server owns its catalog and its static settings: none are sent to it)."""
        from loadstone import config

        chosen = config.spark_options()
        options: dict[str, str] = {}
        if configured_target().remote is None:
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
    session = _connect_writer(base) if is_remote_session(base) else base.newSession()
    for key, value in WRITER_SETTINGS.items():
        session.conf.set(key, value)
    if settings.catalog is None and _is_in_memory(session):
        raise InMemoryCatalog(_in_memory_reason(session))
    return base, session


@attrs.define
class Listings:
    """The tables (qualified names) a writer session has read, whose file listings it keeps
    until they are refreshed; ``everything``: SQL of the user's ran in it, any table may be
    listed. Kept per session, not per client: a Connect writer session serves every client."""

    tables: set[str] = attrs.field(factory=set)
    everything: bool = False


_LISTINGS: weakref.WeakKeyDictionary[SparkSession, Listings] = weakref.WeakKeyDictionary()


def listings(session: SparkSession) -> Listings:
    """What ``session`` (a writer session) has read so far."""
    found = _LISTINGS.get(session)
    if found is None:
        found = _LISTINGS[session] = Listings()
    return found


def refresh_table(session: SparkSession, name: str, *, in_session_catalog: bool) -> None:
    """What ``session.catalog.refreshTable(name)`` does, cheaply where it can be: drop the
    session's cached relation of table ``name`` (with it, its listing of the table's files),
    after refreshing that relation's listing in place for the frames made from it before.

    ``refreshTable`` first resolves the table (a metastore lookup and a listing of its folder,
    when the session had not read it: most tables a load changed), refreshes that (a second
    listing), then drops it. A load refreshed every table it changed this way: the test
    suite's loads application made 58 such calls, 26 s of its 7.5 minutes on a busy machine
    (each as costly as a ``SHOW TABLES``, where the short way is a few calls into the JVM,
    no metastore, no listing). The short way is
    taken on a classic session, for a table of its own catalog (``in_session_catalog``), with
    no cached data (``CACHE TABLE``, ``.cache()``: ``refreshTable`` recomputes it); anything
    else, or a Spark whose internals differ, goes through ``refreshTable``.
    """
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]  # py4j ships no types

    jsession = getattr(session, "_jsparkSession", None)  # None over Spark Connect
    try:
        if in_session_catalog and jsession is not None:
            if jsession.sharedState().cacheManager().isEmpty():
                _drop_cached_relation(session, jsession, name)
                return
    except Py4JError:
        pass  # another Spark's internals: the public way below
    session.catalog.refreshTable(name)


def _drop_cached_relation(session: SparkSession, jsession: Any, name: str) -> None:
    """The relation cache entry of ``name`` (``db.table`` of the session catalog), refreshed
    then dropped."""
    state = jsession.sessionState()
    if state.catalogManager().currentCatalog().name() != "spark_catalog":
        session.catalog.refreshTable(name)  # ``db.table`` names a table of another catalog
        return
    catalog = state.catalog()
    ident = catalog.qualifyIdentifier(state.sqlParser().parseTableIdentifier(name))
    jvm: Any = session._jvm  # a classic session's gateway (set: it has a JVM session)
    tables = jvm.org.apache.spark.sql.catalyst
    key = tables.QualifiedTableName.apply(
        ident.catalog().get(), ident.database().get(), ident.table()
    )
    cached = catalog.getCachedTable(key)
    if cached is not None:
        cached.refresh()  # frames made before from this relation list the files anew
    catalog.invalidateCachedTable(key)


#: the writer session of each Spark Connect session (by its id), shared by the clients
_CONNECT_WRITERS: dict[str, SparkSession] = {}


def _connect_writer(base: SparkSession) -> SparkSession:
    """The writer session of a Connect session: one per session, made once and stopped at
    exit. Each Connect session has a channel of its own to the server, and pyspark closes a
    forgotten one only when the interpreter shuts down, where closing it waits forever."""
    key = str(base.session_id)  # type: ignore[attr-defined]  # Connect sessions have ids
    writer = _CONNECT_WRITERS.get(key)
    if writer is None or writer.is_stopped:  # type: ignore[attr-defined]  # Connect only
        if not _CONNECT_WRITERS:
            atexit.register(_stop_connect_writers)
        writer = _CONNECT_WRITERS[key] = base.newSession()
    return writer


def _stop_connect_writers() -> None:
    """Release the writer sessions on the server and close their channels (best effort)."""
    for writer in _CONNECT_WRITERS.values():
        writer.stop()
    _CONNECT_WRITERS.clear()


def _in_memory_reason(session: SparkSession) -> str:
    """What to do about an in-memory catalog, for a session here or a Connect server."""
    if is_remote_session(session):
        return (
            "the Spark Connect server keeps tables in its in-memory catalog, which forgets them "
            "when the server stops; start the server with Hive support (--conf "
            "spark.sql.catalogImplementation=hive) or name a persistent catalog in "
            "[destination.spark] catalog"
        )
    return (
        "the running SparkSession keeps tables in its in-memory catalog, which forgets them "
        "when it stops; start it with Hive support (config [spark] "
        'spark.sql.catalogImplementation = "hive") or name a persistent catalog '
        "in [destination.spark] catalog"
    )


def _is_in_memory(session: SparkSession) -> bool:
    implementation = session.conf.get("spark.sql.catalogImplementation", "in-memory")
    current = session.catalog.currentCatalog()
    return implementation == "in-memory" and current == "spark_catalog"
