"""Prints what dlt.common.json and dlt.common.utils give for values a pipeline writes: run as
``python tests/common_helpers_program.py dlt`` under dlt 1.31 (its output is
``tests/fixtures/import_paths/common_helpers_dlt.txt``) and with ``loadstone`` by
``tests/test_dlt_common_helpers.py``."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import io
import sys
import uuid

import numpy as np
import pandas as pd
import pendulum
import pydantic

mod = sys.argv[1]
json = __import__(f"{mod}.common", fromlist=["json"]).json
utils = __import__(f"{mod}.common.utils", fromlist=["x"])


class E(enum.Enum):
    A = "a"


@dataclasses.dataclass
class D:
    x: int


class M(pydantic.BaseModel):
    x: int


vals = [
    np.int64(5),
    pd.Timestamp("2024-01-01", tz="UTC"),
    datetime.timedelta(hours=1),
    E.A,
    D(1),
    M(x=1),
    frozenset([1]),
    {1, 2},
    object(),
    decimal.Decimal("NaN"),
    decimal.Decimal("1.50"),
    b"\x00a",
    bytearray(b"ab"),
    datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    datetime.datetime(2024, 1, 1, 1, 2, 3, 456789),
    datetime.time(1, 2, 3, 4),
    datetime.date(2024, 1, 2),
    uuid.UUID(int=5),
    pendulum.datetime(2024, 1, 1),
    float("nan"),
    2**70,
    {1: 2, None: 3},
    (1, 2),
]
for v in vals:
    try:
        print(type(v).__name__, repr(json.dumps(v)))
    except Exception as e:
        print(type(v).__name__, "ERR", type(e).__name__, e)
print(
    json.dumps(
        {"d": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), "b": 1, "a": [1]},
        sort_keys=True,
        pretty=True,
        utc_z=True,
    )
)
print(json.dumps({"d": datetime.datetime(2024, 1, 1)}, datetime_encoder=lambda d: "X"))
print(json.loads('{"a": 1}'), json.loadb(b"[1]"))
f = io.BytesIO()
json.dump({"a": 1}, f, pretty=True)
print(f.getvalue())
f.seek(0)
print(json.load(f))
print(
    utils.digest128("abc"),
    utils.digest128("abc", 10),
    utils.digest256("abc"),
    utils.digest128("ünï"),
    len(utils.uniq_id()),
    len(utils.uniq_id(8)),
    len(utils.uniq_id_base64()),
)
