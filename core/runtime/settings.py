"""The settings the steps of a run read, each with its key and default in one place.

A run reads some settings late: ``load.keep_completed_packages`` only once a package has
been committed. A bad value found there made the run report a failure *after* its load
committed, and a user who then ran the command again loaded everything twice (issue 22).
So :func:`loadstone.pipelines.run_settings.check_all` parses every one of them before a run
does any work, and the steps read them through these functions, so no key or default is
written twice.

``runtime.log_level`` is dlt's ``RUNTIME__LOG_LEVEL``: the level of the ``loadstone``
logger (dlt refuses an unknown level too; loadstone takes the names in any case).
"""

from __future__ import annotations

from loadstone import config

#: ``normalize.normalizer``: the normalizer plugin used when none is configured
DEFAULT_NORMALIZER = "relational"
#: ``runtime.log_level``: Python's level names (dlt passes the value to ``logging``)
LOG_LEVELS = ("CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET")


def keep_completed_packages() -> bool:
    """Keep a loaded package's data files (``load.keep_completed_packages``, default no)."""
    return config.get_bool("load.keep_completed_packages", False)


def overlap_normalize() -> bool:
    """Load a package's finished files while its later parts are still being normalized, in
    the package's one transaction, where the destination can (``load.overlap_normalize``,
    default yes; DuckDB does, other destinations load after normalize)."""
    return config.get_bool("load.overlap_normalize", True)


def on_bad_record() -> str:
    """What normalize does with a line that is not JSON (``normalize.on_bad_record``)."""
    from loadstone.normalizers.contract import ON_BAD_RECORD_VALUES

    return config.get_choice("normalize.on_bad_record", ON_BAD_RECORD_VALUES, "fail")


def normalizer_name() -> str:
    """The normalizer plugin (``normalize.normalizer``)."""
    return config.get_str("normalize.normalizer", DEFAULT_NORMALIZER)


def log_level() -> str:
    """The ``loadstone`` logger's level (``runtime.log_level``, default WARNING)."""
    found = config.locate(("runtime", "log_level"), default="WARNING")
    level = str(found.value).strip().upper()
    if level not in LOG_LEVELS:
        raise config.ConfigValueError(
            "runtime.log_level", found.value, found.origin, "one of " + ", ".join(LOG_LEVELS)
        )
    return level
