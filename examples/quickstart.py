"""The Python API on the sample data: load ``data/orders.jsonl`` and look at what was loaded.

Run: ``python examples/quickstart.py`` (writes ``quickstart.duckdb`` in the working folder).
The same code runs with dlt by changing the import to ``import dlt``.
"""

from __future__ import annotations

from pathlib import Path

import loadstone as dlt

DATA = Path(__file__).resolve().parent / "data" / "orders.jsonl"


def main() -> None:
    pipeline = dlt.pipeline(pipeline_name="quickstart", destination="duckdb")
    load_info = pipeline.run(DATA, table_name="orders")
    print(load_info)
    for table, rows in pipeline.dataset().row_counts().fetchall():
        print(f"{table}: {rows} rows")
    print(pipeline.default_schema.to_pretty_yaml())


if __name__ == "__main__":
    main()
