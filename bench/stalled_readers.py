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
reader.

Then websockets: a public run that keeps talking (`--ws-megabytes` of a model's streamed text, 8 KB
an event, 64 events a batch) watched live by three clients that complete the handshake and read nothing more, and by one
that reads every event. Twice, each on a daphne of its own: with RUN_WS_SEND_BUFFER_MAX_BYTES as
configured (the sockets left unread are closed once they pass it), and, the baseline, with no bound
(the web process holds every event for each of them). Reported: the RSS growth, when the unread
sockets were closed (seconds after the first event was stored), and whether the reading client got
every event. Writes bench/results/stalled_readers.json.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import logging
import os
import platform
import socket
import struct
import sys
import tempfile
import threading
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
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.utils import timezone  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect  # noqa: E402
from websockets.typing import Origin  # noqa: E402

from api.tokens import token_create  # noqa: E402
from bench.measuring import BENCH_ENV, machine_speed  # noqa: E402
from creations.artifacts.origin import grant_sign  # noqa: E402
from creations.events.store import store_events  # noqa: E402
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
# A model streaming its answer fast: the recorder stores its text about every 8 KB (RUN_EVENT_COALESCE_BYTES).
MESSAGE_CHARS = 8_000
MESSAGES_PER_BATCH = 64
NO_BOUND = str(2**50)
TCP_ESTABLISHED = 1


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


def websocket_left_unread(port: int, run_id: int) -> socket.socket:
    """A websocket client that completes the handshake, then reads nothing more (left open)."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    key = base64.b64encode(os.urandom(16)).decode()
    client.sendall(
        (
            f"GET /ws/runs/{run_id}/ HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\n"
            f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while not answer.endswith(b"\r\n\r\n"):
        chunk = client.recv(1)  # a byte at a time: nothing past the handshake is taken
        if not chunk:
            raise RuntimeError(f"the server closed the handshake: {answer!r}")
        answer += chunk
    if not answer.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"websocket refused: {answer[:200]!r}")
    return client


def still_open(client: socket.socket) -> bool:
    """Whether the server has neither closed nor reset the connection, read without taking a byte."""
    state = struct.unpack("B", client.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1))[0]
    return state == TCP_ESTABLISHED


def read_every_event(port: int, run_id: int, got: list[int], ready: threading.Event) -> None:
    url = f"ws://localhost:{port}/ws/runs/{run_id}/"
    with connect(url, origin=Origin(f"http://localhost:{port}"), open_timeout=30, max_size=None) as ws:
        ready.set()
        with contextlib.suppress(ConnectionClosed, TimeoutError):
            while True:
                got.append(json.loads(ws.recv(timeout=120))["seq"])


def measure_websockets(
    name: str, *, workdir: Path, run_id: int, bound: str, readers: int, megabytes: int
) -> dict[str, object]:
    """One fresh daphne with RUN_WS_SEND_BUFFER_MAX_BYTES=`bound`: its RSS while the run stores
    `megabytes` of events to `readers` sockets left unread and one that reads them all."""
    port = free_port()
    overrides = {**BENCH_ENV, **origins_env(port), "RUN_WS_SEND_BUFFER_MAX_BYTES": bound}
    env = stack_env(database_url=database_url(), media_root=workdir / "media", overrides=overrides)
    process: Process = web_process(port, env, workdir, name=f"web-{name}")
    process.start()
    try:
        wait_for_port(process, port)
        assert process.popen is not None
        pid = process.popen.pid
        unread = [websocket_left_unread(port, run_id) for _ in range(readers)]
        got: list[int] = []
        ready = threading.Event()
        reader = threading.Thread(target=read_every_event, args=(port, run_id, got, ready), daemon=True)
        reader.start()
        ready.wait(30)
        time.sleep(1)
        baseline = []
        for _ in range(4):
            baseline.append(rss_mib(pid))
            time.sleep(0.25)
        base = round(min(baseline), 1)
        text = "x" * MESSAGE_CHARS
        batches = max(1, megabytes * MB // (MESSAGE_CHARS * MESSAGES_PER_BATCH))
        samples: list[tuple[float, float]] = []
        closed_after: list[float | None] = [None] * readers
        started = time.monotonic()

        def look() -> None:
            elapsed = round(time.monotonic() - started, 1)
            samples.append((elapsed, round(rss_mib(pid), 1)))
            for i, client in enumerate(unread):
                if closed_after[i] is None and not still_open(client):
                    closed_after[i] = elapsed

        for batch in range(batches):
            store_events(run_id, [("assistant_delta", {"step": batch, "text": text})] * MESSAGES_PER_BATCH)
            look()
        stored_s = time.monotonic() - started
        expected = batches * MESSAGES_PER_BATCH
        while time.monotonic() - started < stored_s + 10 and (len(got) < expected or None in closed_after):
            look()
            time.sleep(0.5)
        after_all = rss_mib(pid)
        for client in unread:
            client.close()
    finally:
        process.stop()
    rss = [value for _, value in samples]
    return {
        "bound_bytes": int(bound),
        "events": expected,
        "events_mib": round(expected * MESSAGE_CHARS / MB, 1),
        "stored_in_s": round(stored_s, 1),
        "baseline_rss_mib": base,
        "peak_rss_mib": max(rss),
        "growth_mib": round(max(rss) - base, 1),
        "rss_at_end_mib": round(after_all, 1),
        "unread_sockets_closed_after_s": closed_after,
        "reader_got_every_event": got == list(range(1, expected + 1)),
        "reader_events": len(got),
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=500)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15, help="how long the readers stall, sampled")
    parser.add_argument("--ws-megabytes", type=int, default=60, help="events a chatty run stores, in MB")
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
            websockets: dict[str, dict[str, object]] = {}
            for name, bound in {
                "websocket, bounded": str(settings.RUN_WS_SEND_BUFFER_MAX_BYTES),
                "websocket, no bound": NO_BOUND,
            }.items():
                chatty = Run.objects.create(creation=run.creation, status=RunStatus.RUNNING)
                websockets[name] = measure_websockets(
                    name.replace(", ", "-").replace(" ", "-"),
                    workdir=workdir,
                    run_id=chatty.pk,
                    bound=bound,
                    readers=args.readers,
                    megabytes=args.ws_megabytes,
                )
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "machine_speed_s": {"before": speed_before, "after": machine_speed()},
        "video_mb": args.megabytes,
        "readers": args.readers,
        "stalled_seconds": args.seconds,
        "results": results,
        "websocket_megabytes": args.ws_megabytes,
        "websockets": websockets,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(results, args.megabytes, args.readers, args.seconds)
    print_websocket_table(websockets, args.ws_megabytes, args.readers)
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


def print_websocket_table(results: dict[str, dict[str, object]], megabytes: int, readers: int) -> None:
    print(f"\nWeb process RSS (MiB), a run storing {megabytes} MB of events, {readers} sockets left unread, 1 reading")
    columns = f"{'baseline':>10}{'peak':>9}{'growth':>9}{'at end':>9}"
    print(f"  {'daphne':<22}{columns}  unread sockets closed after (s)  reader")
    for name, r in results.items():
        closed_after: list[float | None] = r["unread_sockets_closed_after_s"]  # type: ignore[assignment]
        closed = ", ".join("open" if t is None else f"{t}" for t in closed_after)
        reader = "every event" if r["reader_got_every_event"] else f"{r['reader_events']} of {r['events']}"
        print(
            f"  {name:<22}{r['baseline_rss_mib']:>10}{r['peak_rss_mib']:>9}{r['growth_mib']:>9}{r['rss_at_end_mib']:>9}"
            f"  {closed:<32} {reader}"
        )


if __name__ == "__main__":
    main()
