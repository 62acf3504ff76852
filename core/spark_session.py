"""The SparkSession loadstone runs on.

One place builds the session so that the same pipeline runs on a laptop (``local[*]``, the
default) and on a cluster: ``spark.master`` and every other ``spark.*`` option come from
configuration (``[spark]`` in config.toml, or env ``SPARK__MASTER`` ...), never from code.
Spark itself is only imported here, in the normalizer and in destinations.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import SparkTargetError

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


def configured_options(overrides: Mapping[str, object] | None = None) -> dict[str, str]:
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


@attrs.frozen
class SparkTarget:
    """Where Spark runs: a Connect ``remote`` URL, or a ``master`` this process drives."""

    master: str | None = None
    remote: str | None = None

    @property
    def is_local(self) -> bool:
        """A ``local[...]`` master: Spark is a process pool on this machine."""
        return self.remote is None and (self.master or "local").startswith("local")

    @property
    def url(self) -> str:
        return self.remote or self.master or "local[*]"

    def asdict(self) -> dict[str, str | None]:
        return {"master": self.master, "remote": self.remote}


#: what ``spark-submit`` accepts as a master (anything else stops its JVM with a stack trace)
MASTER_PREFIXES = ("local", "spark://", "k8s://")


def configured_target(overrides: Mapping[str, object] | None = None) -> SparkTarget:
    """The master or Connect remote configuration names (``spark.remote`` wins).

    Checked here, before any JVM starts: a master Spark does not know made its launcher
    print a Java stack trace and pyspark say only ``[JAVA_GATEWAY_EXITED]`` (issue 22).
    """
    options = configured_options(overrides)
    remote = options.get("spark.remote") or None
    if remote:
        if not remote.startswith("sc://"):
            raise SparkTargetError(
                f"spark.remote {remote!r} is not a Spark Connect URL: it must look like "
                "sc://host:port (config [spark] remote, or env SPARK__REMOTE)"
            )
        return SparkTarget(remote=remote)
    master = options["spark.master"]
    if master != "yarn" and not master.startswith(MASTER_PREFIXES):
        raise SparkTargetError(
            f"spark.master {master!r} is not a Spark master: use local[*], local[N], "
            "spark://host:port, k8s://... or yarn (config [spark] master, or env SPARK__MASTER)"
        )
    return SparkTarget(master=master)


#: how long a check of a master's port waits (a firewall may drop the packets silently)
REACH_TIMEOUT_SECONDS = 3.0


def _addresses(url: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each master a ``spark://`` or ``sc://`` URL names (a standalone
    cluster with standby masters names several: ``spark://a:7077,b:7077``)."""
    rest = url.split("://", 1)[1].split("/", 1)[0].split(";", 1)[0]
    default = 15002 if url.startswith("sc://") else 7077
    found = []
    for part in rest.split(","):
        host, _, port = part.rpartition(":") if ":" in part else (part, "", "")
        try:
            found.append((host.strip("[]") or "localhost", int(port or default)))
        except ValueError:
            found.append((part, default))  # not a port: the connect below fails and says so
    return found


def check_reachable(overrides: Mapping[str, object] | None = None) -> None:
    """Refuse a configured cluster master (``spark://``) or Connect server (``sc://``) that
    nothing answers on, naming the setting and where it came from.

    Why before any work: an unreachable master failed the normalize step with pyspark's
    "An error occurred while calling None.org.apache.spark.sql.classic.SparkSession" and
    kept the package pending, when the cause was the setting, not the data.
    """
    import socket

    from loadstone import config

    target = configured_target(overrides)
    if target.is_local or target.master in ("yarn",) or (target.master or "").startswith("k8s"):
        return
    key = "remote" if target.remote else "master"
    for host, port in _addresses(target.url):
        try:
            socket.create_connection((host, port), timeout=REACH_TIMEOUT_SECONDS).close()
            return
        except OSError:
            continue
    origin = "code" if overrides else config.locate(("spark", key), default=None).origin
    origin = "configuration" if origin == "default" else origin
    what = "Spark Connect server" if target.remote else "Spark master"
    raise SparkTargetError(
        f"cannot reach {what} {target.url} (from {origin}): nothing answers there; start it "
        f"or set spark.{key} to a running one (local[*] runs Spark on this machine)"
    )


def session_target(session: SparkSession) -> SparkTarget:
    """The target of a running session (a Connect session has no master to report)."""
    if is_remote_session(session):
        return SparkTarget(remote=_remote_url(session))
    return SparkTarget(master=session.conf.get("spark.master", None))


def is_remote_session(session: object) -> bool:
    """True for a Spark Connect session (it has no JVM and no SparkContext here)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def _remote_url(session: SparkSession) -> str:
    """``sc://host:port`` of a Connect session (its client keeps the parsed URL, in a private
    member: read defensively)."""
    builder = getattr(getattr(session, "client", None), "_builder", None)
    try:
        parsed = builder.url  # type: ignore[union-attr]  # None is caught: no URL to report
        return f"sc://{parsed.hostname}:{parsed.port}"
    except Exception:  # the URL only labels the trace
        return "sc://"


def remote_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options sent to a Connect session: SQL session settings only.

    A server owns its master, JVMs, UI and Python workers; static settings sent from here
    would be refused or, worse, silently ignored.
    """
    return {key: value for key, value in options.items() if key.startswith("spark.sql.")}


def get_spark_session(overrides: Mapping[str, object] | None = None) -> SparkSession:
    """Return the active SparkSession, creating it from configuration if there is none.

    ``spark.remote`` (env ``SPARK__REMOTE``) makes a Spark Connect session, sent only the
    options a server accepts. Otherwise a classic session drives ``spark.master``; only on a
    local master does it pin the workers' Python to this interpreter: on a cluster the
    executors' Python is ``spark.pyspark.python`` / ``PYSPARK_PYTHON`` (README: "Running on
    a cluster"), since this machine's path means nothing there.
    """
    from pyspark.sql import SparkSession

    target = configured_target(overrides)
    options = configured_options(overrides)
    if target.remote is not None:
        builder = SparkSession.builder.remote(target.remote)
        for key, value in remote_options(options).items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    executor_python = options.get("spark.pyspark.python")
    if executor_python:
        # a driver started without spark-submit reads only the env var, not the option
        os.environ.setdefault("PYSPARK_PYTHON", executor_python)
    elif target.is_local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def active_session() -> SparkSession | None:
    """This process's active Spark session, or None (pyspark is not imported for it)."""
    if "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


@contextlib.contextmanager
def stopped_on_error() -> Iterator[None]:
    """Stop a Spark session started inside the block when the block fails.

    The command line wraps a command in it, so that a failure's one-line error is printed
    after the session is gone: a classic session's JVM shares the process's stderr and logs
    a failed job's tasks from its own threads, and those lines could otherwise land after
    the error and bury it. A session that was active before the block (a caller's, or the
    one the tests share when they call the command line in-process) is left running.
    """
    before = active_session()
    try:
        yield
    except BaseException:
        started = active_session()
        if started is not None and started is not before:
            started.stop()
        raise
