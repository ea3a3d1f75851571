"""The three sample suites the platform ships, written for it (not any paper's data sets) and
labelled as samples: computation where a computer helps, questions about a long document given as
an input file, and formatting instructions.

The long document (about 300 KB: a warehouse's delivery log) is generated here, the same bytes
every time (a seeded generator), and its expected answers are counted from the lines generated,
so the repository keeps a few dozen lines of code instead of the text.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).parent
LOG_NAME = "deliveries.txt"
LOG_TARGET_BYTES = 300 * 1024
WAREHOUSES = ("Oslo", "Lima", "Porto", "Kyoto", "Tunis", "Quito", "Perth", "Turku")
GOODS = ("pears", "apples", "plums", "quinces", "apricots", "figs", "cherries", "lemons")
SUPPLIERS = (
    "Halden Farms",
    "Bergen Orchards",
    "Sogn Growers",
    "Vik Fruit",
    "Lærdal Cooperative",
    "Hardanger & Sons",
    "Stryn Valley",
    "Voss Estates",
)
NEEDLE = "Note from the night shift: the cold room's new door code is 4471-ZEBRA."


@dataclass(frozen=True)
class Sample:
    name: str
    data: bytes
    zip_data: bytes | None = None


def delivery_log() -> tuple[bytes, list[dict[str, object]]]:
    """The log's text, and the suite's tasks about it (their answers counted from it)."""
    rng = random.Random(20260314)  # noqa: S311 - the same text every time is the point
    day = date(2025, 1, 1)
    lines: list[str] = []
    crates: Counter[tuple[str, str]] = Counter()
    by_supplier: Counter[str] = Counter()
    visits: Counter[str] = Counter()
    size = 0
    number = 0
    while size < LOG_TARGET_BYTES:
        number += 1
        day += timedelta(days=rng.random() < 0.2)
        warehouse, goods, supplier = rng.choice(WAREHOUSES), rng.choice(GOODS), rng.choice(SUPPLIERS)
        count = rng.randint(1, 60)
        crates[warehouse, goods] += count
        by_supplier[supplier] += count
        visits[warehouse] += 1
        line = (
            f"{day.isoformat()} · delivery {number:05d} · warehouse {warehouse} received {count} crates of "
            f"{goods} from {supplier}; signed by clerk {rng.randint(100, 999)}, bay {rng.randint(1, 40)}."
        )
        lines.append(line)
        size += len(line.encode()) + 1
    lines.insert(len(lines) * 2 // 3, NEEDLE)
    text = "Delivery log of the northern fruit depots, one delivery per line.\n\n" + "\n".join(lines) + "\n"
    top_supplier = by_supplier.most_common(1)[0][0]
    busiest = visits.most_common(1)[0][0]
    look_in = f"The file /testbed/input/{LOG_NAME} is a delivery log."
    tasks: list[dict[str, object]] = [
        {
            "id": "pears-to-oslo",
            "prompt": f"{look_in} How many crates of pears did warehouse Oslo receive in total?",
            "rule": "number",
            "expected": str(crates["Oslo", "pears"]),
        },
        {
            "id": "figs-to-kyoto",
            "prompt": f"{look_in} How many crates of figs did warehouse Kyoto receive in total?",
            "rule": "number",
            "expected": str(crates["Kyoto", "figs"]),
        },
        {
            "id": "deliveries-to-lima",
            "prompt": f"{look_in} How many deliveries did warehouse Lima receive?",
            "rule": "number",
            "expected": str(visits["Lima"]),
        },
        {
            "id": "all-deliveries",
            "prompt": f"{look_in} How many deliveries does it record in all?",
            "rule": "number",
            "expected": str(number),
        },
        {
            "id": "top-supplier",
            "prompt": f"{look_in} Which supplier delivered the most crates overall? Reply with its name only.",
            "rule": "exact",
            "expected": top_supplier,
        },
        {
            "id": "busiest-warehouse",
            "prompt": f"{look_in} Which warehouse received the most deliveries? Reply with its name only.",
            "rule": "exact",
            "expected": busiest,
        },
        {
            "id": "door-code",
            "prompt": f"{look_in} Somewhere in it is a note that is not a delivery. What door code does it give?",
            "rule": "regex",
            "expected": r"\b4471-ZEBRA\b",
        },
        {
            "id": "last-delivery-date",
            "prompt": f"{look_in} On what date (YYYY-MM-DD) was the last delivery?",
            "rule": "regex",
            "expected": rf"\b{day.isoformat()}\b",
        },
    ]
    for task in tasks:
        task["files"] = [LOG_NAME]
    return text.encode(), tasks


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def sample_suites() -> list[Sample]:
    log, tasks = delivery_log()
    document_suite = "\n".join(json.dumps(task, ensure_ascii=False) for task in tasks).encode()
    return [
        Sample("Sample: computation where a computer helps", (HERE / "computation.jsonl").read_bytes()),
        Sample("Sample: questions about a 300 KB delivery log", document_suite, _zip({LOG_NAME: log})),
        Sample("Sample: formatting instructions", (HERE / "formatting.jsonl").read_bytes()),
    ]
