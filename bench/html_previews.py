"""HTML previews benchmark: what one page's screenshot costs in the preview sandbox.

    DATABASE_URL=postgres://... .venv/bin/python bench/html_previews.py [--rounds 5]

On a database and a media folder of the benchmark's own, a finished run with one HTML page (a
heading, a paragraph and a canvas its script draws on, as an agent's page has) gets its preview
as a run's end gives it (`make_previews`: a gVisor sandbox with no network, Chromium's screenshot
of the page, the picture stored). Measured per preview: the wall time, and the CPU time of the
sandboxes' cgroup (SANDBOX_CGROUP_PARENT, else Docker's), which is nearly all Chromium's.

Baseline, in the same run, rounds alternating with the previewer as it is: the previewer's
Chromium with its GPU and network services in processes of their own, as it ran before
(`IN_PROCESS_FLAGS` left out). Writes bench/results/html_previews.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
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

from bench.measuring import cpu_snapshot, machine_speed, report_opening, write_results  # noqa: E402 - beside this file
from creations.artifacts import previews  # noqa: E402
from creations.models import Artifact, ArtifactKind, Creation, Run, RunStatus  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "html_previews.json"
BENCH_DB_SUFFIX = "_bench_html_previews"
IN_PROCESS_FLAGS = ('"--in-process-gpu",', '"--enable-features=NetworkServiceInProcess2",')
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
    for flag in IN_PROCESS_FLAGS:
        assert flag in source, f"the previewer no longer passes {flag}"
        source = source.replace(flag, "")
    return source


def one_preview(artifact: Artifact) -> dict[str, float]:
    before = cpu_snapshot({})
    started = time.perf_counter()
    previews.make_previews([artifact], run_id=artifact.run_id)
    seconds = time.perf_counter() - started
    after = cpu_snapshot({})
    artifact.refresh_from_db()
    assert artifact.preview, "the page got no preview"
    return {"seconds": seconds, "sandbox_cpu_s": after.get("sandboxes", 0.0) - before.get("sandboxes", 0.0)}


def summarize(samples: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "previews": len(samples),
        "median_seconds": round(statistics.median(s["seconds"] for s in samples), 2),
        "median_sandbox_cpu_s": round(statistics.median(s["sandbox_cpu_s"] for s in samples), 2),
        "sandbox_cpu_s_each": [round(s["sandbox_cpu_s"], 2) for s in samples],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    report = report_opening()
    as_now = previews.previewer_source
    before_source = previewer_as_before()
    now_samples: list[dict[str, float]] = []
    before_samples: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-html-previews-") as media, throwaway_database(BENCH_DB_SUFFIX):
        settings.MEDIA_ROOT = media
        owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
        workspace = Workspace.objects.create(name="bench", slug="bench")
        for index in range(args.rounds):
            previews.previewer_source = lambda: before_source  # type: ignore[assignment]
            try:
                before_samples.append(one_preview(seed_page(owner, workspace, 2 * index)))
            finally:
                previews.previewer_source = as_now
            now_samples.append(one_preview(seed_page(owner, workspace, 2 * index + 1)))
    report["baseline_separate_processes"] = summarize(before_samples)
    report["now"] = summarize(now_samples)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
