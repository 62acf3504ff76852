"""The destination contract: what a destination accepts, and how a package gets into it.

Three ideas live here because every destination plugin and the pipeline share them:

* :class:`Capabilities` — the published limits of a real system (identifier lengths, case
  rules, file formats, merge strategies). The core fits identifiers and types to them *before*
  any data moves, so a profile is useful even for a destination that has no loader.
* :class:`Destination` — a named profile plus, optionally, a loader (``client_class``) and its
  configuration (credentials, path, naming override). ``require_loader()`` lets the pipeline
  fail in a millisecond, before extracting anything, when only a profile exists.
* :class:`DestinationClient` — the protocol a loader implements. The important promise is in
  ``load_package``: all tables of one package, the pipeline state row and the ``_dlt_loads``
  row (last) commit together, so a crash leaves nothing or everything and a retry never
  duplicates.

The system tables (``_dlt_loads``, ``_dlt_version``, ``_dlt_pipeline_state``) are described
here once (:data:`SYSTEM_TABLES`) so every loader creates them identically; their names pass
through the schema's naming convention like any other identifier.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Protocol,
    TypeVar,
    cast,
    overload,
    runtime_checkable,
)

import attrs

from loadstone import plugin_manager
from loadstone.destinations.capabilities import Capabilities
from loadstone.exceptions import (
    SUGGESTED_DESTINATION,
    DestinationNotSupported,
    LoadstoneError,
    MissingLoadFile,
)
from loadstone.schema import Column, Schema
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.schema.stored import TStoredSchema

#: a row a destination returns: the values of the user's data, as the driver reads them
Row = tuple[TDataItem, ...]
#: a decoded pipeline state (the user's resource and source state inside)
StateDict = dict[str, TDataItem]


# --- state encoding --------------------------------------------------------------------------


def encode_state(state: Mapping[str, object]) -> str:
    """Encode pipeline state as dlt stores it: JSON, zlib-compressed, base64 (``eNp...``).

    Compressed like dlt so a dataset written by one tool can restore the other's pipeline.
    """
    raw = json.dumps(state, separators=(",", ":"), sort_keys=False, default=str).encode()
    return base64.b64encode(zlib.compress(raw, level=9)).decode("ascii")


def decode_state(text: str) -> StateDict:
    """Decode a stored state: the compressed form of :func:`encode_state` or plain JSON."""
    stripped = text.strip()
    raw = stripped if stripped.startswith("{") else zlib.decompress(base64.b64decode(stripped))
    return cast(StateDict, json.loads(raw))


def load_id_timestamp(load_id: str) -> _dt.datetime:
    """The creation time a load id encodes (Unix seconds as a decimal string), in UTC.

    scd2 uses it as ``_dlt_valid_from``/``_dlt_valid_to``, so all rows of one package share
    one validity instant, as in dlt. A load id that is not a number gives "now".
    """
    try:
        return _dt.datetime.fromtimestamp(float(load_id), tz=_dt.timezone.utc)
    except (TypeError, ValueError, OverflowError):
        return _dt.datetime.now(tz=_dt.timezone.utc)


def new_row_id() -> str:
    """A random ``_dlt_id`` (10 random bytes, base64, no ``=``), as root rows get."""
    return base64.b64encode(os.urandom(10)).decode("ascii").rstrip("=")


# --- the load request ------------------------------------------------------------------------


@attrs.frozen
class PipelineStateRow:
    """The pipeline's state, written to ``_dlt_pipeline_state`` with the package.

    ``state`` is the state dict; the loader stores it with :func:`encode_state`.
    """

    pipeline_name: str
    state: Mapping[str, object]
    version: int = 1
    engine_version: int = 4
    version_hash: str | None = None
    created_at: _dt.datetime | None = None


#: what a load without a schema records (no name, no tables), as it always has
_NO_SCHEMA: Mapping[str, object] = {"name": "", "tables": {}}


@attrs.frozen
class SchemaVersionRow:
    """A schema version as ``_dlt_version`` stores it (and ``_dlt_loads`` names it).

    Built once per package at the contract's edge, so every destination (SQL, Spark,
    filesystem) records the same values without handling the schema's stored form: the
    document is serialized here, once, because the row stores it as JSON text.
    """

    schema_name: str
    version: int
    engine_version: int
    version_hash: str
    schema_json: str

    @classmethod
    def of(cls, schema: Schema | None) -> SchemaVersionRow:
        """The row of a :class:`~loadstone.schema.Schema` (``to_dict()``: its final version
        and hash); a load without a schema records no name and no tables."""
        if schema is None:
            return cls("", 1, 11, _content_hash(_NO_SCHEMA), json.dumps(_NO_SCHEMA))
        stored = as_schema(schema).to_dict()
        return cls(
            schema_name=stored["name"],
            version=int(stored["version"] or 1),
            engine_version=int(stored["engine_version"] or 11),
            version_hash=stored["version_hash"] or _content_hash(stored),
            schema_json=json.dumps(stored, default=str),
        )


def _content_hash(stored: Mapping[str, object]) -> str:
    """A content hash for a document without a ``version_hash`` (a load without a schema)."""
    content = json.dumps(stored.get("tables", {}), sort_keys=True, default=str).encode()
    return hashlib.sha256(content).hexdigest()


_Client = TypeVar("_Client", bound="ClosesOnExit")


class ClosesOnExit:
    """``with client: ...`` closes the client: the context-manager half of
    :class:`DestinationClient`, written once for every loader."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Client) -> _Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


#: a table's entry in a :class:`LoadRequest`: files or folders (see :func:`load_files`)
LoadFileSpec = Sequence[str | Path] | str | Path

#: the name of a normalized Parquet file made from Arrow items starts so, not one made from
#: rows: dlt 1.31 writes text formats by where rows came from (:func:`from_arrow`)
ARROW_FILE_PREFIX = "arrow-"


def from_arrow(path: str | os.PathLike[str]) -> bool:
    """Whether a normalized load file was made from Arrow items (see :data:`ARROW_FILE_PREFIX`)."""
    return Path(path).name.startswith(ARROW_FILE_PREFIX)


def load_files(spec: Sequence[str | os.PathLike[str]] | str | os.PathLike[str]) -> list[Path]:
    """The Parquet files a load request's table entry names, in order.

    An entry is a file or a folder (Spark output or a normalizer's table folder); a folder's
    files are searched below it, sorted, skipping anything under a name starting with ``_``
    or ``.`` (task attempts, Spark's ``_SUCCESS``, hidden staging). One rule for every loader.
    """
    specs = [spec] if isinstance(spec, str | os.PathLike) else list(spec)
    files: list[Path] = []
    for item in specs:
        path = Path(item)
        if path.is_dir():
            files.extend(
                sorted(
                    p
                    for p in path.rglob("*.parquet")
                    if not any(part.startswith(("_", ".")) for part in p.relative_to(path).parts)
                )
            )
        elif path.exists():
            files.append(path)
        else:
            raise MissingLoadFile(f"load file {path} does not exist")
    return files


@attrs.frozen
class LoadRequest:
    """One load package to load.

    ``tables`` maps a table name (a destination identifier, as in the schema) to the Parquet
    files of that table, or to a folder holding them (Spark output: ``part-*.parquet``; files
    starting with ``_`` or ``.`` are ignored). Files of one table may have different column
    sets. ``naming`` is the convention the caller resolved for the destination (its
    override, else the schema's): the loader names its system tables and columns with it and
    resolves nothing itself; None means the schema's own (``schema.naming``).
    """

    load_id: str
    schema: Schema
    tables: Mapping[str, LoadFileSpec]
    pipeline_state: PipelineStateRow | None = None
    naming: NamingConvention | None = None
    #: the package's folder: a loader without transactions (a sink) keeps there what it
    #: already delivered, so a retry resumes instead of resending
    package_dir: Path | None = None


# --- system tables ---------------------------------------------------------------------------


@attrs.frozen
class SystemColumn:
    """A column of a system table, in dlt's order, nullability and precision (load ids are
    ``text`` of precision 64: ``varchar(64)`` where a destination sizes text; ``unique`` as
    dlt's schema hints it, a UNIQUE constraint where the destination creates indexes)."""

    name: str
    data_type: str
    nullable: bool
    precision: int | None = None
    unique: bool | None = None

    def as_column(self, name: str) -> Column:
        """This column as a schema column, named ``name`` (after naming)."""
        return Column(
            name,
            data_type=self.data_type,
            nullable=self.nullable,
            precision=self.precision,
            unique=self.unique,
        )


#: The system tables every loader creates, exactly as dlt creates them (names before naming).
SYSTEM_TABLES: dict[str, tuple[SystemColumn, ...]] = {
    "_dlt_loads": (
        SystemColumn("load_id", "text", False, 64),
        SystemColumn("schema_name", "text", True),
        SystemColumn("status", "bigint", False),
        SystemColumn("inserted_at", "timestamp", False),
        SystemColumn("schema_version_hash", "text", True),
    ),
    "_dlt_version": (
        SystemColumn("version", "bigint", False),
        SystemColumn("engine_version", "bigint", False),
        SystemColumn("inserted_at", "timestamp", False),
        SystemColumn("schema_name", "text", False),
        SystemColumn("version_hash", "text", False),
        SystemColumn("schema", "text", False),
    ),
    "_dlt_pipeline_state": (
        SystemColumn("version", "bigint", False),
        SystemColumn("engine_version", "bigint", False),
        SystemColumn("pipeline_name", "text", False),
        SystemColumn("state", "text", False),
        SystemColumn("created_at", "timestamp", False),
        SystemColumn("version_hash", "text", True),
        SystemColumn("_dlt_load_id", "text", False, 64),
        SystemColumn("_dlt_id", "text", False, unique=True),
    ),
}


# --- the client protocol ---------------------------------------------------------------------


@runtime_checkable
class DestinationClient(Protocol):
    """What a loader does for one dataset of one destination.

    A client is a context manager; ``close()`` releases its connection.
    """

    dataset_name: str

    def initialize_storage(self) -> None:
        """Create the dataset (and nothing else) if it does not exist."""

    def update_stored_schema(self, schema: Schema | None = None) -> list[str]:
        """Create missing tables / add missing columns; record ``_dlt_version`` if the hash is new.

        For changes that come without a package (``drop``, ``sync``): ``load_package`` migrates
        by itself. Returns the DDL statements that were run (empty when up to date).
        """

    def load_package(self, request: LoadRequest) -> None:
        """Load every table of a package, the state row and the ``_dlt_loads`` row, atomically.

        Applies ``request.schema``'s changes first, in the same transaction where the
        destination has them: the one migration of the package (the pipeline does not call
        ``update_stored_schema`` before it).
        """

    def is_package_loaded(self, load_id: str) -> bool:
        """True when ``_dlt_loads`` has a row for ``load_id``."""

    def get_stored_schema(self, schema_name: str) -> TStoredSchema | None:
        """The newest schema stored in ``_dlt_version`` under that name (dict), or None."""

    def get_stored_state(self, pipeline_name: str) -> StateDict | None:
        """The newest pipeline state of a completed load, decoded, or None."""

    def table_row_counts(self) -> dict[str, int]:
        """Row count of every table in the dataset."""

    def table_names(self) -> list[str]:
        """Names of the dataset's tables (system tables included), for ``pipeline.dataset()``."""

    def qualified(self, table: str) -> str:
        """``table`` as this destination's SQL names it (quoted, inside the dataset)."""

    def use_dataset(self) -> None:
        """Resolve unqualified table names in the dataset from now on (as dlt's sql_client)."""

    @property
    def connection(self) -> object:
        """The native connection ``pipeline.dataset()`` and ``sql_client()`` query through."""

    def query(self, sql: str, *params: object) -> list[Row]:
        """Run SQL against the destination and return all rows."""

    def drop_dataset(self) -> None:
        """Drop the dataset and its staging dataset with everything in them."""

    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> DestinationClient: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@attrs.frozen
class StoredAt:
    """Where a destination keeps a pipeline's data, as its loader resolves it without
    connecting (a DuckDB file): shown in load info, and whether anything can be there yet."""

    #: the location as users see it (a path; never a password)
    location: str
    #: False when nothing exists there yet: asking would create it, and it holds nothing
    exists: bool


class ClientFactory(Protocol):
    """What ``Destination.client_class`` is: a loader class, or a :class:`LazyClient`.

    ``naming`` is the convention resolved for this destination (:meth:`Destination.client`
    resolves it when its caller did not): loaders use it and resolve none themselves.
    """

    def __call__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        naming: NamingConvention | None = None,
        **options: object,
    ) -> DestinationClient: ...


@attrs.frozen
class LazyClient:
    """A loader class named by module and name, imported when a client is first opened.

    Listing plugins (``loadstone plugins``, every pipeline start) then imports no driver
    (duckdb, psycopg, pyarrow, pyspark).
    """

    module: str
    class_name: str

    def __call__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        naming: NamingConvention | None = None,
        **options: object,
    ) -> DestinationClient:

        return self.loader()(
            destination, schema, dataset_name, pipeline_name=pipeline_name, naming=naming, **options
        )

    def loader(self) -> ClientFactory:
        """The loader class itself (imported now)."""
        import importlib

        loader: ClientFactory = getattr(importlib.import_module(self.module), self.class_name)
        return loader

    def __repr__(self) -> str:
        return f"<{self.class_name} (lazy)>"


# --- the destination -------------------------------------------------------------------------


def _as_config(value: Mapping[str, object] | None) -> dict[str, object]:
    return dict(value or {})


@attrs.frozen
class Destination:
    """A named destination: its capabilities and, when it has one, its loader.

    ``config`` holds loader settings (``credentials``: a path, URL or connection; anything
    else the loader documents). ``naming_convention`` overrides the schema's convention for
    this destination (dlt's ``naming_convention=`` factory argument).
    """

    name: str
    capabilities: Capabilities
    client_class: ClientFactory | None = None
    config: Mapping[str, object] = attrs.field(factory=dict, converter=_as_config)
    naming_convention: str | None = None
    description: str = ""
    #: the destination's type: its name as registered, kept when ``destination_name=``
    #: renames it (a DuckDB destination named ``warehouse`` is still of type ``duckdb``)
    kind: str = attrs.field(default=attrs.Factory(lambda self: self.name, takes_self=True))

    @property
    def destination_name(self) -> str:
        """dlt's name of the destination (its type's name unless configured otherwise)."""
        return self.name

    @property
    def destination_type(self) -> str:
        """The destination's type as dlt names its factory (``dlt.destinations.duckdb``)."""
        return destination_type(self.kind)

    @property
    def has_loader(self) -> bool:
        """True when this destination can load data (not only describe itself)."""
        return self.client_class is not None

    def require_loader(self) -> None:
        """Raise :class:`DestinationNotSupported` unless a loader exists. Cheap: call it first."""
        if self.client_class is None:
            raise DestinationNotSupported(self.name, _loader_names())

    def configured(self, naming_convention: str | None = None, **config: object) -> Destination:
        """A copy with more configuration (the factory API: ``duckdb("x.duckdb")``)."""
        merged = {**self.config, **{k: v for k, v in config.items() if v is not None}}
        return attrs.evolve(
            self,
            config=merged,
            naming_convention=naming_convention or self.naming_convention,
        )

    def client(
        self,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        naming: NamingConvention | None = None,
        **options: object,
    ) -> DestinationClient:
        """Open a client for ``dataset_name``; raises :class:`DestinationNotSupported` for profiles.

        ``naming``: the convention the caller resolved (the pipeline does, once); without
        one it is resolved here, so no loader resolves a convention itself.
        """
        if self.client_class is None:
            raise DestinationNotSupported(self.name, _loader_names())
        if naming is None:
            naming = self.naming_for(schema)
        return self.client_class(
            self, schema, dataset_name, pipeline_name=pipeline_name, naming=naming, **options
        )

    def stored_at(self, pipeline_name: str) -> StoredAt | None:
        """Where the loader keeps ``pipeline_name``'s data, known without connecting (the
        loader class's optional classmethod ``stored_at(destination, pipeline_name)``);
        None when it does not say (a server: asking means connecting)."""
        where = self._loader_hook("stored_at")
        return None if where is None else cast("StoredAt | None", where(self, pipeline_name))

    def shown_location(self) -> str | None:
        """Where the data is as dlt's load info shows it (the loader's optional classmethod
        ``shown_location(destination)``: a bucket's URL); None when it does not say."""
        hook = self._loader_hook("shown_location")
        return None if hook is None else cast("str | None", hook(self))

    def check_settings(self) -> None:
        """Parse the settings the loader reads (its optional classmethod
        ``check_settings(destination)``), so a bad one fails before any work, not when the
        first client opens."""
        check = self._loader_hook("check_settings")
        if check is not None:
            check(self)

    def _loader_hook(self, name: str) -> Callable[..., object] | None:
        """An optional classmethod of the loader class, named ``name``."""
        loader = self.client_class
        if isinstance(loader, LazyClient):
            loader = loader.loader()
        hook = getattr(loader, name, None)
        return hook if callable(hook) else None

    def naming_for(self, schema: Schema | None) -> NamingConvention | None:
        """The convention of system names in this destination: the override
        (``naming_convention=``), else the schema's; None keeps names as given."""
        if self.naming_convention:
            try:
                return plugin_manager.naming_convention(self.naming_convention)
            except ImportError:
                return None
        return schema_naming(schema)


def destination_type(kind: str) -> str:
    """A destination type's factory name, as dlt's ``dlt.destinations.<kind>`` reads here."""
    return f"loadstone.destinations.{kind}"


def _loader_names() -> list[str]:
    """Names of the installed destinations that have a loader (for the error message)."""
    try:
        names = plugin_manager.destination_names()
        # the plugin manager returns destinations as far as it checks them (by protocol)
        return [n for n in names if cast(Destination, plugin_manager.get_destination(n)).has_loader]
    except Exception:  # the message must not fail because a plugin is broken
        return [SUGGESTED_DESTINATION]


@overload
def as_schema(schema: Schema) -> Schema: ...


@overload
def as_schema(schema: None) -> None: ...


def as_schema(schema: Schema | None) -> Schema | None:
    """``schema``, checked: loaders take a :class:`~loadstone.schema.Schema` and nothing else
    (a third party passing a stored dict learns it here, not deep inside a loader).

    Loaders build their tables from it (``plugins/destinations/tables.py: TableModel``): the
    pipeline hands them its ``Schema`` and no conversion happens on the way to DDL.
    """
    if schema is not None and not isinstance(schema, Schema):
        raise TypeError(f"expected a loadstone Schema, got {type(schema)!r}")
    return schema


def schema_naming(schema: Schema | None) -> NamingConvention | None:
    """The schema's own naming convention object (the schema resolves it), or None: without a
    schema, or with a convention that cannot be loaded, identifiers are kept as given."""
    if schema is None:
        return None
    try:
        return as_schema(schema).naming
    except LoadstoneError:
        return None
