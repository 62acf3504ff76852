"""Names a SQL client writes on its own: system tables and columns through the naming.

A client loads a schema whose identifiers are already normalized, but the system tables
(``_dlt_loads`` ...) and their columns are named by the client, so it passes them through the
same convention (``s3_tables`` makes ``dlt_loads``). The convention arrives resolved: the
client is opened with it (``Destination.client(naming=...)``, the destination's override or
the schema's) and a package may bring its own (``LoadRequest.naming``); the client resolves
no convention by name.
"""

from __future__ import annotations

from loadstone.destinations.contract import Destination, schema_naming
from loadstone.naming import NamingConvention
from loadstone.schema import Schema


class ClientNames:
    """Mixin of the SQL clients: ``ident``, ``table_ident``, ``system_table``."""

    destination: Destination
    schema: Schema | None
    _naming: NamingConvention | None
    #: the convention the client was opened with (set by ``_bind_dataset``; a client that
    #: binds its dataset itself keeps adopting its schema's convention as before)
    _bound_naming: NamingConvention | None = None
    _has_bound_naming: bool = False

    def _bind_dataset(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        pipeline_name: str | None,
        staging_dataset_name: str | None,
        naming: NamingConvention | None = None,
    ) -> None:
        """What every SQL client's constructor starts with: its dataset, staging and naming."""
        self.destination = destination
        self.schema = schema
        self.dataset_name = dataset_name
        self.staging_dataset_name = staging_dataset_name or f"{dataset_name}_staging"
        self.pipeline_name = pipeline_name
        self._naming = naming if naming is not None else self._resolve_naming(schema)
        self._bound_naming, self._has_bound_naming = self._naming, True

    def _resolve_naming(self, schema: Schema | None) -> NamingConvention | None:
        """For a client opened without a resolved convention (by its class, not through
        ``Destination.client``): the one the destination resolves."""
        return self.destination.naming_for(schema)

    def _adopt_naming(self, schema: Schema | None, naming: NamingConvention | None = None) -> None:
        """Use the convention a package brings (``naming``, resolved by its caller); for the
        client's own schema the one it was opened with; for another schema, its own when no
        override fixed the destination's."""
        if naming is not None:
            self._naming = naming
        elif schema is not None and schema is self.schema and self._has_bound_naming:
            self._naming = self._bound_naming
        elif schema is not None and not self.destination.naming_convention:
            self._naming = schema_naming(schema)

    def ident(self, name: str) -> str:
        """A system column name through the naming convention."""
        return self._naming.normalize_identifier(name) if self._naming else name

    def table_ident(self, name: str) -> str:
        """A system table name through the naming convention (``s3_tables``: ``dlt_loads``)."""
        if self._naming is None:
            return name
        return self._naming.normalize_table_identifier(name)

    def system_table(self, name: str) -> str:
        return self.table_ident(name)
