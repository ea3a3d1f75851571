"""Storage benchmark: a video served from S3 beside the same video on local storage.

    DATABASE_URL=postgres://... .venv/bin/python bench/storage.py [--megabytes 50] [--rounds 5]

One 50 MB video is stored twice, on local storage and in S3 (SeaweedFS on loopback, as the
tests run it), and served by the real artifact origin: three daphne servers over one
PostgreSQL database of the benchmark's own, the first on local storage (the baseline), the
second on S3 with redirects off (every byte through the origin, a Range read as a ranged GET),
the third on S3 with redirects on (the origin checks access and answers 302 to a signed URL of
the store; the client follows it, as a browser does). For each: time to the first byte of the
body and throughput, for `Range: bytes=0-` (what a <video> asks first) and for 1 MB from the
middle (a seek). The servers are measured in turn within each round, so a slow moment of the
machine falls on all of them. Writes bench/results/storage.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.core.files.storage import FileSystemStorage  # noqa: E402
from django.utils import timezone  # noqa: E402
from storages.backends.s3 import S3Storage  # noqa: E402

from bench.measuring import BENCH_ENV, machine_speed  # noqa: E402
from creations.artifacts.origin import grant_sign  # noqa: E402
from creations.models import Artifact, ArtifactKind, Creation, Run, RunStatus  # noqa: E402
from devstack.databases import database_url, throwaway_database  # noqa: E402
from devstack.ports import free_port  # noqa: E402
from devstack.processes import Process, wait_for_port  # noqa: E402
from devstack.s3 import S3Server, seaweedfs_running, storage_env, storage_options  # noqa: E402
from devstack.stack import origins_env, stack_env, web_process  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise

RESULTS = ROOT / "bench" / "results" / "storage.json"
BENCH_DB_SUFFIX = "_bench_storage"
MB = 1024 * 1024
SERVERS = ("local", "s3 via origin", "s3 redirect")


def seed(video: bytes, *, media_root: Path, s3: S3Server, location: str) -> dict[str, int]:
    """The video stored on each storage, as the artifact of a finished run of its own: run ids."""
    owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
    workspace = Workspace.objects.create(name="bench", slug="bench")
    workspace.memberships.create(user=owner, role="owner")
    options = {**storage_options(s3, location), "endpoint_url": s3.direct_url}
    stored = {
        "local": FileSystemStorage(location=media_root).save("artifacts/bench/clip", ContentFile(video)),
        "s3": S3Storage(**options).save("artifacts/bench/clip", ContentFile(video)),
    }
    runs = {}
    for storage, name in stored.items():
        creation = Creation.objects.create(workspace=workspace, author=owner, brief=f"a video on {storage}")
        run = Run.objects.create(creation=creation, status=RunStatus.SUCCEEDED, finished_at=timezone.now())
        Artifact.objects.create(
            run=run, path="clip.mp4", kind=ArtifactKind.VIDEO, size=len(video), content_type="video/mp4", file=name
        )
        runs[storage] = run.pk
    return {**runs, "owner": owner.pk}


def timed_get(client: httpx.Client, url: str, range_header: str) -> dict[str, float]:
    """Seconds to the origin's answer (a redirect's included), to the first byte of the body and to
    the last, and the bytes: a redirect followed as a browser does (Range sent again, to the store)."""
    headers = {"Range": range_header}
    started = time.perf_counter()
    response = client.send(client.build_request("GET", url, headers=headers), stream=True)
    answered = time.perf_counter() - started
    if response.is_redirect:
        response.close()
        location = response.headers["Location"]
        response = client.send(client.build_request("GET", location, headers=headers), stream=True)
    first = 0.0
    received = 0
    try:
        assert response.status_code == 206, (url, response.status_code)
        for chunk in response.iter_raw(256 * 1024):
            if not received:
                first = time.perf_counter() - started
            received += len(chunk)
    finally:
        response.close()
    return {"answer_s": answered, "first_byte_s": first, "total_s": time.perf_counter() - started, "bytes": received}


def summarize(samples: list[dict[str, float]]) -> dict[str, float]:
    first = [s["first_byte_s"] * 1000 for s in samples]
    rates = [s["bytes"] / MB / s["total_s"] for s in samples]
    return {
        "origin_answer_ms_p50": round(statistics.median(s["answer_s"] * 1000 for s in samples), 1),
        "first_byte_ms_p50": round(statistics.median(first), 1),
        "first_byte_ms_max": round(max(first), 1),
        "total_ms_p50": round(statistics.median(s["total_s"] * 1000 for s in samples), 1),
        "mb_per_s_p50": round(statistics.median(rates), 1),
        "bytes": int(samples[0]["bytes"]),
        "samples": len(samples),
    }


def start_servers(workdir: Path, s3: S3Server, location: str) -> dict[str, tuple[Process, str]]:
    on_s3 = {**storage_env(s3, location), "S3_ENDPOINT_URL": s3.direct_url}
    envs = {
        "local": {},
        "s3 via origin": {**on_s3, "S3_PRESIGNED_REDIRECTS": "false"},
        "s3 redirect": {**on_s3, "S3_PRESIGNED_REDIRECTS": "true"},
    }
    servers = {}
    for name, storage in envs.items():
        port = free_port()
        overrides = {**BENCH_ENV, **storage, **origins_env(port)}
        env = stack_env(database_url=database_url(), media_root=workdir / "media", overrides=overrides)
        process = web_process(port, env, workdir, name=f"web-{name.replace(' ', '-')}")
        process.start()
        servers[name] = (process, f"http://127.0.0.1:{port}")
    for process, url in servers.values():
        wait_for_port(process, int(url.rsplit(":", 1)[1]))
    return servers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5, help="whole-file reads per server")
    parser.add_argument("--seeks", type=int, default=20, help="1 MB mid-file reads per server")
    args = parser.parse_args()
    size = args.megabytes * MB
    video = b"\x00\x00\x00\x18ftypmp42" + os.urandom(size - 12)
    middle = f"bytes={size // 2}-{size // 2 + MB - 1}"
    samples: dict[str, dict[str, list[dict[str, float]]]] = {name: {"whole": [], "seek": []} for name in SERVERS}
    speed_before = machine_speed()
    with tempfile.TemporaryDirectory(prefix="atelier-bench-storage-") as tmp:
        workdir = Path(tmp)
        with seaweedfs_running(workdir / "s3") as s3, throwaway_database(BENCH_DB_SUFFIX):
            location = f"bench-{time.monotonic_ns()}"
            seeded = seed(video, media_root=workdir / "media", s3=s3, location=location)
            owner = User.objects.get(pk=seeded["owner"])
            servers = start_servers(workdir, s3, location)
            try:
                urls = {
                    name: f"{origin}/r/{grant_sign(run_id=seeded['local' if name == 'local' else 's3'], user=owner)}"
                    "/clip.mp4"
                    for name, (_, origin) in servers.items()
                }
                with httpx.Client(timeout=120) as client:
                    for url in urls.values():  # warm each server (imports, connections)
                        timed_get(client, url, "bytes=0-1023")
                    for round_ in range(max(args.rounds, args.seeks)):
                        for name, url in urls.items():
                            if round_ < args.rounds:
                                samples[name]["whole"].append(timed_get(client, url, "bytes=0-"))
                            if round_ < args.seeks:
                                samples[name]["seek"].append(timed_get(client, url, middle))
            finally:
                for process, _ in servers.values():
                    process.stop()
    results = {name: {what: summarize(got) for what, got in measured.items()} for name, measured in samples.items()}
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "machine_speed_s": {"before": speed_before, "after": machine_speed()},
        "video_mb": args.megabytes,
        "ranges": {"whole": "bytes=0-", "seek": middle},
        "baseline": "local",
        "results": results,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results, args.megabytes)
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def print_table(results: dict[str, dict[str, dict[str, float]]], megabytes: int) -> None:
    print(f"\nA {megabytes} MB video through the artifact origin (daphne), p50 (max); ms unless said")
    print(
        f"  {'server':<15}|{'bytes=0-: answer':>17}{'first byte':>17}{'MB/s':>7}"
        f" |{'1 MB seek: answer':>18}{'first byte':>17}{'total':>8}"
    )
    for name, measured in results.items():
        whole, seek = measured["whole"], measured["seek"]
        print(
            f"  {name:<15}|{whole['origin_answer_ms_p50']:>17}"
            f"{whole['first_byte_ms_p50']:>8} ({whole['first_byte_ms_max']:>6}){whole['mb_per_s_p50']:>7}"
            f" |{seek['origin_answer_ms_p50']:>18}"
            f"{seek['first_byte_ms_p50']:>8} ({seek['first_byte_ms_max']:>6}){seek['total_ms_p50']:>8}"
        )


if __name__ == "__main__":
    main()
