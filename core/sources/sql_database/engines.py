"""Engines of one connection share their dialect and compiled statements, not connections.

Every ``sql_table`` / ``sql_database`` call makes its own engine (dlt's do too). A new
``create_engine`` brings a new dialect, and SQLAlchemy keys its compiled-statement cache by
the dialect, so each call compiled the dialect's reflection queries again: on PostgreSQL
that was ~87 ms CPU per call, most of a small incremental run's reflection. Here the first
engine of a URL and options is kept as a template; later calls get a new :class:`sa.Engine`
on a new pool (``pool.recreate()``, what ``engine.dispose()`` does) with the template's
dialect and compiled cache: ~22 ms per call. Connections are never shared between calls, so
a connection killed under one run, or disposed by the user, is not met by another; events a
user adds to one engine (or its pool) stay on that engine.

Not shared (a plain ``create_engine``): options naming a ``pool`` instance (the user's pool
must be the one used), SQLAlchemy plugins (they hook each engine at creation), options that
cannot be compared.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlalchemy as sa

#: templates kept (least recently used dropped first): one per URL and options in use
_KEPT = 16
_templates: OrderedDict[tuple[object, ...], sa.Engine] = OrderedDict()
_lock = threading.Lock()


def _frozen(value: object) -> object:
    """``value`` as a hashable key (mappings and sequences by their items)."""
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("sequence", tuple(_frozen(v) for v in value))
    return value


def _key(url: sa.URL, options: Mapping[str, Any]) -> tuple[object, ...] | None:
    """The template's key, or None when engines of these options must not share a dialect."""
    if "pool" in options or "plugins" in options or "plugin" in url.query:
        return None
    key = (url, _frozen(options))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _sibling(template: sa.Engine) -> sa.Engine:
    """A new engine on a new pool of the template's kind, with its dialect and caches."""
    import sqlalchemy as sa

    engine = sa.Engine(
        template.pool.recreate(),
        template.dialect,
        template.url,
        logging_name=getattr(template, "logging_name", None),
        echo=template.echo,
        query_cache_size=0,
        execution_options=template.get_execution_options(),
        hide_parameters=template.hide_parameters,
    )
    # SQLAlchemy has no public way to hand an engine an existing cache at creation
    engine._compiled_cache = template._compiled_cache
    return engine


def create_engine(url: sa.URL, options: Mapping[str, Any]) -> sa.Engine:
    """``sa.create_engine(url, **options)``, sharing the dialect of an earlier identical call."""
    import sqlalchemy as sa

    key = _key(url, options)
    if key is None:
        return sa.create_engine(url, **options)
    with _lock:
        template = _templates.get(key)
        if template is not None:
            _templates.move_to_end(key)
    if template is None:
        template = sa.create_engine(url, **options)
        with _lock:
            template = _templates.setdefault(key, template)
            while len(_templates) > _KEPT:
                _templates.popitem(last=False)
    return _sibling(template)
