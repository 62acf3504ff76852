"""Write ``examples/data/orders.jsonl``: a small synthetic shop dataset for trying loadstone.

The data is made up (seeded, so every run writes the same file) and shaped like real API
output: nested objects (``customer.address``), lists of objects (``items``, each with its
own list of ``discounts``), lists of scalars (``tags``), ISO timestamps, nulls, and a field
whose type changes between rows (``customer.address.zip``: a number, but text for London)
so that the load shows nested tables and a variant column.

Run: ``python examples/make_orders.py`` (writes next to this file, in ``data/``).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

ROWS = 200
PRODUCTS = [
    ("SKU-100", "Espresso beans 1kg", 18.5),
    ("SKU-101", "Grinder", 89.0),
    ("SKU-102", "Milk jug", 12.25),
    ("SKU-103", "Paper filters", 3.99),
    ("SKU-104", "Kettle", 45.0),
    ("SKU-105", "Tamper", 21.0),
]
CITIES = ["Berlin", "Lisbon", "Warsaw", "Austin", "Osaka", "Nairobi"]
TAGS = ["gift", "express", "first-order", "wholesale", "repeat"]


def _address(rng: random.Random, number: int) -> dict[str, object]:
    """Zip codes are numbers, except British ones (text): those go to ``zip__v_text``."""
    if number % 9 == 5:
        return {"city": "London", "zip": f"SW{rng.randint(1, 9)}A {rng.randint(1, 9)}AA"}
    return {"city": rng.choice(CITIES), "zip": rng.randint(10000, 99999)}


def make_order(rng: random.Random, number: int, start: dt.datetime) -> dict[str, object]:
    placed = start + dt.timedelta(minutes=rng.randint(0, 60 * 24 * 30))
    items = []
    for line in range(rng.randint(1, 4)):
        sku, name, price = rng.choice(PRODUCTS)
        item: dict[str, object] = {
            "line": line + 1,
            "sku": sku,
            "name": name,
            "quantity": rng.randint(1, 5),
            "unitPrice": price,
        }
        if rng.random() < 0.3:
            item["discounts"] = [
                {"code": f"D{rng.randint(10, 99)}", "percent": rng.choice([5, 10, 15])}
                for _ in range(rng.randint(1, 2))
            ]
        items.append(item)
    order: dict[str, object] = {
        "orderId": 1000 + number,
        "status": rng.choice(["paid", "shipped", "delivered", "refunded"]),
        "placedAt": placed.isoformat().replace("+00:00", "Z"),
        "customer": {
            "id": rng.randint(1, 60),
            "email": f"customer{rng.randint(1, 60)}@example.com",
            "address": _address(rng, number),
        },
        "items": items,
        "tags": rng.sample(TAGS, rng.randint(0, 2)),
        "total": round(sum(i["quantity"] * i["unitPrice"] for i in items), 2),  # type: ignore[operator]
        "note": None if rng.random() < 0.7 else "leave at the door",
    }
    if rng.random() < 0.25:
        # mostly a code, sometimes a number: the number goes to a variant column
        order["coupon"] = f"WELCOME{rng.randint(1, 9)}" if number % 7 else rng.randint(1, 50)
    return order


def main() -> None:
    rng = random.Random(20260101)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    target = Path(__file__).resolve().parent / "data" / "orders.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        for number in range(ROWS):
            handle.write(json.dumps(make_order(rng, number, start), separators=(",", ":")) + "\n")
    print(f"wrote {ROWS} orders to {target}")


if __name__ == "__main__":
    main()
