"""``loadstone run PATH... --table T``: load JSON / JSONL files (gzipped too) into a destination.

The main job from the command line: every file (or every JSON file in a folder) goes into
one table through one load package, with a live display of each step (rows, MB, files,
elapsed) on stderr -- refreshed in place on a terminal, one line per update otherwise --
and the load info printed on stdout at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from loadstone.exceptions import InputError
from loadstone.storage import package_storage

if TYPE_CHECKING:
    from loadstone.runtime.load_info import ProgressEvent
    from loadstone.typing import TWriteDispositionConfig

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz")
#: tables read through the Arrow path (pyarrow's Parquet and CSV readers)
TABLE_SUFFIXES = (".parquet", ".csv", ".csv.gz")
INPUT_SUFFIXES = JSON_SUFFIXES + TABLE_SUFFIXES


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``run`` to the ``loadstone`` parser."""
    parser = subparsers.add_parser(
        "run",
        help="load JSON/JSONL files into a destination",
        description=(
            "Extract JSON/JSONL files (gzipped too; folders are searched for such files), "
            "normalize them on Spark into nested tables and load them."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="JSON/JSONL file or folder")
    parser.add_argument("--table", "-t", required=True, help="table the items go to")
    parser.add_argument("--pipeline", "-p", default="loadstone", help="pipeline name")
    parser.add_argument("--destination", "-d", default=None, help="destination (default duckdb)")
    parser.add_argument("--dataset", default=None, help="dataset name (default <pipeline>_dataset)")
    parser.add_argument(
        "--write-disposition",
        "-w",
        default=None,
        help="append (default), replace, merge, or merge:<strategy> (upsert, scd2, delete-insert)",
    )
    parser.add_argument(
        "--primary-key", "-k", action="append", default=None, help="primary key column (repeat)"
    )
    parser.add_argument("--pipelines-dir", default=None, help="where pipelines keep their state")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress display")
    parser.add_argument(
        "--engine",
        choices=("auto", "local", "spark"),
        default=None,
        help="where normalize runs (normalize.engine): auto (default), local or spark",
    )
    parser.add_argument(
        "--reload",
        action="store_true",
        help="load inputs again that this pipeline already loaded unchanged (skipped otherwise)",
    )
    add_lock_timeout(parser)
    parser.set_defaults(handler=run_command)


def add_lock_timeout(parser: argparse.ArgumentParser) -> None:
    """``--lock-timeout``: how long to wait for another run of the same pipeline."""
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wait this long for another run of the pipeline to finish, 0 fails at once "
        "(default: config pipeline.lock_timeout, 1800)",
    )


def print_notice(event: ProgressEvent) -> None:
    """Notices (a resumed package, a wait for another run) even when progress is quiet."""
    if event.event == "notice":
        print(f"note: {event.message}", file=sys.stderr, flush=True)


def input_files(paths: list[str]) -> list[Path | str]:
    """The input files named by ``paths`` (folders expanded, sorted).

    An object-store URL (``s3://bucket/events.jsonl``) stays a URL: the package storage reads
    it where it is (see README "Running on a cluster").
    """
    files: list[Path | str] = []
    for raw in paths:
        if package_storage.is_object_pattern(raw):
            files.append(raw)  # a glob or folder of objects: listed when extracted
            continue
        if package_storage.is_remote_url(raw):
            check_input(Path(raw), JSON_SUFFIXES)
            files.append(raw)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.name.lower().endswith(INPUT_SUFFIXES)
            )
            if not found:
                raise InputError(
                    f"folder {path} holds no input files ({', '.join(INPUT_SUFFIXES)})"
                )
            files.extend(found)
        elif path.is_file():
            check_input(path, INPUT_SUFFIXES)
            files.append(path)
        else:
            raise InputError(f"input {path} does not exist")
    return files


#: input formats people try, by file suffix: named in the error so the message is exact
OTHER_FORMATS = {
    ".csv": "CSV",
    ".tsv": "TSV",
    ".parquet": "Parquet",
    ".xlsx": "Excel",
    ".xml": "XML",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".avro": "Avro",
}


def check_input(path: Path, accepted: tuple[str, ...]) -> None:
    """A file given by name must be of a kind ``run`` reads: say so before reading it.

    An object-store URL is read where it is, which only JSON lines allow (``accepted``).
    """
    name = path.name.lower()
    if name.endswith(accepted):
        return
    stem = name[:-3] if name.endswith(".gz") else name
    kind = OTHER_FORMATS.get(Path(stem).suffix)
    what = f"{kind} is not a supported input here" if kind else "not a supported input file"
    raise InputError(f"{path}: {what}; loadstone run reads {', '.join(accepted)}")


def parse_write_disposition(value: str | None) -> TWriteDispositionConfig | None:
    """The CLI's ``merge:upsert`` spelling as the hint ``run()`` takes.

    Only the syntax is read here; the value is checked by the schema's one parser
    (``loadstone.schema.hints.parse_write_disposition``) when the hint is applied.
    """
    if value is None:
        return None
    if ":" in value:
        disposition, strategy = value.split(":", 1)
        hint: object = {"disposition": disposition, "strategy": strategy}
    else:
        hint = value
    # the text is the user's: the schema's parser checks it when the hint is applied
    return cast("TWriteDispositionConfig", hint)


#: turns on each refresh of a step that has not finished a part yet
SPINNER = "|/-\\"


class ProgressDisplay:
    """Shows each step's progress on a stream; in place on a tty, as lines otherwise.

    A step such as normalize reports only at package boundaries, so a ticker thread
    refreshes the running step's line (elapsed time) meanwhile: every 0.5 s on a terminal,
    every ``interval`` seconds as a new line otherwise.
    """

    def __init__(self, stream: TextIO | None = None, interval: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = 0.5 if self.tty else interval
        self._lock = threading.Lock()
        self._last_event: ProgressEvent | None = None
        self._step_started = 0.0
        self._last_write = 0.0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._spin = 0

    def _line(self, event: ProgressEvent, elapsed: float | None = None) -> str:
        seconds = event.elapsed if elapsed is None else elapsed
        if event.event == "started" and event.input_rows:
            # nothing finished yet (one chunk is one part): show the work and keep it moving
            self._spin = (self._spin + 1) % len(SPINNER)
            return (
                f"{event.step:<9} working on {event.input_rows:,} rows  "
                f"{event.input_bytes / 1_000_000:>9.2f} MB  {SPINNER[self._spin]}  "
                f"{seconds:>7.1f} s"
            )
        parts = f"  chunk {event.parts_done}/{event.parts}" if event.parts else ""
        return (
            f"{event.step:<9} {event.rows:>12,} rows  {event.bytes / 1_000_000:>9.2f} MB  "
            f"{event.files:>5} files  {seconds:>7.1f} s{parts}"
        )

    def _write(self, text: str, final: bool) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last_write = time.monotonic()

    def _tick(self) -> None:
        while not self._stop.wait(max(self.interval, 0.2)):
            with self._lock:
                event = self._last_event
                if event is None or time.monotonic() - self._last_write < self.interval:
                    continue
                self._write(
                    self._line(event, time.monotonic() - self._step_started) + "  ...",
                    final=False,
                )

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def close(self) -> None:
        self._stop.set()

    def __call__(self, event: ProgressEvent) -> None:
        with self._lock:
            if event.event == "started":
                self._step_started = time.monotonic()
                self._last_event = event
                self._write(f"{event.step:<9} started", final=not self.tty)
                self._start_ticker()
            elif event.event == "notice":
                self._write(f"note: {event.message}", final=True)
            elif event.event == "starting_spark":
                self._write(f"{event.step:<9} starting Spark", final=not self.tty)
            elif event.event == "finished":
                self._last_event = None
                self._write(self._line(event) + "  done", final=True)
            elif event.event in ("progress", "package_done"):
                self._last_event = event
                if time.monotonic() - self._last_write >= self.interval:
                    self._write(self._line(event), final=False)


def run_command(args: argparse.Namespace) -> int:
    from loadstone.pipelines.pipeline import pipeline as make_pipeline

    files = input_files(args.paths)
    if args.engine is not None:
        # the flag is the setting: env is the resolver's highest layer below code
        os.environ["NORMALIZE__ENGINE"] = args.engine
    progress = print_notice if args.quiet else ProgressDisplay()
    pipe = make_pipeline(
        args.pipeline,
        destination=args.destination,
        dataset_name=args.dataset,
        pipelines_dir=args.pipelines_dir,
        progress=progress,
        lock_timeout=args.lock_timeout,
    )
    data: list[Path | str] | Path | str = files if len(files) > 1 else files[0]
    try:
        info = pipe.run(
            data,
            table_name=args.table,
            write_disposition=parse_write_disposition(args.write_disposition),
            primary_key=args.primary_key,
            reload=args.reload,
        )
    finally:
        if isinstance(progress, ProgressDisplay):
            progress.close()
    print(info.with_figures())
    return 0
