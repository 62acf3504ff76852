"""Fixtures shared by the whole suite.

The SparkSession is real and session-scoped: starting Spark costs seconds, so every test that
needs it shares one. Tests never mock Spark, DuckDB or the file system. Hypothesis budgets come
from the profiles registered here.

The README's command runs the suite on two workers with ``--dist loadfile``: every test module
runs on one worker, so a module-scoped setup runs once and a module's tests never race each
other; the modules that use the SparkSession go to one worker together, so one worker starts
it. Each worker builds its own other session fixtures (the S3 server), and modules that share
the PostgreSQL server each work in schemas of their own.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Hypothesis budgets, one place: "suite" (the default) for a developer's run; "ci" (the
# README's test command, so CI too) half of it, which keeps the whole suite within its
# 4 minutes on 2 slower cores: the same properties and explicit examples run, over fewer
# generated inputs; ``pytest --hypothesis-profile=thorough`` searches ten times longer than
# "suite". The slow property tests take a multiple or a fraction of
# ``settings.default.max_examples`` (by how costly an example is), so every profile scales them.
settings.register_profile("suite", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=50, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile("suite")

CASES = Path(__file__).resolve().parent / "fixtures" / "cases"


#: the modules that take longest (each starts several Spark applications), run first: with
#: ``-n 2`` each worker begins with one of them and the short modules fill in around them
LONGEST_FIRST = (
    "tests/destinations/spark/test_spark_destination.py",
    "tests/normalize/test_cluster.py",
)


#: the modules that use the suite's SparkSession (the ``spark`` fixture): with ``--dist
#: loadfile`` they are sent to one worker as if one module, so only that worker starts a local
#: Spark (about 10 CPU-s). The workers check that the list is complete.
SPARK_SESSION_MODULES = (
    "tests/destinations/spark/test_spark_destination_session.py",
    "tests/normalize/test_normalizer_bad_records.py",
    "tests/normalize/test_normalizer_parallel.py",
    "tests/pipelines/test_pipeline_run.py",
    "tests/storage/test_package_storage.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first, then those sharing the SparkSession, then the rest."""
    users = {_module(i) for i in items if "spark" in getattr(i, "fixturenames", ())}
    missing = users - set(SPARK_SESSION_MODULES)
    if missing:
        raise pytest.UsageError(f"add {sorted(missing)} to conftest.SPARK_SESSION_MODULES")

    def rank(item: pytest.Item) -> int:
        if _module(item) in LONGEST_FIRST:
            return LONGEST_FIRST.index(_module(item))
        return len(LONGEST_FIRST) + (_module(item) not in SPARK_SESSION_MODULES)

    items.sort(key=rank)
    import jvm_options

    if os.environ.get(jvm_options.PENDING_VARIABLE):
        items[:] = _after_half_of_the_others(items, {*LONGEST_FIRST, *SPARK_SESSION_MODULES})


def _after_half_of_the_others(items: list[pytest.Item], spark: set[str]) -> list[pytest.Item]:
    """While this run builds the JVM class archive (a machine's first run: about a minute),
    the Spark modules come after the first half of the other modules, so that their JVMs
    start with it; they stay early enough for the rest to fill in around them."""
    theirs = [i for i in items if _module(i) in spark]
    others = [i for i in items if _module(i) not in spark]
    modules = list(dict.fromkeys(_module(i) for i in others))
    first = set(modules[: len(modules) // 2])
    early = [i for i in others if _module(i) in first]
    return [*early, *theirs, *[i for i in others if _module(i) not in first]]


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, the SparkSession's modules (:data:`SPARK_SESSION_MODULES`) one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped] # no stubs

    class SparkSessionOnOneWorker(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = str(super()._split_scope(nodeid))
            return "spark-session" if module in SPARK_SESSION_MODULES else module

    return SparkSessionOnOneWorker(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """Every JVM the suite starts gets the quick JIT and, once built, the class archive
    (``jvm_options.py``), and every Python process imports pyspark from its installed package
    (``python_options.py``): Spark applications start in less CPU, and nothing else changes.
    The first process (xdist's controller, or pytest without workers) starts the build, and
    picks the folder of the tests' temporary files (:func:`_temporary_root`)."""
    import jvm_options
    import python_options

    python_options.enable()

    if not hasattr(config, "workerinput"):
        _temporary_root()
        jvm_options.start_archive_build()
        _byte_compile_loadstone()
    jvm_options.enable()


#: memory-backed folder for the tests' temporary files, when the machine has one this large
MEMORY_FOLDER, MEMORY_NEEDED = Path("/dev/shm"), 6 * 2**30


def _temporary_root() -> None:
    """The tests' ``tmp_path`` folders go to memory (``/dev/shm``) when it has room.

    The suite writes about 1.3 GB of small files (DuckDB databases, packages, state) and every
    atomic write syncs to disk: on a disk-backed ``/tmp`` that journaling took about a fifth
    of the suite's CPU. What the tests check does not change (a kill is a kill, on either
    file system); ``tests/pipelines/test_disk_full.py`` mounts its own small file systems.
    ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` (pytest's own setting) still choose; the
    xdist workers inherit the choice. pyproject.toml keeps only failed tests' folders.
    """
    import os
    import shutil

    if "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    if MEMORY_FOLDER.is_dir() and os.access(MEMORY_FOLDER, os.W_OK):
        if shutil.disk_usage(MEMORY_FOLDER).free >= MEMORY_NEEDED:
            os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_FOLDER)


def _byte_compile_loadstone() -> None:
    """Compile loadstone's modules once, as ``pip install`` does for a regular install.

    The suite runs an editable install, and where ``PYTHONDONTWRITEBYTECODE`` is set (CI's
    machines set it) every process the tests start (CLI runs, crash tests, Spark's Python
    workers) would compile about 140 modules again: 0.1 s of CPU each time.
    """
    import compileall

    import loadstone
    import loadstone.plugins

    for package in (loadstone, loadstone.plugins):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)


@pytest.fixture(autouse=True)
def _jvm_options() -> None:
    """The class archive for the JVMs this test starts, if it was built since (one stat)."""
    import jvm_options

    jvm_options.refresh()


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from loadstone.spark_session import get_spark_session

    session = get_spark_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real captured API data (GitHub events and issues, Ethereum blocks, weird rows), kept
    gzipped in ``tests/fixtures/cases/`` and unpacked once per session as plain ``.json``."""
    folder = tmp_path_factory.mktemp("cases")
    for packed in sorted(CASES.glob("*.json.gz")):
        (folder / packed.name.removesuffix(".gz")).write_bytes(gzip.decompress(packed.read_bytes()))
    return folder


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees no user config: LOADSTONE_HOME and the working directory are its own."""
    home = tmp_path / "_loadstone_home"
    home.mkdir()
    monkeypatch.setenv("LOADSTONE_HOME", str(home))
    work = tmp_path / "_cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    for key in list(__import__("os").environ):
        if key.startswith(
            ("SCHEMA__", "SOURCES__", "NORMALIZE__", "DESTINATION__", "PIPELINES__", "PACKAGES__")
        ):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A Spark Connect server (``local[2]``), once per module: the Connect tests of the
    normalizer and of the Spark destination share it (they are one module,
    ``normalize/test_cluster.py``). It stops when the module ends, not with the session:
    idle it still took 0.3 CPU-s a minute (and its heap) while the other modules ran."""
    from cluster_support import start_connect_server

    server = start_connect_server(tmp_path_factory.mktemp("connect"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, connect_server: Any) -> Iterator[object]:
    """A standalone master, two hidden-disk workers and the Connect server, once per module
    (only ``normalize/test_cluster.py`` uses them: idle, each JVM still took 0.15 CPU-s a
    minute, and its memory, until the session ended)."""
    from cluster_support import start_cluster

    running = start_cluster(tmp_path_factory.mktemp("cluster"), connect=False)
    running.connect_url = connect_server.url
    yield running
    running.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[object]:
    """moto's standalone S3 server on loopback (``s3_support.py``), once per worker."""
    from s3_support import running_server

    with running_server() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The test PostgreSQL server (``LOADSTONE_TEST_POSTGRES``); missing is an error, never a skip."""
    url = __import__("os").environ.get("LOADSTONE_TEST_POSTGRES")
    if not url:
        raise RuntimeError(
            'LOADSTONE_TEST_POSTGRES is not set: start a server with eval "$(bash .ci/postgres start)"'
        )
    return url
