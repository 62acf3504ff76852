"""The task protocol: what the driver sends into a chunk task, and how a task stops.

One :class:`EngineConfig` (with a :class:`RootSpec` per source table) is pickled once into
every task; each task gets its :class:`Chunk`. What comes back is :mod:`.facts`. A failure of
the data inside a task is a :class:`TaskFailure` carrying a :class:`~.facts.TaskError`: the
chunk driver turns it into facts, so it never travels through Spark's errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import ContractViolation
from loadstone.plugins.normalizers.relational.facts import TaskError
from loadstone.plugins.normalizers.relational.row_keys import VALID_FROM
from loadstone.schema.contracts import Entity, SchemaContract, decide
from loadstone.schema.decimals import DecimalShape
from loadstone.schema.settings import PreferredTypes, compile_preferred
from loadstone.typing import TDataItem, TSchemaContract

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.storage.package_storage import RemoteData


def _as_contract(value: TSchemaContract | SchemaContract | None) -> SchemaContract:
    return SchemaContract.parse(value)


@attrs.frozen
class RootSpec:
    """How the items of one source table are normalized (from the table hints)."""

    source_name: str
    root: str
    max_nesting: int = 1000
    propagate_root_key: bool = False
    primary_key: tuple[str, ...] = ()
    row_hash: bool = False
    #: scd2: the column that gets the load instant (``validity_column_names[0]``)
    valid_from: str = VALID_FROM
    contract: SchemaContract = attrs.field(factory=SchemaContract, converter=_as_contract)
    existing_table: bool = False
    #: a new root whose hints declare typed columns: dlt holds its new columns and variants
    #: to the contract, as an existing table's (``loadstone.schema.contracts``)
    typed_declared: bool = False
    #: contracts nested tables declare (``make_nested_hints(schema_contract=...)``), by table
    table_contracts: Mapping[str, SchemaContract] = attrs.field(factory=dict, hash=False)
    #: root columns that may hold no null (keys): a row without a value fails the package
    not_null: tuple[str, ...] = ()
    #: nested tables a primary or merge key made tables of their own (``nested_hints=``):
    #: their rows are not linked to their parent row
    unlinked: frozenset[str] = frozenset()
    #: unlinked tables whose rows' ``_dlt_id`` is the root key of their nested rows
    own_root_key: frozenset[str] = frozenset()
    #: per table, the data columns declared ``nullable: false``: a null there fails the
    #: package (dlt 1.31's ``CannotCoerceNullException``)
    null_refused: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict, hash=False)

    def contract_action(
        self,
        entity: Entity,
        *,
        table: str,
        column: str | None = None,
        value: TDataItem = None,
        table_is_new: bool = False,
    ) -> str:
        """``keep``, ``drop_row`` or ``drop_value`` by the schema contract rules.

        A ``freeze`` violation fails the task naming table, column and value; it travels to
        the driver as data like every task failure.
        """
        try:
            return decide(
                self.table_contracts.get(table, self.contract),
                entity,
                table=table,
                column=column,
                value=value,
                table_is_new=table_is_new,
            ).action
        except ContractViolation as violation:
            error = TaskError(
                "contract",
                table=table,
                column=column,
                value=None if value is None else repr(value),
                entity=entity,
                mode=violation.mode,
            )
            raise TaskFailure(error) from None


def _as_preferred(value: PreferredTypes | Mapping[str, str]) -> PreferredTypes:
    return value if isinstance(value, PreferredTypes) else compile_preferred(value)


@attrs.frozen
class EngineConfig:
    """Everything a task needs; pickled once into every Spark task."""

    naming: NamingConvention
    load_id: str
    out_dir: str
    specs: Mapping[str, RootSpec]
    known: Mapping[str, Mapping[str, str]]
    existing_tables: frozenset[str]
    #: table -> column -> precision and scale of the decimal columns the schema or a hint
    #: declares (others are ``decimal(38,9)``): what values must fit and the arrays carry
    decimals: Mapping[str, Mapping[str, DecimalShape]] = attrs.field(factory=dict)
    detections: tuple[str, ...] = ("iso_timestamp",)
    #: the schema's preferred-type rules (a mapping is compiled on the way in)
    preferred: PreferredTypes = attrs.field(
        factory=lambda: compile_preferred({}), converter=_as_preferred
    )
    use_break_path: bool = True
    on_bad_record: str = "fail"
    flush_rows: int = 20000
    compression: str = "snappy"
    #: run the C hot path when it is built (False: the pure-Python reference loops)
    native: bool = True
    #: ``native``: a chunk's lines go through the native engine core (simdjson into Arrow
    #: buffers, :mod:`.native_core`) where it is built, handing back to the Python engine
    #: what it does not do exactly; ``python``: the Python engine only
    engine_core: str = "python"
    #: the package's data files on an object store: input is read from there; output is
    #: still written to ``out_dir`` (the caller uploads it)
    remote: RemoteData | None = None


@attrs.frozen
class Chunk:
    """A byte range of one extracted file; ``end`` -1 means to the end (all of a .gz)."""

    index: int
    file_index: int
    path: str
    table_name: str
    start: int
    end: int
    display: str
    first_line: int = 1


class TaskFailure(Exception):
    """Raised inside a task; carried to the driver as data (never through Spark's errors)."""

    def __init__(self, error: TaskError) -> None:
        self.error = error
        super().__init__(error.kind, error)

    def with_row(self, raw: Mapping[str, TDataItem], column: str) -> TaskFailure:
        """This failure carrying the row a contract refused, ``column`` under the name the
        contract refused (the variant column of a ``data_type`` violation), as dlt's."""
        error = self.error
        if error.kind != "contract" or error.row is not None:
            return self
        refused = error.column or column
        row = {(refused if key == column else key): value for key, value in raw.items()}
        return TaskFailure(attrs.evolve(error, row=row))
