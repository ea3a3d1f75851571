"""Memory of the web process while clients stop reading big answers.

    DATABASE_URL=postgres://... .venv/bin/python bench/stalled_readers.py [--megabytes 500] [--readers 3]

A public video of 500 MB (a sparse file: made at once, no disk written) is the one artifact of a
finished run, on local storage. For each way it can be fetched — the artifact origin (what a
<video> tag or a shared link asks), the API's download, and the run's zip export — a daphne of its
own (the web process as deployed) serves it to three clients that send their request, read the
first 64 KB and then stop reading, connections open. The web process's resident memory (RSS) is
sampled every half second: before the readers connect (the baseline, after one warm-up request
read whole, whose speed is reported too) and for `--seconds` after. A server that honours
backpressure stays near its baseline; one that reads on regardless holds the whole body for each
reader. Writes bench/results/stalled_readers.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import socket
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.utils import timezone  # noqa: E402

from api.tokens import token_create  # noqa: E402
from bench.measuring import BENCH_ENV, machine_speed  # noqa: E402
from creations.artifacts.origin import grant_sign  # noqa: E402
from creations.models import Artifact, ArtifactKind, Creation, Run, RunStatus, Visibility  # noqa: E402
from devstack.databases import database_url, throwaway_database  # noqa: E402
from devstack.ports import free_port  # noqa: E402
from devstack.processes import Process, wait_for_port  # noqa: E402
from devstack.stack import origins_env, stack_env, web_process  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)

RESULTS = ROOT / "bench" / "results" / "stalled_readers.json"
BENCH_DB_SUFFIX = "_bench_stalled"
MB = 1024 * 1024
READ_BEFORE_STALLING = 64 * 1024
ARTIFACT_NAME = "artifacts/bench/clip.mp4"


def sparse_video(media_root: Path, size: int) -> None:
    """An MP4 header, then a hole up to `size` bytes: the filesystem stores almost nothing."""
    path = media_root / ARTIFACT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
        out.truncate(size)


def seed(size: int) -> tuple[Run, User, str]:
    """A public finished run whose one artifact is the video; its owner, and an API token of theirs."""
    owner = User.objects.create_user("owner", password="x")  # noqa: S106 - a throwaway database
    workspace = Workspace.objects.create(name="bench", slug="bench")
    workspace.memberships.create(user=owner, role="owner")
    creation = Creation.objects.create(
        workspace=workspace, author=owner, brief="a long video", visibility=Visibility.PUBLIC
    )
    run = Run.objects.create(creation=creation, status=RunStatus.SUCCEEDED, finished_at=timezone.now())
    Artifact.objects.create(
        run=run, path="clip.mp4", kind=ArtifactKind.VIDEO, size=size, content_type="video/mp4", file=ARTIFACT_NAME
    )
    token = token_create(user=owner, name="bench", scope="read", expires_in_days=None).raw
    return run, owner, token


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def stalled_reader(port: int, host: str, path: str, headers: dict[str, str]) -> socket.socket:
    """A client that asks, takes the first READ_BEFORE_STALLING bytes, and reads no more (left open)."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # a small window, as a slow link has
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    client.sendall("\r\n".join(lines).encode())
    received = 0
    while received < READ_BEFORE_STALLING:
        chunk = client.recv(READ_BEFORE_STALLING - received)
        if not chunk:
            raise RuntimeError(f"{path}: the server closed the connection after {received} bytes")
        if received == 0 and not chunk.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"{path}: {chunk[:200]!r}")
        received += len(chunk)
    return client


def measure(
    name: str, *, workdir: Path, host: str, path: str, headers: dict[str, str], readers: int, seconds: float
) -> dict[str, object]:
    """One fresh daphne: its RSS before (after a warm-up read whole) and while `readers` clients stall."""
    port = free_port()
    overrides = {**BENCH_ENV, **origins_env(port)}
    env = stack_env(database_url=database_url(), media_root=workdir / "media", overrides=overrides)
    process: Process = web_process(port, env, workdir, name=f"web-{name}")
    process.start()
    try:
        wait_for_port(process, port)
        assert process.popen is not None
        pid = process.popen.pid
        read_started = time.perf_counter()
        with (  # warm-up: imports, connections, one whole read (its speed: a client that does read)
            httpx.Client(timeout=300) as client,
            client.stream("GET", f"http://{host}:{port}{path}", headers=headers) as response,
        ):
            assert response.status_code == 200, (name, response.status_code)
            body = sum(len(chunk) for chunk in response.iter_raw(MB))
        whole_read_s = time.perf_counter() - read_started
        time.sleep(1)
        baseline = []
        for _ in range(4):
            baseline.append(rss_mib(pid))
            time.sleep(0.25)
        samples: list[tuple[float, float]] = []
        started = time.monotonic()
        with ExitStack() as open_clients:
            for _ in range(readers):
                open_clients.callback(stalled_reader(port, host, path, headers).close)
            while (elapsed := time.monotonic() - started) < seconds:
                samples.append((round(elapsed, 1), round(rss_mib(pid), 1)))
                time.sleep(0.5)
        after_close = rss_mib(pid)
    finally:
        process.stop()
    rss = [value for _, value in samples]
    base = round(min(baseline), 1)
    return {
        "body_mib": round(body / MB, 1),
        "whole_read_mib_per_s": round(body / MB / whole_read_s, 1),
        "baseline_rss_mib": base,
        "peak_rss_mib": max(rss),
        "last_rss_mib": rss[-1],
        "growth_mib": round(max(rss) - base, 1),
        "growth_per_reader_mib": round((max(rss) - base) / readers, 1),
        "rss_after_readers_closed_mib": round(after_close, 1),
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=500)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15, help="how long the readers stall, sampled")
    args = parser.parse_args()
    size = args.megabytes * MB
    speed_before = machine_speed()
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="atelier-bench-stalled-") as tmp:
        workdir = Path(tmp)
        sparse_video(workdir / "media", size)
        with throwaway_database(BENCH_DB_SUFFIX):
            run, owner, token = seed(size)
            artifact = run.artifacts.get()
            ways = {
                "artifact origin": ("127.0.0.1", f"/r/{grant_sign(run_id=run.pk, user=owner)}/clip.mp4", {}),
                "api download": (
                    "localhost",
                    f"/api/v1/artifacts/{artifact.pk}/download",
                    {"Authorization": f"Bearer {token}"},
                ),
                "zip export": ("localhost", f"/runs/{run.pk}/artifacts.zip", {}),
            }
            for name, (host, path, headers) in ways.items():
                results[name] = measure(
                    name.replace(" ", "-"),
                    workdir=workdir,
                    host=host,
                    path=path,
                    headers=headers,
                    readers=args.readers,
                    seconds=args.seconds,
                )
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "machine_speed_s": {"before": speed_before, "after": machine_speed()},
        "video_mb": args.megabytes,
        "readers": args.readers,
        "stalled_seconds": args.seconds,
        "results": results,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results, args.megabytes, args.readers, args.seconds)
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def print_table(results: dict[str, dict[str, object]], megabytes: int, readers: int, seconds: float) -> None:
    print(f"\nWeb process RSS (MiB), {readers} clients stalled on a {megabytes} MB video, sampled for {seconds:.0f} s")
    print(
        f"  {'fetched from':<16}{'baseline':>10}{'peak':>9}{'last':>9}{'growth':>9}{'per reader':>12}{'closed':>9}"
        f"{'read whole, MiB/s':>19}"
    )
    for name, r in results.items():
        print(
            f"  {name:<16}{r['baseline_rss_mib']:>10}{r['peak_rss_mib']:>9}{r['last_rss_mib']:>9}"
            f"{r['growth_mib']:>9}{r['growth_per_reader_mib']:>12}{r['rss_after_readers_closed_mib']:>9}"
            f"{r['whole_read_mib_per_s']:>19}"
        )


if __name__ == "__main__":
    main()
