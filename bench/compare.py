"""Compare benchmark: two versions of a 4-megapixel PNG and of a 1 MB text file, compared in the
preview sandbox, beside the preview sandbox making a plain preview of the same PNG (the baseline).

    DATABASE_URL=postgres://... .venv/bin/python bench/compare.py [--rounds 3]

Each round, on a database of the benchmark's own:
- baseline: `make_previews` of the newer PNG (start a gVisor sandbox, copy the file in, decode and
  thumbnail it, copy the preview out, stop);
- pixels: `comparison_compute` of the two PNGs (start, copy both in, decode both, count the changed
  pixels, draw the overlay, copy it out, keep it, stop);
- lines: `comparison_compute` of the two text files (same, with a line diff);
- sandbox start+stop: what each of the three pays before its work, measured alone;
- in the sandbox: what the differ itself took for each pair, by its own clock (decoding, counting,
  drawing; diffing), the rest being the sandbox, copies in and out, and storage;
- second look: `run_comparison` once the details are kept, from storage (a process that has not
  read them yet) and from the process cache.
The three sandbox measurements alternate within a round, so a slow moment of the machine falls on
all of them. Writes bench/results/compare.json.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.utils import timezone  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from bench.measuring import machine_speed  # noqa: E402 - beside this file
from creations.artifacts.previews import make_previews  # noqa: E402
from creations.artifacts.sniff import sniff_bytes  # noqa: E402
from creations.compare.differ import DifferSession  # noqa: E402
from creations.compare.selectors import comparison_files, run_comparison  # noqa: E402
from creations.compare.services import comparison_compute  # noqa: E402
from creations.models import Artifact, Creation, Run, RunStatus  # noqa: E402  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from sandboxes.offline import start_offline_sandbox  # noqa: E402
from workspaces.models import Workspace  # noqa: E402
from workspaces.services import workspace_create  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "compare.json"
BENCH_DB_SUFFIX = "_bench_compare"
WIDTH, HEIGHT = 2400, 1700  # 4.08 megapixels
TEXT_BYTES = 1024 * 1024


def pictures() -> tuple[bytes, bytes]:
    """A poster-like picture (gradient, shapes, a band of noise so it does not compress to nothing)
    and the same with one region repainted."""
    rng = random.Random(7)
    image = Image.linear_gradient("L").resize((WIDTH, HEIGHT)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y = rng.randrange(WIDTH), rng.randrange(HEIGHT)
        draw.ellipse((x, y, x + rng.randrange(40, 400), y + rng.randrange(40, 400)), fill=(rng.randrange(256), 90, 200))
    image.paste(Image.effect_noise((WIDTH, 200), 60).convert("RGB"), (0, HEIGHT - 200))
    older = io.BytesIO()
    image.save(older, format="PNG")
    ImageDraw.Draw(image).rectangle((1000, 500, 1399, 799), fill="#ffffff")
    newer = io.BytesIO()
    image.save(newer, format="PNG")
    return older.getvalue(), newer.getvalue()


def texts() -> tuple[bytes, bytes]:
    """1 MB of report lines, and the same with one line in a hundred rewritten."""
    rng = random.Random(11)
    lines: list[str] = []
    size = 0
    while size < TEXT_BYTES:
        lines.append(
            f"{len(lines):06d} {rng.choice(['north', 'south', 'east', 'west'])} sales {rng.random():.6f} units"
        )
        size += len(lines[-1]) + 1
    older = ("\n".join(lines) + "\n").encode()
    for i in range(0, len(lines), 100):
        lines[i] = f"{i:06d} rewritten in the second version, with a longer line than before"
    newer = ("\n".join(lines) + "\n").encode()
    return older, newer


def two_versions(*, workspace: Workspace, author: User, name: str, older: bytes, newer: bytes) -> tuple[Run, Run]:
    """A creation whose first version left `older` as the file `name` and whose second left `newer`,
    both finished, their artifacts stored and classified as ingestion does."""
    creation = Creation.objects.create(workspace=workspace, author=author, brief=f"two versions of {name}")
    runs = []
    for data in (older, newer):
        now = timezone.now()
        run = Run.objects.create(
            creation=creation, started_by=author, status=RunStatus.SUCCEEDED, started_at=now, finished_at=now, steps=1
        )
        sniffed = sniff_bytes(data[: 64 * 1024], name=name)
        artifact = Artifact(
            run=run,
            path=name,
            kind=sniffed.kind,
            size=len(data),
            content_type=sniffed.content_type,
            sha256=hashlib.sha256(data).hexdigest(),
        )
        artifact.file.save(name, ContentFile(data), save=False)
        artifact.save()
        runs.append(run)
    return runs[0], runs[1]


def sandbox_start_stop() -> None:
    """What every measurement below pays before its work: a fresh offline gVisor sandbox, then its removal."""
    start_offline_sandbox(
        labels={"atelier.bench": "compare"},
        purpose="bench",
        memory_bytes=settings.PREVIEW_MEMORY_BYTES,
        scratch_bytes=64 * 1024 * 1024,
        max_in_bytes=1024,
        max_out_bytes=1024,
    ).stop()


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def in_sandbox(pair: tuple[Run, Run]) -> float:
    """The differ's own time for the pair's changed file, in a sandbox of its own."""
    (item,) = comparison_files(run_a=pair[0], run_b=pair[1]).changed
    with DifferSession(label="bench") as session:
        compared = session.compare(*item.versions, item.plan)
    assert compared is not None, "the differ made nothing"
    return compared.seconds


def forget_comparisons(media_root: Path) -> None:
    cache.clear()
    shutil.rmtree(media_root / "derived", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    speed = machine_speed()
    media_root = Path(tempfile.mkdtemp(prefix="atelier-bench-compare-"))
    settings.MEDIA_ROOT = str(media_root)
    png_a, png_b = pictures()
    text_a, text_b = texts()
    megabytes = f"{len(png_a) / 1e6:.1f} MB and {len(png_b) / 1e6:.1f} MB"
    print(f"PNGs: {WIDTH}x{HEIGHT}, {megabytes}; texts {len(text_a) / 1e6:.2f} MB and {len(text_b) / 1e6:.2f} MB")
    samples: dict[str, list[float]] = {
        "sandbox start+stop": [],
        "preview (baseline)": [],
        "compare pixels": [],
        "compare lines": [],
    }
    look: dict[str, list[float]] = {
        "in the sandbox: pixels": [],
        "in the sandbox: lines": [],
        "second look, from storage": [],
        "second look, cached": [],
    }
    try:
        with throwaway_database(BENCH_DB_SUFFIX):
            owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
            workspace = workspace_create(name="Bench", owner=owner)
            pair_png = two_versions(workspace=workspace, author=owner, name="poster.png", older=png_a, newer=png_b)
            pair_text = two_versions(workspace=workspace, author=owner, name="sales.txt", older=text_a, newer=text_b)
            newer_png: Artifact = pair_png[1].artifacts.get()

            def compare(pair: tuple[Run, Run]) -> None:
                made = comparison_compute(run_a_id=pair[0].pk, run_b_id=pair[1].pk)
                assert made == 1, "the comparison was not made"

            for round_number in range(args.rounds):
                forget_comparisons(media_root)
                samples["sandbox start+stop"].append(timed(sandbox_start_stop))
                samples["preview (baseline)"].append(timed(lambda: make_previews([newer_png], run_id=pair_png[1].pk)))
                samples["compare pixels"].append(timed(lambda: compare(pair_png)))
                samples["compare lines"].append(timed(lambda: compare(pair_text)))
                for name, pair in (("in the sandbox: pixels", pair_png), ("in the sandbox: lines", pair_text)):
                    look[name].append(in_sandbox(pair))
                cache.clear()
                look["second look, from storage"].append(
                    timed(lambda: run_comparison(run_a=pair_png[0], run_b=pair_png[1], user=owner))
                )
                look["second look, cached"].append(
                    timed(lambda: run_comparison(run_a=pair_png[0], run_b=pair_png[1], user=owner))
                )
                print(
                    f"round {round_number + 1}: "
                    + ", ".join(f"{name} {values[-1]:.2f} s" for name, values in samples.items())
                )
            pixels = run_comparison(run_a=pair_png[0], run_b=pair_png[1], user=owner).changed[0].detail
            lines = run_comparison(run_a=pair_text[0], run_b=pair_text[1], user=owner).changed[0].detail
    finally:
        shutil.rmtree(media_root, ignore_errors=True)
    medians = {name: round(statistics.median(values), 3) for name, values in {**samples, **look}.items()}
    baseline = medians["preview (baseline)"]
    print()
    print(f"{'':28} {'median s':>9} {'vs preview':>11}")
    for name, value in medians.items():
        print(f"{name:28} {value:9.3f} {value / baseline:10.2f}x")
    print(f"pixels: {pixels.pixels if pixels else None}")
    if lines and lines.lines:
        summary = {k: v for k, v in lines.lines.model_dump().items() if k != "diff"}
        print(f"lines: {summary}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python_loop_seconds": speed},
                "rounds": args.rounds,
                "png": {"width": WIDTH, "height": HEIGHT, "bytes": [len(png_a), len(png_b)]},
                "text_bytes": [len(text_a), len(text_b)],
                "samples_seconds": {**samples, **look},
                "median_seconds": medians,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
