"""``loadstone.sources.incremental``: load only what is new since the last run.

An :class:`Incremental` names a *cursor* in each item (``"updated_at"``, ``"meta.ts"``,
``"$.meta.ts"``) and keeps, in the resource's persistent state, the last cursor value it saw.
The next run starts from there: items before the start value are dropped, items *at* the
start value are dropped when they were loaded before (their primary key, or the whole item,
hashes to one of the hashes kept in state), items at or after ``end_value`` are dropped. It
is dlt's ``dlt.sources.incremental`` with the same state layout::

    sources.<source>.resources.<resource>.incremental.<cursor_path> =
        {"initial_value", "last_value", "unique_hashes", "start_value"}

A range with ``end_value`` is a backfill: it reads its window and leaves the state alone.
``row_order`` lets extraction stop at the first item out of range instead of reading on.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
import types
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from decimal import Decimal
from typing import Final

import orjson

from loadstone.digests import digest128
from loadstone.exceptions import (
    ConfigValueError,
    IncrementalCursorInvalidCoercion,
    IncrementalCursorPathHasValueNone,
    IncrementalCursorPathMissing,
)
from loadstone.extract.external_schedule import scheduled_interval
from loadstone.storage.state import live_value, stored_value
from loadstone.typing import TDataItem

ON_CURSOR_VALUE_MISSING = ("raise", "include", "exclude")
ROW_ORDERS = ("asc", "desc")
RANGES = ("open", "closed")

_MISSING = object()


#: ``last_value_func=``: ``max``/``min`` by name, or a function of the cursor values seen
LastValueFunc = str | Callable[[Sequence[TDataItem]], TDataItem]


def _path_segments(cursor_path: str) -> tuple[str, ...]:
    """``"$.a.b"``, ``"a.b"``, ``"a['b c']"`` -> ``("a", "b")``: the simple JSON paths dlt users write."""
    path = cursor_path.strip()
    if path.startswith("$"):
        path = path[1:].lstrip(".")
    segments: list[str] = []
    for part in re.findall(r"\[['\"]([^'\"]+)['\"]\]|\[(\d+)\]|([^.\[\]]+)", path):
        quoted, index, plain = part
        segments.append(quoted or index or plain)
    return tuple(segments)


def _resolve_last_value_func(
    func: LastValueFunc | None,
) -> Callable[[Sequence[TDataItem]], TDataItem]:
    if func is None or func == "max":
        return max
    if func == "min":
        return min
    if callable(func):
        return func  # type: ignore[no-any-return,unused-ignore]  # mypy modes differ
    raise TypeError(f"last_value_func must be max, min, 'max', 'min' or a function, got {func!r}")


def _coerce_pair(reference: TDataItem, value: TDataItem) -> tuple[TDataItem, TDataItem]:
    """A value read back from state as text meets typed values again: compare as the typed
    value (datetimes, dates, decimals, UUIDs; dlt's marked text too)."""
    reference, value = state_value(reference), state_value(value)
    if isinstance(reference, str) and isinstance(value, _TEXT_KINDS):
        return _from_text(type(value), reference), value
    if isinstance(value, str) and isinstance(reference, _TEXT_KINDS):
        return reference, _from_text(type(reference), value)
    return reference, value


#: the types a cursor value kept as text in state compares as
_TEXT_KINDS = (_dt.datetime, _dt.date, Decimal, uuid.UUID)


def _from_text(kind: type, text: str) -> TDataItem:
    """``text`` as a value of ``kind`` (as it is when it is not one)."""
    try:
        if kind in (Decimal, uuid.UUID):
            return kind(text)
        return kind.fromisoformat(text)  # type: ignore[attr-defined]  # a datetime or a date
    except (ValueError, ArithmeticError):
        return text


def state_value(value: TDataItem) -> TDataItem:
    """A cursor value read back from state: dlt's marked text (a state dlt wrote, or one
    set by hand) as the value it stands for; anything else as it is."""
    return live_value(value)


def _jsonable(value: TDataItem) -> TDataItem:
    """A cursor value as dlt's ``pipeline.state`` keeps it: a date or datetime as the stored
    state reads it back (typed; a pendulum value as the standard type, its zone an offset),
    a UUID as its text."""
    if isinstance(value, _dt.date):
        return live_value(stored_value(value))
    return str(value) if isinstance(value, uuid.UUID) else value


def item_hash(item: TDataItem, primary_key: str | Sequence[str] | None) -> str:
    """The identity of an item for deduplication at the start value: its key, else itself.

    dlt 1.31's hash, so that a state either tool wrote deduplicates the other's rows: the
    key's value (a key given as one name) or values (a list of names), else the whole item
    with sorted keys, as compact JSON (datetimes as microseconds since the epoch, dates and
    times as ISO text, decimals as text, bytes as base64), SHAKE-128 to 9 bytes in base64.
    """
    content: TDataItem = item
    if primary_key and isinstance(item, Mapping):
        if isinstance(primary_key, str):
            content = item.get(primary_key)
        else:
            content = [item.get(key) for key in primary_key]
    text = orjson.dumps(
        content,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS,
        default=_hash_default,
    )
    return digest128(text, 9)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _hash_default(value: object) -> object:
    """A value orjson leaves to us, as dlt's hash writes it."""
    if isinstance(value, _dt.datetime):
        # a plain datetime first: pendulum's DateTime minus a datetime is its own Interval
        plain = _dt.datetime(*value.timetuple()[:6], value.microsecond, tzinfo=value.tzinfo)
        aware = plain if plain.tzinfo is not None else plain.replace(tzinfo=_dt.timezone.utc)
        return (aware - _EPOCH) // _dt.timedelta(microseconds=1)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def _row_hash(table: TDataItem, index: int, key: TDataItem) -> Callable[[], str]:
    """The identity of row ``index`` of an Arrow table, computed when asked for."""
    return lambda: item_hash(table.slice(index, 1).to_pylist()[0], key)


def _cursor_values(column: TDataItem) -> list[TDataItem]:
    """A cursor column as Python values; nanosecond timestamps as ``datetime`` (to the
    microsecond), not pandas' ``Timestamp``, so they compare with values kept in state."""
    import pyarrow as pa

    if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
        column = column.cast(pa.timestamp("us", tz=column.type.tz), safe=False)
    values = list(column.to_pylist())
    if pa.types.is_timestamp(column.type) and column.type.tz in _UTC_NAMES:
        # Arrow gives ZoneInfo('UTC'); dlt's state holds datetime.timezone.utc, as dicts do
        return [v if v is None else v.replace(tzinfo=_dt.timezone.utc) for v in values]
    return values


#: the names an Arrow timestamp's time zone has for UTC
_UTC_NAMES: Final = frozenset({"UTC", "utc", "Etc/UTC", "+00:00", "Z"})


def _shifted(value: TDataItem, lag: float) -> TDataItem:
    """``value`` moved by ``lag``: seconds for a datetime (an ISO timestamp in text too),
    days for a date, units for a number; anything else as it is."""
    value = state_value(value)
    if isinstance(value, str):
        parsed = _from_text(_dt.datetime, value)
        value = parsed if isinstance(parsed, _dt.datetime) else value
    if isinstance(value, _dt.datetime):
        return value + _dt.timedelta(seconds=lag)
    if isinstance(value, _dt.date):
        return value + _dt.timedelta(days=lag)
    if isinstance(value, Decimal):
        return value + Decimal(str(lag))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + lag
    return value


#: the write disposition ``run()`` gives every resource of the extract running in this context
RUN_DISPOSITION: ContextVar[object] = ContextVar("loadstone_run_disposition", default=None)


#: the primary key ``run()`` gives every resource of the extract, in the form the code gave it
RUN_PRIMARY_KEY: ContextVar[str | Sequence[str] | None] = ContextVar(
    "loadstone_run_primary_key", default=None
)


def restarts_cursor(resource_disposition: object) -> bool:
    """Whether a cursor starts from its ``initial_value`` this run, whatever its state says.

    dlt 1.31 does so for a resource whose write disposition is ``"replace"`` (its hint, or
    ``run(write_disposition="replace")``, which wins): the table is made again from the whole
    range, not from the rows after the last run's value (it would be emptied of every row the
    cursor already saw)."""
    run = RUN_DISPOSITION.get()
    return (resource_disposition if run is None else run) == "replace"


def _resolved(hashes: Sequence[str | Callable[[], str]]) -> list[str]:
    return [h if isinstance(h, str) else h() for h in hashes]


class Incremental:
    """A cursor over the items of one resource (see the module docstring)."""

    def __init__(
        self,
        cursor_path: str | None = None,
        initial_value: TDataItem = None,
        last_value_func: LastValueFunc = max,
        primary_key: str | Sequence[str] | None = None,
        end_value: TDataItem = None,
        row_order: str | None = None,
        allow_external_schedulers: bool | None = None,
        on_cursor_value_missing: str = "raise",
        lag: float | None = None,
        range_start: str = "closed",
        range_end: str = "open",
    ) -> None:
        if not cursor_path:
            raise TypeError("incremental needs a cursor_path (the field that orders items)")
        if on_cursor_value_missing not in ON_CURSOR_VALUE_MISSING:
            raise ValueError(f"on_cursor_value_missing must be one of {ON_CURSOR_VALUE_MISSING}")
        if row_order is not None and row_order not in ROW_ORDERS:
            raise ValueError(f"row_order must be one of {ROW_ORDERS} or None")
        if range_start not in RANGES or range_end not in RANGES:
            raise ValueError(f"range_start and range_end must be one of {RANGES}")
        if lag is not None and (isinstance(lag, bool) or not isinstance(lag, (int, float))):
            raise TypeError(
                f"incremental(lag=...) takes a number of seconds, days or units: {lag!r}"
            )
        self.cursor_path = cursor_path
        #: the start and end come from the scheduler's interval (:mod:`.external_schedule`)
        self.allow_external_schedulers = bool(allow_external_schedulers)
        self.initial_value = initial_value
        self.last_value_func = last_value_func
        self._func = _resolve_last_value_func(last_value_func)
        self.primary_key = primary_key
        self.end_value = end_value
        self.row_order = row_order
        self.on_cursor_value_missing = on_cursor_value_missing
        self.range_start = range_start
        self.range_end = range_end
        #: how far before the stored last value a run starts again (dlt's ``lag``)
        self.lag = lag
        self._lag_start: TDataItem = _MISSING
        #: the start is a last value a run kept in state (only that one is lagged)
        self._from_state = False
        self._segments = _path_segments(cursor_path)
        self.resource_name = "?"
        self.start_value: TDataItem = initial_value
        self.last_value: TDataItem = initial_value
        #: the start as the state keeps it (``start_value`` is lagged, as dlt shows it)
        self._kept_start: TDataItem = initial_value
        self._shows_lag = False
        self._state: dict[str, TDataItem] | None = None
        self._seen_hashes: frozenset[str] = frozenset()
        #: identities of the items at the last value; an Arrow row's is computed at commit
        self._new_hashes: list[str | Callable[[], str]] = []
        self._kept = 0
        #: the key that identifies rows at the start value; () turns deduplication off
        self._key: str | list[str] | tuple[()] | None = None

    def __class_getitem__(cls, item: object) -> types.GenericAlias:
        """``incremental[int]``: dlt's generic form, as its docs annotate a cursor argument
        (``updated: dlt.sources.incremental[str] = dlt.sources.incremental("updated")``)."""
        return types.GenericAlias(cls, item)

    # -- binding to a run ---------------------------------------------------------------
    def copy(self) -> Incremental:
        return Incremental(
            self.cursor_path,
            self.initial_value,
            self.last_value_func,
            self.primary_key,
            self.end_value,
            self.row_order,
            self.allow_external_schedulers,
            self.on_cursor_value_missing,
            self.lag,
            self.range_start,
            self.range_end,
        )

    def bind(
        self,
        resource_name: str,
        resource_state: dict[str, TDataItem],
        primary_key: str | Sequence[str] | None = None,
        resource_hints: Mapping[str, object] | None = None,
    ) -> Incremental:
        """A fresh copy reading its start from ``resource_state`` (kept for :meth:`commit`);
        from ``initial_value`` when the resource replaces its table (:func:`restarts_cursor`)."""
        restart = restarts_cursor((resource_hints or {}).get("write_disposition"))
        bound = self.copy()
        bound.resource_name = resource_name
        # the cursor's own key, else run()'s (dlt applies it to the resource), else the resource's
        run_key = RUN_PRIMARY_KEY.get()
        key = self.primary_key if self.primary_key is not None else run_key or primary_key
        if isinstance(key, (tuple, list)) and not key:
            bound._key = ()
        else:
            bound._key = key if isinstance(key, str) else (list(key) if key else None)
        stored = resource_state.get("incremental", {}).get(self.cursor_path)
        if self.allow_external_schedulers:  # the scheduler's interval: a range, no state
            bound.start_value, bound.end_value = scheduled_interval(
                resource_name, self.cursor_path, self.initial_value, self.end_value
            )
            bound.initial_value = bound.start_value
            stored = None
        elif self.end_value is not None and self.initial_value is None:
            # dlt 1.31 refuses it when the cursor binds (ConfigurationValueError)
            raise ConfigValueError(
                "incremental end_value",
                self.end_value,
                f"cursor {self.cursor_path!r} of resource {resource_name!r}",
                "given with an initial_value (a range needs its start)",
            )
        elif self.end_value is None:
            bound._state = resource_state
            if stored is None:  # dlt's: the body of the first run reads its cursor's state
                value = _jsonable(self.initial_value)
                resource_state.setdefault("incremental", {})[self.cursor_path] = {
                    "initial_value": value, "last_value": value,
                    "unique_hashes": [], "start_value": value,
                }  # fmt: skip
        if stored and self.end_value is None and not restart:
            bound._from_state = True
            bound.start_value = state_value(stored.get("last_value"))
            bound._seen_hashes = frozenset(stored.get("unique_hashes") or ())
            # rows at the start value stay known while the last value does not move on
            bound._new_hashes = list(stored.get("unique_hashes") or ())
        bound.last_value = bound._kept_start = bound.start_value
        if bound._from_state and bound.lag is not None and bound.start_value is not None:
            # dlt 1.31 shows the lagged start as start_value, and as last_value until the
            # first page reaches the cursor, which goes on from the value kept in state
            bound.start_value = bound.last_value = bound._lagged_start()
            bound._shows_lag = True
        return bound

    def commit(self) -> None:
        """Keep the last value and the hashes at it in state (not for a backfill range)."""
        if self._state is None:
            return
        incremental = self._state.setdefault("incremental", {})
        if self.cursor_path in incremental and not self._kept:
            return  # nothing passed the cursor: the state stays as it was, as in dlt
        kept = incremental.get(self.cursor_path) or {}  # dlt keeps the first initial value
        incremental[self.cursor_path] = {
            "initial_value": kept.get("initial_value", _jsonable(self.initial_value)),
            "last_value": _jsonable(self.last_value),
            "unique_hashes": list(dict.fromkeys(_resolved(self._new_hashes))),
            "start_value": _jsonable(self._kept_start),
        }

    # -- filtering ------------------------------------------------------------------------
    def cursor_value(self, item: TDataItem) -> TDataItem:
        value: TDataItem = item
        for segment in self._segments:
            if isinstance(value, Mapping) and segment in value:
                value = value[segment]
            elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
                value = value[int(segment)]
            else:
                return _MISSING
        return value

    def _is_after(self, reference: TDataItem, value: TDataItem) -> bool:
        """True when ``value`` comes after ``reference`` in the cursor's direction."""
        reference, value = _coerce_pair(reference, value)
        try:
            return bool(value != reference and self._func([reference, value]) == value)
        except TypeError as exc:  # dlt's error, not the comparison's
            raise IncrementalCursorInvalidCoercion(
                self.resource_name, self.cursor_path, reference, value
            ) from exc

    @property
    def kept_start_value(self) -> TDataItem:
        """The start as the state keeps it, before ``lag`` (an ISO timestamp stays text)."""
        return self._kept_start

    @property
    def lagged_start_value(self) -> TDataItem:
        """Where a read of new rows starts: the start value, moved back by ``lag`` (what a
        source pushes into its query, as ``sql_table`` does)."""
        return self._lagged_start()

    def _lagged_start(self) -> TDataItem:
        """The start value, moved back by ``lag`` when it is a last value kept in state
        (dlt's rule: an ``initial_value`` is never lagged): seconds for datetimes (and
        ISO timestamps kept as text), days for dates, units for numbers; forward for
        ``min``. Why: late rows within the lag are read again; with a lag nothing is
        deduplicated, as in dlt (the rows within it load again)."""
        if self._lag_start is not _MISSING:
            return self._lag_start
        start = self.start_value
        if self.lag is not None and start is not None and self._from_state:
            start = _shifted(start, -self.lag if self._func is not min else self.lag)
        self._lag_start = start
        return start

    def _out_of_range(self, value: TDataItem) -> str | None:
        """The side of the range ``value`` falls outside (``"start"`` or ``"end"``), or None
        when in range."""
        start = self._lagged_start()
        if start is not None:
            a, b = _coerce_pair(start, value)
            if a == b:
                if self.range_start == "open":
                    return "start"
            elif not self._is_after(start, value):
                return "start"
        end = self.end_value
        if end is not None:
            a, b = _coerce_pair(end, value)
            if a == b:
                if self.range_end == "open":
                    return "end"
            elif self._is_after(end, value):
                return "end"
        return None

    def _stops(self, side: str) -> bool:
        """With ``row_order``, an item past the side rows move to ends the read: the end for
        ascending rows, the start for descending ones; one on the other side is skipped
        (a row equal to an open start, or above the end of descending rows)."""
        return (self.row_order, side) in (("asc", "end"), ("desc", "start"))

    def _keep(self, item: TDataItem) -> bool | None:
        """True keep, False drop, None drop and stop reading."""
        return self._verdict(self.cursor_value(item), item, lambda: item_hash(item, self._key))

    def _verdict(
        self, value: TDataItem, item: TDataItem, hash_of: Callable[[], str]
    ) -> bool | None:
        """The one rule for an item whose cursor holds ``value`` (dict or Arrow row alike).

        ``hash_of`` computes the item's identity only where it is needed (at the start or
        last value), so an Arrow row is not turned into a dict unless it is compared.
        """
        if value is _MISSING or value is None:
            if self.on_cursor_value_missing == "raise":
                error = (
                    IncrementalCursorPathMissing
                    if value is _MISSING
                    else IncrementalCursorPathHasValueNone
                )
                raise error(self.resource_name, self.cursor_path, item)
            included = self.on_cursor_value_missing == "include"
            self._kept += included  # an included row moves the state on, as in dlt
            return included
        side = self._out_of_range(value)
        if side is not None:
            return None if self._stops(side) else False
        hashed: str | None = None
        dedup = self._key != ()
        if (
            dedup
            and self.start_value is not None
            and _coerce_pair(self.start_value, value)[0] == value
        ):
            hashed = hash_of()
            if hashed in self._seen_hashes:
                return False
        self._advance(value, hashed if hashed is not None else hash_of)
        self._kept += 1
        return True

    def _advance(self, value: TDataItem, hashed: str | Callable[[], str]) -> None:
        # no deduplication (no key, a lag, or an open start that already excludes the rows at
        # the last value): the last value only, no hashes kept, as in dlt
        if self._key == () or self.lag is not None or self.range_start == "open":
            if self.last_value is None or self._is_after(self.last_value, value):
                self.last_value = value
            return
        last = self.last_value
        if last is None or self._is_after(last, value):
            self.last_value = value
            self._new_hashes = []
        elif _coerce_pair(last, value)[0] != value:
            return
        self._new_hashes.append(hashed)

    def _filter_arrow(self, item: TDataItem) -> tuple[TDataItem, bool]:
        """(the rows of an Arrow/pandas item that pass, or None; whether reading stops).

        The cursor column is read once as Python values and each value meets the same rule
        as a dict's (:meth:`_verdict`); the kept rows are taken from the table with one
        Arrow ``take``, so the other columns are never converted.
        """
        from loadstone.extract.arrow_items import as_arrow_table

        table = as_arrow_table(item)
        name = self._segments[0] if len(self._segments) == 1 else None
        if name is None or name not in table.column_names:
            raise IncrementalCursorPathMissing(
                self.resource_name, self.cursor_path, f"<Arrow table: {table.column_names}>"
            )
        kept: list[int] = []
        stopped = False
        for index, value in enumerate(_cursor_values(table.column(name))):
            verdict = self._verdict(value, item, _row_hash(table, index, self._key))
            if verdict is None:
                stopped = True
                break
            if verdict:
                kept.append(index)
        if not kept:
            return None, stopped
        return (table if len(kept) == table.num_rows else table.take(kept)), stopped

    def _filter_list(self, items: list[TDataItem]) -> tuple[list[TDataItem], bool]:
        """(the entries of a list page that pass, whether reading stops)."""
        from loadstone.extract.arrow_items import is_arrow_item

        kept: list[TDataItem] = []
        for item in items:
            if is_arrow_item(item):
                rows, stop = self._filter_arrow(item)
                if rows is not None:
                    kept.append(rows)
            else:
                verdict = self._keep(item)
                stop = verdict is None
                if verdict:
                    kept.append(item)
            if stop:
                return kept, True
        return kept, False

    def filter_page(
        self, page: TDataItem, unwrap: Callable[[TDataItem], TDataItem]
    ) -> tuple[list[TDataItem], bool]:
        """(the page with out-of-range and already loaded items removed, or no page;
        whether reading stops): one page of the pipe, as the pipe iterator pushes it."""
        from loadstone.extract.arrow_items import is_arrow_item

        if self._shows_lag:  # the lagged start was shown until a page came
            self.last_value, self._shows_lag = self._kept_start, False
        inner, rewrap = unwrap(page)
        if is_arrow_item(inner):
            rows, stopped = self._filter_arrow(inner)
            return ([] if rows is None else [rewrap(rows)]), stopped
        if isinstance(inner, list):
            kept, stopped = self._filter_list(inner)
            return ([rewrap(kept)] if kept else []), stopped
        verdict = self._keep(inner)
        return ([rewrap(inner)] if verdict else []), verdict is None

    def filter_pages(
        self, pages: Iterator[TDataItem], unwrap: Callable[[TDataItem], TDataItem]
    ) -> Iterator[TDataItem]:
        """Pages with out-of-range and already loaded items removed; commits at the end."""
        try:
            for page in pages:
                kept, stopped = self.filter_page(page, unwrap)
                yield from kept
                if stopped:
                    break
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        self.commit()

    def __repr__(self) -> str:
        return (
            f"Incremental(cursor_path={self.cursor_path!r}, initial_value="
            f"{self.initial_value!r}, end_value={self.end_value!r})"
        )


def as_incremental(value: Incremental | Mapping[str, object]) -> Incremental:
    """``incremental=`` as given: a cursor, or the keyword arguments of one."""
    if isinstance(value, Incremental):
        return value
    if isinstance(value, Mapping):
        return Incremental(**value)  # type: ignore[arg-type]  # checked by Incremental itself
    raise TypeError(f"incremental must be loadstone.sources.incremental(...), got {value!r}")
