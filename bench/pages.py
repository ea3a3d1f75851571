"""Pages benchmark: big galleries and big runs stay fast.

    DATABASE_URL=postgres://... .venv/bin/python bench/pages.py [--requests 40]

Seeds a PostgreSQL database of its own with a big workspace (10,000
artifacts, a finished run of 5,000 events) and, as the baseline measured in
the same run, a small one (100 artifacts, a run of 40 events), then requests
each page as a signed-in owner through Django's test client (the whole
request: middleware, views, templates; no network) and prints p50/p95 and
the query count per page at both sizes. Target: p95 <= 50 ms on every page
at both sizes.

Then a run that left 1,000 small text files (stored, with their renderings,
in a media folder of the benchmark's own): its page and its creation's page
(which shows documents inline), a page of files at a time as served, and as
the baseline in the same run, every file on one page as they were before
(RUN_PAGE_ARTIFACTS = 1,000). Target: under 100 ms and 100 KB. Writes
bench/results/pages.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402
from django.utils import timezone  # noqa: E402

from creations.models import Artifact, ArtifactKind, Creation, Run, RunEvent, RunStatus, Visibility  # noqa: E402
from devstack.databases import throwaway_database  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "pages.json"
BENCH_DB_SUFFIX = "_bench_pages"
TARGET_P95_MS = 50.0
MANY_FILES = 1000
MANY_FILES_TARGET_MS, MANY_FILES_TARGET_KB = 100.0, 100.0
KINDS = [ArtifactKind.IMAGE, ArtifactKind.MAP, ArtifactKind.VIDEO, ArtifactKind.AUDIO, ArtifactKind.PDF]


def step_events(step: int) -> list[tuple[str, dict[str, Any]]]:
    """The events of one step of a shell-running agent: eight, as a real run stores them."""
    call_id = f"call-{step}"
    output = "".join(f"line {i} of the output of step {step}\n" for i in range(40))
    return [
        ("step_started", {"step": step, "remaining": 1000 - step}),
        ("assistant_delta", {"step": step, "text": f"Step {step}: looking at the files, then "}),
        ("assistant_message", {"step": step, "content": f"Step {step}: looking at the files.", "reasoning": None}),
        ("tool_call", {"step": step, "call_id": call_id, "name": "execute_bash", "arguments": {"command": "ls -l"}}),
        ("tool_output_delta", {"step": step, "call_id": call_id, "text": output}),
        (
            "tool_result",
            {
                "step": step,
                "call_id": call_id,
                "name": "execute_bash",
                "output": output,
                "is_error": False,
                "exit_code": 0,
                "duration": 0.05,
            },
        ),
        (
            "usage",
            {"step": step, "prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940, "estimated": False},
        ),
        ("tool_output_delta", {"step": step, "call_id": call_id, "text": ""}),
    ]


def seed_run(creation: Creation, *, events: int) -> Run:
    started = timezone.now() + timedelta(seconds=1)
    steps = max(1, events // 8)
    run = Run.objects.create(
        creation=creation,
        status=RunStatus.SUCCEEDED,
        reason="The agent submitted its work.",
        started_at=started,
        finished_at=started + timedelta(minutes=10),
        steps=steps,
        prompt_tokens=900 * steps,
        completion_tokens=40 * steps,
    )
    items = [item for step in range(1, steps + 1) for item in step_events(step)][:events]
    items.append(("finished", {"reason": "submitted", "steps": steps, "message": "Done."}))
    RunEvent.objects.bulk_create(
        [RunEvent(run=run, seq=seq, kind=kind, payload=payload) for seq, (kind, payload) in enumerate(items, 1)],
        batch_size=2000,
    )
    Run.objects.filter(pk=run.pk).update(last_seq=len(items))
    return run


def seed_workspace(owner: User, *, slug: str, artifacts: int, run_events: int) -> dict[str, Any]:
    """A workspace with `artifacts` artifacts over runs of 20 files, a tenth of them public, and one big run."""
    workspace = Workspace.objects.create(name=slug, slug=slug)
    workspace.memberships.create(user=owner, role="owner")
    now = timezone.now()
    per_run = 20
    runs = []
    for index in range(max(1, artifacts // per_run)):
        visibility = Visibility.PUBLIC if index % 10 == 0 else Visibility.WORKSPACE
        creation = Creation.objects.create(
            workspace=workspace, author=owner, brief=f"brief {index}", title=f"Creation {index}", visibility=visibility
        )
        runs.append(Run.objects.create(creation=creation, status=RunStatus.SUCCEEDED, finished_at=now, steps=3))
    Artifact.objects.bulk_create(
        [
            Artifact(
                run=run,
                workspace=workspace,
                path=f"file-{i}.png",
                kind=KINDS[i % len(KINDS)],
                size=1000 + i,
                content_type="image/png",
                file=f"artifacts/{run.pk}/{i}.png",
            )
            for run in runs
            for i in range(per_run)
        ][:artifacts],
        batch_size=2000,
    )
    big = Creation.objects.create(workspace=workspace, author=owner, brief="a long run", title="A long run")
    run = seed_run(big, events=run_events)
    Artifact.objects.create(
        run=run, path="report.pdf", kind=ArtifactKind.PDF, size=10, content_type="application/pdf", file="x.pdf"
    )
    return {"workspace": workspace, "run": run, "creation": big, "artifact": run.artifacts.get()}


def seed_many_files(owner: User, *, files: int) -> Run:
    """A finished run that left `files` small text files, stored with the renderings ingestion makes."""
    workspace = Workspace.objects.create(name="many", slug="many")
    workspace.memberships.create(user=owner, role="owner")
    creation = Creation.objects.create(workspace=workspace, author=owner, brief="many notes", title="Many notes")
    run = seed_run(creation, events=40)
    for index in range(files):
        text = f"note {index}: the figures of step {index} are in data/{index}.csv\n"
        path = f"notes/note-{index:04}.txt"
        artifact = Artifact(run=run, path=path, kind=ArtifactKind.TEXT, size=len(text), content_type="text/plain")
        artifact.file.save("note.txt", ContentFile(text.encode()), save=False)
        rendering = f'<div class="highlight"><pre><span></span><code>{text}</code></pre></div>'
        artifact.rendered.save("document.html", ContentFile(rendering.encode()), save=False)
        artifact.save()
    return run


def many_files_pages(run: Run) -> dict[str, str]:
    return {
        "run page": reverse("run_detail", args=[run.pk]),
        "creation page": reverse("creation_detail", args=[run.creation_id]),
    }


def pages(seeded: dict[str, Any], client: Client) -> dict[str, str]:
    workspace, run = seeded["workspace"], seeded["run"]
    gallery = reverse("workspace_gallery", args=[workspace.slug])
    first = client.get(gallery)
    older = first.context["next_page_url"]  # the "Older" link, followed as a person would
    return {
        "dashboard": reverse("workspace_dashboard", args=[workspace.slug]),
        "workspace gallery": gallery,
        "workspace gallery, later page": f"{gallery}{older}",
        "public gallery": reverse("public_gallery"),
        "creation page": reverse("creation_detail", args=[seeded["creation"].pk]),
        "run page": reverse("run_detail", args=[run.pk]),
        "artifact page": reverse("artifact_detail", args=[seeded["artifact"].pk]),
    }


def measure(client: Client, url: str, requests: int) -> dict[str, Any]:
    for _ in range(3):  # warm caches (templates, connections) as a running server has them
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    times = []
    queries = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        client.get(url)
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1),
        "queries": len(queries),
        "html_kb": round(len(response.content) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    setup_test_environment()
    results: dict[str, dict[str, Any]] = {}
    with throwaway_database(BENCH_DB_SUFFIX):
        owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
        sizes = {
            "small (100 artifacts, 40-event run)": seed_workspace(owner, slug="small", artifacts=100, run_events=40),
            "big (10,000 artifacts, 5,000-event run)": seed_workspace(
                owner, slug="big", artifacts=10_000, run_events=5_000
            ),
        }
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        client = Client()
        client.force_login(owner)
        for size, seeded in sizes.items():
            results[size] = {name: measure(client, url, args.requests) for name, url in pages(seeded, client).items()}
        with tempfile.TemporaryDirectory(prefix="bench-pages-") as media, override_settings(MEDIA_ROOT=media):
            many = many_files_pages(seed_many_files(owner, files=MANY_FILES))
            with override_settings(RUN_PAGE_ARTIFACTS=MANY_FILES):  # the baseline: every file on one page
                before = {name: measure(client, url, args.requests) for name, url in many.items()}
            results[f"a run of {MANY_FILES:,} text files, a page of them"] = {
                name: measure(client, url, args.requests) for name, url in many.items()
            }
            results[f"a run of {MANY_FILES:,} text files, all on one page (before)"] = before
    paged = results[f"a run of {MANY_FILES:,} text files, a page of them"].values()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "target_p95_ms": TARGET_P95_MS,
        "requests_per_page": args.requests,
        "results": results,
        "meets_target": all(
            page["p95_ms"] <= TARGET_P95_MS for size, measured in results.items() for page in measured.values()
            if not size.startswith("a run of")
        ),
        "many_files_target": {"ms": MANY_FILES_TARGET_MS, "kb": MANY_FILES_TARGET_KB},
        "many_files_meet_target": all(
            page["p95_ms"] < MANY_FILES_TARGET_MS and page["html_kb"] < MANY_FILES_TARGET_KB for page in paged
        ),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results)
    print(f"\np95 <= {TARGET_P95_MS:g} ms on every page at both sizes: {report['meets_target']}")
    print(
        f"a run of {MANY_FILES:,} files: p95 < {MANY_FILES_TARGET_MS:g} ms and < {MANY_FILES_TARGET_KB:g} KB"
        f" on both pages: {report['many_files_meet_target']}"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def print_table(results: dict[str, dict[str, Any]]) -> None:
    for size, measured in results.items():
        print(f"\n{size}")
        print(f"  {'page':<32}{'p50':>9}{'p95':>9}{'queries':>9}{'HTML':>10}")
        for name, page in measured.items():
            print(
                f"  {name:<32}{page['p50_ms']:>7} ms{page['p95_ms']:>6} ms{page['queries']:>9}{page['html_kb']:>7} KB"
            )


if __name__ == "__main__":
    main()
