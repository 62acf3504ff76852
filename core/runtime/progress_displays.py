"""dlt's progress names: ``pipeline(progress="log" | "tqdm" | "enlighten" | "alive_progress")``.

A ported pipeline names one of dlt's displays instead of passing loadstone's callable; each
name becomes a callable of loadstone's :class:`~loadstone.runtime.load_info.ProgressEvent`:
``"log"`` prints a block per step to stdout now and then, as dlt's log collector does; the
other three draw one bar of rows per step through their own library, an optional extra
(``pip install "loadstone[tqdm]"``). A name whose library is missing fails where the
pipeline is made, with the package to install, as dlt's ``MissingDependencyException``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from loadstone.exceptions import MissingDependencyException
from loadstone.runtime.load_info import ProgressEvent

__all__ = ["PROGRESS_NAMES", "progress_callback"]

ProgressCallback = Callable[[ProgressEvent], None]

#: dlt's names -> (module to import, the package that installs it, what it is for)
_LIBRARIES = {
    "tqdm": ("tqdm", "tqdm", "to display progress bars"),
    "enlighten": ("enlighten", "enlighten", "to display progress bars with room for log lines"),
    "alive_progress": ("alive_progress", "alive-progress", "to display progress bars"),
}
PROGRESS_NAMES = ("log", *_LIBRARIES)


def progress_callback(progress: object, pipeline_name: str) -> ProgressCallback | None:
    """The callable a ``progress=`` argument stands for (a callable stays as it is)."""
    if progress is None or callable(progress):
        return progress
    if progress not in PROGRESS_NAMES:
        raise ValueError(
            f"progress={progress!r}: give a callable of progress events or one of "
            f"{', '.join(PROGRESS_NAMES)}"
        )
    if progress == "log":
        return LogDisplay(pipeline_name)
    module = _import(str(progress))
    return BarDisplay(pipeline_name, _BAR_KINDS[str(progress)](module))


def _import(name: str) -> Any:
    module_name, package, purpose = _LIBRARIES[name]
    try:
        return __import__(module_name)
    except ImportError:
        raise MissingDependencyException(
            f"progress={name!r}", [package], f"We need {package} {purpose}."
        ) from None


class LogDisplay:
    """A block per step (its name, rows, files, time and rate) at its start, every
    ``period`` seconds while it works, and at its end, as dlt's ``"log"`` collector."""

    def __init__(
        self, pipeline_name: str, period: float = 1.0, stream: TextIO | None = None
    ) -> None:
        self.pipeline_name = pipeline_name
        self.period = period
        self.stream = stream
        self._last = 0.0

    def __call__(self, event: ProgressEvent) -> None:
        if event.event not in ("started", "progress", "package_done", "finished"):
            return
        now = time.monotonic()
        if event.event in ("progress", "package_done") and now - self._last < self.period:
            return
        self._last = now
        title = f" {event.step.capitalize()} {self.pipeline_name} "
        rate = event.rows / event.elapsed if event.elapsed > 0 else 0.0
        stream = self.stream or sys.stdout
        stream.write(
            f"{title.center(80, '-')}\n"
            f"Rows: {event.rows} | Files: {event.files} | Time: {event.elapsed:.2f}s | "
            f"Rate: {rate:.2f}/s\n\n"
        )
        stream.flush()


class _Bar:
    """One step's bar of rows in one library: made, moved on, closed."""

    def update(self, rows: int) -> None:  # pragma: no cover - the kinds below
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - the kinds below
        raise NotImplementedError


class BarDisplay:
    """One bar of rows per step, in the library ``make_bar`` draws with."""

    def __init__(self, pipeline_name: str, make_bar: Callable[[str, int], _Bar]) -> None:
        self.pipeline_name = pipeline_name
        self.make_bar = make_bar
        self._bars: dict[str, tuple[_Bar, int]] = {}

    def __call__(self, event: ProgressEvent) -> None:
        if event.event == "started":
            title = f"{event.step.capitalize()} {self.pipeline_name}"
            self._bars[event.step] = (self.make_bar(title, event.input_rows), 0)
        elif event.event in ("progress", "package_done", "finished") and event.step in self._bars:
            bar, shown = self._bars[event.step]
            if event.rows > shown:
                bar.update(event.rows - shown)
                shown = event.rows
            self._bars[event.step] = (bar, shown)
            if event.event == "finished":
                bar.close()
                del self._bars[event.step]


class _TqdmBar(_Bar):
    def __init__(self, tqdm: Any, title: str, total: int) -> None:
        self.bar = tqdm.tqdm(desc=title, total=total or None, unit=" rows")

    def update(self, rows: int) -> None:
        self.bar.update(rows)

    def close(self) -> None:
        self.bar.close()


class _EnlightenBar(_Bar):
    def __init__(self, enlighten: Any, title: str, total: int) -> None:
        self.manager = enlighten.get_manager()
        self.bar = self.manager.counter(desc=title, total=total or None, unit="rows")

    def update(self, rows: int) -> None:
        self.bar.update(rows)

    def close(self) -> None:
        self.bar.close()
        self.manager.stop()


class _AliveBar(_Bar):
    def __init__(self, alive_progress: Any, title: str, total: int) -> None:
        # alive_progress's default stream is the sys.stdout of its import: name today's
        self.context = alive_progress.alive_bar(total or None, title=title, file=sys.stdout)
        self.bar = self.context.__enter__()

    def update(self, rows: int) -> None:
        self.bar(rows)

    def close(self) -> None:
        self.context.__exit__(None, None, None)


#: dlt's names -> a maker of bars from the imported library
_BAR_KINDS: dict[str, Callable[[Any], Callable[[str, int], _Bar]]] = {
    "tqdm": lambda lib: lambda title, total: _TqdmBar(lib, title, total),
    "enlighten": lambda lib: lambda title, total: _EnlightenBar(lib, title, total),
    "alive_progress": lambda lib: lambda title, total: _AliveBar(lib, title, total),
}
