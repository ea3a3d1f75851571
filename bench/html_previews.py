"""HTML previews benchmark: what one page's screenshot costs in the preview sandbox.

    DATABASE_URL=postgres://... .venv/bin/python bench/html_previews.py [--rounds 5]

On a database and a media folder of the benchmark's own, a finished run with one HTML page (a
heading, a paragraph and a canvas its script draws on, as an agent's page has) gets its preview
as a run's end gives it (`make_previews`: a gVisor sandbox with no network, Chromium's screenshot
of the page, the picture stored). Measured per preview: the wall time, and the CPU time of the
sandboxes' cgroups (SANDBOX_OFFLINE_CGROUP_PARENT's and the agents', else Docker's), nearly all Chromium's.

Baseline, in the same run, rounds alternating with the previewer as it is: the whole browser in its
headless mode, as the image had it before (Debian's `chromium`, `/usr/lib/chromium/chromium`), instead
of Chromium's headless shell. The image has the shell only, so the baseline's sandboxes run an image
made for the benchmark on top of the sandbox image, with Debian's `chromium` installed (from Debian's
mirrors: the build needs them), and removed at the end.

Under load (`--busy N`, default 2: N processes spinning beside it, as busy web processes or test
workers would): the same screenshot with the preview sandbox in its own parent cgroup
(SANDBOX_OFFLINE_CGROUP_PARENT, half a process's weight) against the agents' low-weight group, where
preview sandboxes were before, rounds alternating. A preview that did not come within its tool's time
limit (PREVIEW_TIMEOUT) counts as missing. Writes bench/results/html_previews.json.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.measuring import busy, cpu_snapshot, machine_speed, report_opening, write_results  # noqa: E402
from creations.artifacts import previews  # noqa: E402
from creations.models import Artifact, ArtifactKind, Creation, Run, RunStatus  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from sandboxes.cpu_priority import TIERS, configured, current_engine, prepare_sandbox_cgroup  # noqa: E402
from sandboxes.engine_client import engine_client  # noqa: E402
from sandboxes.image import sandbox_image_tag  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "html_previews.json"
BENCH_DB_SUFFIX = "_bench_html_previews"
WHOLE_BROWSER = ('CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"', 'CHROMIUM = "/usr/lib/chromium/chromium"')
WHOLE_BROWSER_IMAGE = "atelier-bench-whole-chromium:latest"
WHOLE_BROWSER_DOCKERFILE = """FROM {image}
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*
USER 1000:1000
"""
PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>Report</title></head>
<body><h1>Quarterly report</h1><p>Sales by region, drawn by the page's script.</p>
<canvas id="chart" width="480" height="240"></canvas>
<script>
const ctx = document.getElementById("chart").getContext("2d");
ctx.fillStyle = "#36c";
[120, 80, 200, 150].forEach((value, i) => ctx.fillRect(20 + i * 110, 240 - value, 80, value));
</script></body></html>
"""


def seed_page(owner: User, workspace: Workspace, index: int) -> Artifact:
    creation = Creation.objects.create(workspace=workspace, author=owner, brief=f"a report page {index}")
    now = timezone.now() + timedelta(seconds=1)
    run = Run.objects.create(
        creation=creation, started_by=owner, status=RunStatus.SUCCEEDED, started_at=now, finished_at=now, steps=1
    )
    artifact = Artifact(run=run, path="report.html", kind=ArtifactKind.HTML, size=len(PAGE), content_type="text/html")
    artifact.file.save("report.html", ContentFile(PAGE), save=False)
    artifact.save()
    return artifact


def previewer_as_before() -> str:
    source = previews.previewer_source()
    now, before = WHOLE_BROWSER
    assert now in source, "the previewer no longer starts Chromium's headless shell"
    return source.replace(now, before)


@contextlib.contextmanager
def image_with_the_whole_browser() -> Iterator[str]:
    """The sandbox image with Debian's `chromium` on top, for the baseline's sandboxes; removed after."""
    client = engine_client(timeout=900)
    dockerfile = WHOLE_BROWSER_DOCKERFILE.format(image=sandbox_image_tag()).encode()
    print("building the baseline's image (the sandbox image with Debian's chromium)...", flush=True)
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=WHOLE_BROWSER_IMAGE, rm=True, forcerm=True)
    try:
        yield WHOLE_BROWSER_IMAGE
    finally:
        client.images.remove(WHOLE_BROWSER_IMAGE, force=True)
        client.close()


def one_preview(artifact: Artifact, *, must: bool = True) -> dict[str, float]:
    before = cpu_snapshot({})
    started = time.perf_counter()
    previews.make_previews([artifact], run_id=artifact.run_id)
    seconds = time.perf_counter() - started
    after = cpu_snapshot({})
    artifact.refresh_from_db()
    assert artifact.preview or not must, "the page got no preview"
    return {
        "seconds": seconds,
        "sandbox_cpu_s": after.get("sandboxes", 0.0) - before.get("sandboxes", 0.0),
        "missing": 0.0 if artifact.preview else 1.0,
    }


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "previews": len(samples),
        "missing": int(sum(s["missing"] for s in samples)),
        "median_seconds": round(statistics.median(s["seconds"] for s in samples), 2),
        "seconds_each": [round(s["seconds"], 2) for s in samples],
        "median_sandbox_cpu_s": round(statistics.median(s["sandbox_cpu_s"] for s in samples), 2),
        "sandbox_cpu_s_each": [round(s["sandbox_cpu_s"], 2) for s in samples],
    }


def prepare_groups() -> dict[str, Any]:
    """Both tiers' groups made and weighed, as a worker does as it starts."""
    engine = current_engine()
    if engine is None:
        raise SystemExit("Docker does not answer: no sandbox can be measured.")
    found = {}
    for tier in TIERS:
        status = prepare_sandbox_cgroup(configured(tier), engine, tier=tier)
        print(f"measuring with: {status.summary()}", flush=True)
        found[tier.setting_name] = status.record()
    return found


def under_load(owner: User, workspace: Workspace, rounds: int, processes: int) -> dict[str, Any]:
    """The screenshot in the previews' own group against the agents' group, both with `processes` spinning."""
    own_group = settings.SANDBOX_OFFLINE_CGROUP_PARENT
    in_own: list[dict[str, float]] = []
    in_agents: list[dict[str, float]] = []
    with busy(processes):
        for index in range(rounds):
            settings.SANDBOX_OFFLINE_CGROUP_PARENT = settings.SANDBOX_CGROUP_PARENT
            try:
                in_agents.append(one_preview(seed_page(owner, workspace, 1000 + 2 * index), must=False))
            finally:
                settings.SANDBOX_OFFLINE_CGROUP_PARENT = own_group
            in_own.append(one_preview(seed_page(owner, workspace, 1001 + 2 * index), must=False))
    return {
        "busy_processes": processes,
        "baseline_in_the_agents_group": summarize(in_agents),
        "now_in_their_own_group": summarize(in_own),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="processes spinning beside the previews under load")
    args = parser.parse_args()
    report = report_opening()
    report["cpu_priority"] = prepare_groups()
    as_now = previews.previewer_source
    before_source = previewer_as_before()
    now_samples: list[dict[str, float]] = []
    before_samples: list[dict[str, float]] = []
    image_now = settings.SANDBOX_IMAGE
    with (
        tempfile.TemporaryDirectory(prefix="bench-html-previews-") as media,
        throwaway_database(BENCH_DB_SUFFIX),
        image_with_the_whole_browser() as image_before,
    ):
        settings.MEDIA_ROOT = media
        owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
        workspace = Workspace.objects.create(name="bench", slug="bench")
        for index in range(args.rounds):
            previews.previewer_source = lambda: before_source  # type: ignore[assignment]
            settings.SANDBOX_IMAGE = image_before
            try:
                before_samples.append(one_preview(seed_page(owner, workspace, 2 * index)))
            finally:
                previews.previewer_source = as_now
                settings.SANDBOX_IMAGE = image_now
            now_samples.append(one_preview(seed_page(owner, workspace, 2 * index + 1)))
        report["baseline_the_whole_browser"] = summarize(before_samples)
        report["now"] = summarize(now_samples)
        if args.busy:
            report["under_load"] = under_load(owner, workspace, args.rounds, args.busy)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
