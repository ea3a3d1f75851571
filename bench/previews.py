"""Previews benchmark: a run that left 1,000 small text files, rendered in the preview sandbox.

    DATABASE_URL=postgres://... .venv/bin/python bench/previews.py [--files 1000] [--baseline-files 40]

On a database and a media folder of the benchmark's own, a finished run with `--files` small
files (code, markdown, plain text, JSON: what an agent leaves when it writes many notes or
scripts) is given its previews as a run's end gives them (`make_previews`: start a gVisor
sandbox with no network, send the files, render them, copy the renderings out, sanitize and
store each). Measured: the whole post-processing, and how many files were rendered.

Baseline, in the same run: the same files one sandbox round trip each, as previews were made
before batching (`BATCH_FILES = 1`: for every file, copy it in, start the previewer's
interpreter, copy its rendering out), on `--baseline-files` of them; the time for all
`--files` is projected from the per-file cost (one sandbox start plus that many round trips).
Writes bench/results/previews.json.
"""

from __future__ import annotations

import argparse
import json
import os
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
from django.db.models import Q  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.measuring import machine_speed, report_opening  # noqa: E402 - beside this file
from creations.artifacts import previews  # noqa: E402
from creations.artifacts.sniff import sniff_bytes  # noqa: E402
from creations.models import Artifact, Creation, Run, RunStatus  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from sandboxes.docker_runtime import DockerSandbox  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "previews.json"
BENCH_DB_SUFFIX = "_bench_previews"


def small_file(index: int) -> tuple[str, bytes]:
    """One of four kinds of small text an agent leaves, a few hundred bytes each."""
    match index % 4:
        case 0:
            code = f"def step_{index}(rows):\n    return [r * {index} for r in rows]\n"
            return f"scripts/step_{index:04}.py", code.encode()
        case 1:
            note = f"# Note {index}\n\n- a point with **bold** text\n- and a [link](#x)\n"
            return f"notes/note_{index:04}.md", note.encode()
        case 2:
            return f"data/row_{index:04}.json", json.dumps({"id": index, "values": list(range(20))}).encode()
        case _:
            return f"logs/log_{index:04}.txt", "".join(f"{index}:{i} ok\n" for i in range(20)).encode()


def seed_run(owner: User, workspace: Workspace, *, files: int, offset: int) -> list[Artifact]:
    """A finished run with `files` small stored files, classified as ingestion classifies them."""
    creation = Creation.objects.create(workspace=workspace, author=owner, brief=f"{files} small files")
    now = timezone.now() + timedelta(seconds=1)  # after the row's creation, as a run starts
    run = Run.objects.create(
        creation=creation, started_by=owner, status=RunStatus.SUCCEEDED, started_at=now, finished_at=now, steps=1
    )
    made = []
    for index in range(offset, offset + files):
        path, data = small_file(index)
        sniffed = sniff_bytes(data, name=path)
        artifact = Artifact(run=run, path=path, kind=sniffed.kind, size=len(data), content_type=sniffed.content_type)
        artifact.file.save(path.rsplit("/", 1)[-1], ContentFile(data), save=False)
        artifact.save()
        made.append(artifact)
    return made


def rendered(artifacts: list[Artifact]) -> int:
    return (
        Artifact.objects.filter(pk__in=[a.pk for a in artifacts])
        .exclude(Q(rendered="") | Q(rendered__isnull=True))
        .count()
    )


PHASES = {"write_files": "files in", "exec": "previewer", "copy_out": "renderings out"}


def timed_previews(artifacts: list[Artifact], run_id: int, phases: dict[str, float] | None = None) -> float:
    """Seconds for `make_previews`; with `phases`, the seconds spent in each sandbox call added to it
    (the rest: starting the sandbox, reading the files from storage, sanitizing and storing renderings)."""
    originals = {name: getattr(DockerSandbox, name) for name in PHASES}

    def timed(name: str) -> Any:
        def call(self: DockerSandbox, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return originals[name](self, *args, **kwargs)
            finally:
                if phases is not None:
                    phases[PHASES[name]] = phases.get(PHASES[name], 0.0) + time.perf_counter() - started

        return call

    for name in PHASES:
        setattr(DockerSandbox, name, timed(name))
    try:
        started = time.perf_counter()
        previews.make_previews(artifacts, run_id=run_id)
        return time.perf_counter() - started
    finally:
        for name, original in originals.items():
            setattr(DockerSandbox, name, original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--baseline-files", type=int, default=40)
    args = parser.parse_args()
    report = report_opening(files=args.files)
    with tempfile.TemporaryDirectory(prefix="bench-previews-") as media, throwaway_database(BENCH_DB_SUFFIX):
        settings.MEDIA_ROOT = media
        owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
        workspace = Workspace.objects.create(name="bench", slug="bench")
        batched = seed_run(owner, workspace, files=args.files, offset=0)
        one_by_one = seed_run(owner, workspace, files=args.baseline_files, offset=args.files)

        # The baseline first, then the batches: a machine that slows down as it warms counts against them.
        batch_files = previews.BATCH_FILES
        previews.BATCH_FILES = 1
        try:
            baseline_s = timed_previews(one_by_one, one_by_one[0].run_id)
        finally:
            previews.BATCH_FILES = batch_files
        started = time.perf_counter()
        sandbox = previews._start_sandbox(0)
        sandbox_start_s = time.perf_counter() - started
        sandbox.stop()
        phases: dict[str, float] = {}
        batched_s = timed_previews(batched, batched[0].run_id, phases)

        per_file_s = max(0.0, baseline_s - sandbox_start_s) / args.baseline_files
        report["batched"] = {
            "seconds": round(batched_s, 2),
            "rendered": rendered(batched),
            "of": args.files,
            "per_file_ms": round(batched_s / args.files * 1000, 1),
            "phases_s": {name: round(seconds, 2) for name, seconds in phases.items()},
        }
        report["baseline_one_round_trip_per_file"] = {
            "files": args.baseline_files,
            "seconds": round(baseline_s, 2),
            "rendered": rendered(one_by_one),
            "per_file_s": round(per_file_s, 3),
            "projected_seconds_for_all_files": round(sandbox_start_s + per_file_s * args.files, 1),
        }
        report["sandbox_start_s"] = round(sandbox_start_s, 2)
    report["speed_after"] = machine_speed()
    baseline = report["baseline_one_round_trip_per_file"]
    report["speedup"] = round(baseline["projected_seconds_for_all_files"] / max(batched_s, 0.001), 1)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
