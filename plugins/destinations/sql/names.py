"""Names a SQL client writes on its own: system tables and columns through the naming.

A client loads a schema whose identifiers are already normalized, but the system tables
(``_dlt_loads`` ...) and their columns are named by the client, so it passes them through the
same convention (``s3_tables`` makes ``dlt_loads``). The convention is the destination's
override (``naming_convention=``) or the schema's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadstone.destinations.contract import Destination, schema_naming
from loadstone.naming import NamingConvention
from loadstone.schema import Schema


class ClientNames:
    """Mixin of the SQL clients: ``ident``, ``table_ident``, ``system_table``."""

    destination: Destination
    _naming: NamingConvention | None

    def _bind_dataset(
        self,
        destination: Destination,
        schema: Schema | Mapping[str, Any] | None,
        dataset_name: str,
        pipeline_name: str | None,
        staging_dataset_name: str | None,
    ) -> None:
        """What every SQL client's constructor starts with: its dataset, staging and naming."""
        self.destination = destination
        self.schema = schema
        self.dataset_name = dataset_name
        self.staging_dataset_name = staging_dataset_name or f"{dataset_name}_staging"
        self.pipeline_name = pipeline_name
        self._naming = self._resolve_naming(schema)

    def _resolve_naming(self, schema: Schema | Mapping[str, Any] | None) -> NamingConvention | None:
        if self.destination.naming_convention:
            try:
                from loadstone.plugin_manager import naming_convention

                return naming_convention(self.destination.naming_convention)
            except ImportError:
                return None
        return schema_naming(schema) if schema is not None else None

    def _adopt_naming(self, schema: Schema | Mapping[str, Any] | None) -> None:
        """Use the naming of the schema being loaded when no override or schema fixed it."""
        if schema is not None and not self.destination.naming_convention:
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
