"""The normalizer's settings: where chunks run, on how many workers, with which engine loops.

Each one is read through :mod:`loadstone.config` (TOML, environment, CLI) by one function
here, so :meth:`~.normalizer.RelationalNormalizer.check_settings` parses them all before a
run does any work, and a bad value fails in one line naming the setting.
"""

from __future__ import annotations

from typing import Literal

from loadstone import config as loadstone_config
from loadstone import spark_session
from loadstone.exceptions import NormalizeError
from loadstone.plugins.normalizers.relational.local_pool import default_workers
from loadstone.plugins.normalizers.relational.native import NATIVE_AVAILABLE
from loadstone.plugins.normalizers.relational.native_core import say_unavailable_once
from loadstone.plugins.normalizers.relational.task import EngineConfig

#: ``normalize.engine`` values: where chunks run.
ENGINES = ("auto", "local", "spark")

#: On a local master, with a session not started yet, inputs smaller than this run on the
#: local worker processes. Spark's local Python workers run the same engine on the same
#: cores, plus a JVM, so on one machine Spark never wins: measured on 2 cores, end to end,
#: 1.35 GB of GitHub events took 17.7 s on the pool and 30.6 s through Spark (normalize 11.0
#: vs 22.8 s; a chunk costs 0.50 s of CPU either way); with the line scan in C, 27.1 CPU s
#: on the pool against 39.8 through Spark (0.42 vs 0.43 s a chunk). Hence 1 TiB: on a local master the
#: pool does it all unless this is set lower; a cluster or Connect remote always uses Spark.
DEFAULT_LAZY_SPARK_BYTES = 1024**4

NativeSetting = Literal["true", "false", "required"]


def native_setting() -> NativeSetting:
    """``normalize.native``: ``true`` (default), ``false`` or ``required``.

    True runs the engine's C hot path where it is built (the Python loops elsewhere); false
    runs the pure-Python reference loops, e.g. to rule the C path out when chasing a
    difference (the output is the same either way); ``required`` fails the run where the C
    extension is missing (on the driver, or in any Spark task) instead of running slowly.
    """
    found = loadstone_config.locate("normalize.native", default=True)
    if str(found.value).strip().lower() == "required":
        return "required"
    native = loadstone_config.parse_bool(found.value, "normalize.native", found.origin)
    return "true" if native else "false"


def native_enabled() -> bool:
    """Whether tasks run the C loops (``normalize.native``); ``required`` checks the driver."""
    setting = native_setting()
    if setting == "required" and not NATIVE_AVAILABLE:
        raise NormalizeError(
            "normalize.native = required, but loadstone's C extension is not importable in "
            "the driver: reinstall loadstone with a C compiler present"
        )
    return setting != "false"


def native_ran(config: EngineConfig) -> bool:
    """Whether a chunk run in this process ran the C loops (for the trace)."""
    return bool(config.native and NATIVE_AVAILABLE)


#: ``normalize.engine_core`` values
ENGINE_CORES = ("native", "python")


def engine_core_setting() -> str:
    """``normalize.engine_core``: ``native`` (default) or ``python``.

    ``native`` parses a chunk's JSON lines with simdjson straight into Arrow column buffers
    (no Python object per value) and hands a chunk back to the Python engine for anything it
    does not do exactly (a coercion, a variant, a contract, an integer beyond int64 ...);
    the tables are the same either way. Where the core is not built (no C++ compiler or
    simdjson at install), the Python engine runs and the driver says so once.
    """
    return loadstone_config.get_choice("normalize.engine_core", ENGINE_CORES, "native")


def engine_core() -> str:
    """:func:`engine_core_setting` for a run: ``native`` where the core is not built says so
    once (the chunks then run the Python engine, see :func:`.native_core.skip_reason`)."""
    setting = engine_core_setting()
    if setting == "native":
        say_unavailable_once()
    return setting


def configured_workers() -> int:
    """``normalize.workers``: local worker processes (default: the cores this process may use)."""
    return loadstone_config.get_int("normalize.workers", default_workers(), minimum=1)


def engine_setting() -> str:
    """``normalize.engine`` (env ``NORMALIZE__ENGINE``, CLI ``--engine``), default auto."""
    value = loadstone_config.get_str("normalize.engine", "auto").strip().lower()
    if value not in ENGINES:
        raise NormalizeError(f"normalize.engine must be one of {', '.join(ENGINES)}, not {value!r}")
    return value


def cluster_slots() -> int:
    """Tasks a configured cluster runs at once, as far as loadstone knows: the executors
    it waits for (``normalize.min_executors``); 1 on a local master or with ``local``."""
    if engine_setting() == "local" or spark_session.configured_target().is_local:
        return 1
    return max(1, min_executors())


def min_executors() -> int:
    """``normalize.min_executors``: executors to wait for on a cluster (default 1)."""
    return loadstone_config.get_int("normalize.min_executors", 1, minimum=0)


def spark_min_bytes(lazy_spark_bytes: int) -> int:
    """``normalize.spark_min_bytes``: below it a local session is not worth starting."""
    return loadstone_config.get_size("normalize.spark_min_bytes", lazy_spark_bytes)


def executor_wait_seconds() -> float:
    """``normalize.executor_wait_seconds``: how long a cluster run waits for executors."""
    return float(loadstone_config.resolve("normalize.executor_wait_seconds", default=120))
