"""Bad records: lines that cannot be normalized, by the ``on_bad_record`` policy.

``fail`` stops the chunk at the first one (the driver names file and line); ``skip`` counts
them; ``quarantine`` also keeps each one's line, cause and raw text, and the driver writes
them into the quarantine table (:data:`~loadstone.normalizers.contract.BAD_RECORDS_TABLE`).
What makes a line bad is :mod:`.json_lines`' business.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadstone.normalizers.contract import BAD_RECORDS_TABLE, TableOutput
from loadstone.plugins.normalizers.relational.chunk_plan import chunk_first_lines
from loadstone.plugins.normalizers.relational.facts import TaskError
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.plugins.normalizers.relational.json_lines import BadLine
from loadstone.plugins.normalizers.relational.task import Chunk, TaskFailure

#: a quarantined line: (line in the chunk, the cause, the raw text)
BadLineRecord = tuple[int, str, str]


class BadRecords:
    """The bad lines of one task, as its policy keeps them."""

    __slots__ = ("count", "lines", "policy")

    def __init__(self, policy: str) -> None:
        self.policy = policy
        #: quarantined lines (``quarantine`` only)
        self.lines: list[BadLineRecord] = []
        #: every bad line met, whatever the policy
        self.count = 0

    def record(self, number: int, error: BadLine, raw: bytes) -> None:
        """Line ``number`` is bad: fail the task, or count (and quarantine) it."""
        self.count += 1
        if self.policy == "fail":
            raise TaskFailure(TaskError("bad_record", line=number, message=str(error)))
        if self.policy == "quarantine":
            self.lines.append((number, str(error), raw.decode("utf-8", "replace").rstrip("\r")))


def write_bad_records(
    quarantined: list[tuple[int, BadLineRecord]], chunks: Sequence[Chunk], out_dir: Path
) -> TableOutput:
    """The quarantine table of a package: (chunk index, bad line) -> file, line, error, raw."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    firsts = chunk_first_lines(chunks)
    rows_file = [chunks[i].display for i, _ in quarantined]
    rows_line = [firsts[i] + b[0] - 1 for i, b in quarantined]
    table = pa.table(
        {
            "file": pa.array(rows_file, pa.string()),
            "line": pa.array(rows_line, pa.int64()),
            "error": pa.array([b[1] for _, b in quarantined], pa.string()),
            "raw": pa.array([b[2] for _, b in quarantined], pa.string()),
        }
    )
    folder = out_dir / safe_folder(BAD_RECORDS_TABLE)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bad-records.parquet"
    pq.write_table(table, path)
    return TableOutput(folder, len(quarantined), (path,))
