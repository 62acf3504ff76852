"""A package's load running beside its normalize: a thread hands finished files to the
destination while the normalizer works on the later parts.

:class:`OverlapFeed` owns the destination client of one package, its
:class:`~loadstone.destinations.overlap.OverlappedLoad` (the package's open transaction) and
one thread. The normalizer reports finished files through :meth:`OverlapFeed.sink`; the
thread takes whatever has arrived, all of it at once (one insert per table, however many
chunks came meanwhile), and appends it. The thread never commits: :meth:`OverlapFeed.finish`
(the load step, once the package is normalized) joins it and commits with the rest, and
:meth:`OverlapFeed.abort` (a failed normalize) rolls everything back.

If an append fails, the thread stops taking files and the failure is not raised there: the
finish rolls the transaction back and loads the package the ordinary way, which meets the
same failure (if it is the data's) and reports it as any load does.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loadstone.destinations.contract import DestinationClient, LoadRequest
    from loadstone.destinations.overlap import FinishedFiles, OverlappedLoad
    from loadstone.runtime.recorder import StepRecorder

__all__ = ["OverlapFeed"]

#: what tells the thread that no more files come
_END = None


class OverlapFeed:
    """One package's overlapped load (see module docstring)."""

    def __init__(
        self,
        client: DestinationClient,
        load: OverlappedLoad,
        recorder: StepRecorder,
        load_id: str,
    ) -> None:
        self.client = client
        self.load_id = load_id
        self._load = load
        self._recorder = recorder
        self._queue: queue.SimpleQueue[FinishedFiles | None] = queue.SimpleQueue()
        #: the first failure of an append (the finish then loads the ordinary way)
        self.failure: BaseException | None = None
        self._thread = threading.Thread(
            target=self._work, name=f"loadstone-load-{load_id}", daemon=True
        )
        self._thread.start()

    def sink(self, files: FinishedFiles) -> None:
        """The normalizer's report of finished files (``NormalizeContext.on_files``)."""
        self._queue.put(files)

    def _work(self) -> None:
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get())
            ended = _END in batch
            files = [item for item in batch if item is not None]
            if files and self.failure is None:
                try:
                    self._load.append(files, last=ended)
                except BaseException as exc:  # kept for finish: see the module docstring
                    self.failure = exc
                else:
                    count = sum(len(f) for item in files for f in item.tables.values())
                    self._recorder.emit("load", "files_appended", load_id=self.load_id, files=count)
            if ended:
                return

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._queue.put(_END)
            self._thread.join()

    def finish(self, request: LoadRequest) -> None:
        """Commit the package: what the thread appended and everything else."""
        self._stop()
        if self.failure is None:
            self._load.finish(request)
            return
        self._load.abort()
        self.client.load_package(request)

    def abort(self) -> None:
        """Roll the package's transaction back and release the client."""
        try:
            self._stop()
            self._load.abort()
        finally:
            self.client.close()
