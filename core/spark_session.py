"""The SparkSession loadstone runs on.

One place builds the session so that the same pipeline runs on a laptop (``local[*]``, the
default) and on a cluster: ``spark.master`` and every other ``spark.*`` option come from
configuration (``[spark]`` in config.toml, or env ``SPARK__MASTER`` ...), never from code.
Spark itself is only imported here, in the normalizer and in destinations.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Spark's log configuration in loadstone: errors only (see the file for why).
LOG_CONFIG = Path(__file__).with_name("spark_log4j2.properties")

#: Options that make a local session quiet and light; config overrides each of them.
DEFAULT_OPTIONS: Mapping[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "loadstone",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": (
        f"-Duser.timezone=UTC -Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    ),
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.python.worker.reuse": "true",
}


#: Added to the driver JVM's options on a local master unless configuration sets them. On
#: ``local[*]`` the driver JVM mostly schedules: the normalizer's work runs in Python workers.
#: Its optimizing JIT compiler (C2) then costs more than it earns: starting a session and
#: running a first task took 9.6 CPU seconds with it and 5.7 without (4.9 s instead of
#: 6.1 s of wall time on 2 cores), CPU a small machine would rather spend normalizing.
LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
_DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def configured_options(overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Spark options in force: defaults, then configuration, then ``overrides``."""
    from loadstone import config

    options = dict(DEFAULT_OPTIONS)
    chosen = {key: str(value) for key, value in config.spark_options().items()}
    if overrides:
        chosen.update({key: str(value) for key, value in overrides.items()})
    options.update(chosen)
    if _DRIVER_JAVA_OPTIONS not in chosen and options["spark.master"].startswith("local"):
        options[_DRIVER_JAVA_OPTIONS] += " " + LOCAL_DRIVER_JAVA_OPTIONS
    return options


def get_spark_session(overrides: Mapping[str, Any] | None = None) -> SparkSession:
    """Return the active SparkSession, creating it from configuration if there is none."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder
    for key, value in configured_options(overrides).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
