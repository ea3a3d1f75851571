"""A client that stops reading a big download holds the web process (daphne) at a few chunks of
memory, not at the whole body; a client that reads gets every byte (config/backpressure.py). A
websocket client that stops reading a chatty run is closed once it leaves the bound unread, and a
reader beside it gets every event (config/websocket_backlog.py)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from websockets.exceptions import ConnectionClosedOK
from websockets.sync.client import connect
from websockets.typing import Origin

from creations.artifacts.origin import grant_sign
from creations.events.socket_slots import KEY_PREFIX as SOCKETS_KEY_PREFIX
from creations.events.store import store_events
from creations.models import Artifact, ArtifactKind, RunStatus, Visibility
from creations.runs.state import run_finish
from devstack.ports import free_port
from devstack.processes import wait_for_port
from devstack.stack import AtelierServer, origins_env, web_process
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024
VIDEO_BYTES = 200 * MB
TCP_ESTABLISHED = 1
HEADER = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


@pytest.fixture
def public_video(run_stack: AtelierServer, team: Team) -> Iterator[Artifact]:
    """A public run's 200 MB video: a sparse file in the stack's media, written in no time."""
    name = f"artifacts/backpressure/{time.monotonic_ns()}.mp4"
    path = run_stack.media_root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(HEADER)
        out.truncate(VIDEO_BYTES)
    run = make_run(team, status=RunStatus.SUCCEEDED, visibility=Visibility.PUBLIC, finished_at=timezone.now())
    yield Artifact.objects.create(
        run=run, path="clip.mp4", kind=ArtifactKind.VIDEO, size=VIDEO_BYTES, content_type="video/mp4", file=name
    )
    path.unlink()


def ways_to_fetch(artifact: Artifact) -> dict[str, tuple[str, str]]:
    """(host name, path) of the video from the artifact origin, and of its run's zip export."""
    token = grant_sign(run_id=artifact.run_id, user=AnonymousUser())
    return {
        "artifact origin": ("127.0.0.1", f"/r/{token}/clip.mp4"),
        "zip export": ("localhost", f"/runs/{artifact.run_id}/artifacts.zip"),
    }


def stalled_reader(port: int, host: str, path: str) -> socket.socket:
    """Asks, reads the first 64 KB of the answer, then reads no more; left open."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    received = b""
    while len(received) < 64 * 1024:
        chunk = client.recv(64 * 1024 - len(received))
        assert chunk, f"the server closed {path} after {len(received)} bytes"
        received += chunk
    assert received.startswith(b"HTTP/1.1 200"), received[:200]
    return client


@contextmanager
def own_daphne(run_stack: AtelierServer, log_dir: Path, **overrides: str) -> Iterator[tuple[int, int]]:
    """A daphne of its own beside the stack's (same configuration but `overrides`), whose memory no
    earlier test has touched: its port and process id."""
    port = free_port()
    env = {**run_stack.processes["web"].env, **origins_env(port), **overrides}
    web = web_process(port, env, log_dir, name="web-measured")
    web.start()
    try:
        wait_for_port(web, port)
        assert web.popen is not None
        yield port, web.popen.pid
    finally:
        web.stop()


@pytest.fixture
def measured_web(run_stack: AtelierServer, tmp_path: Path) -> Iterator[tuple[int, int]]:
    with own_daphne(run_stack, tmp_path) as port_and_pid:
        yield port_and_pid


@pytest.mark.parametrize("way", ["artifact origin", "zip export"])
def test_stalled_clients_do_not_grow_the_web_process(
    measured_web: tuple[int, int], public_video: Artifact, way: str
) -> None:
    host, path = ways_to_fetch(public_video)[way]
    port, pid = measured_web
    before = rss_mib(pid)
    with ExitStack() as open_clients:
        for _ in range(2):
            open_clients.callback(stalled_reader(port, host, path).close)
        peak = before
        for _ in range(10):  # 5 s: a server that reads on regardless has read the 200 MB twice by now
            time.sleep(0.5)
            peak = max(peak, rss_mib(pid))
    assert peak - before < 64, f"the web process grew by {peak - before:.0f} MiB for two stalled clients"


def test_a_client_that_reads_gets_every_byte_again_and_again(run_stack: AtelierServer, public_video: Artifact) -> None:
    host, path = ways_to_fetch(public_video)["artifact origin"]
    expected = hashlib.sha256(HEADER + bytes(VIDEO_BYTES - len(HEADER))).hexdigest()
    with httpx.Client(timeout=60) as client:
        for _ in range(2):  # the second on the same connection: each response registers with it afresh
            digest = hashlib.sha256()
            with client.stream("GET", f"http://{host}:{run_stack.port}{path}") as response:
                assert response.status_code == 200
                for chunk in response.iter_raw(MB):
                    digest.update(chunk)
            assert digest.hexdigest() == expected
        part = client.get(f"http://{host}:{run_stack.port}{path}", headers={"Range": "bytes=4-11"})
        assert (part.status_code, part.content) == (206, b"ftypmp42")


def websocket_opened_then_left_unread(port: int, run_id: int) -> socket.socket:
    """A websocket client that completes the handshake and then reads nothing more; left open."""
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
    while b"\r\n\r\n" not in answer:
        chunk = client.recv(1)  # byte by byte: not a byte of the stream past the handshake is taken
        assert chunk, f"the server closed the handshake: {answer!r}"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return client


def sockets_open_from_loopback() -> int:
    return int(redis.Redis.from_url(settings.REDIS_URL).zcard(f"{SOCKETS_KEY_PREFIX}:address:127.0.0.1"))


def still_open(client: socket.socket) -> bool:
    """Whether the server has neither closed nor reset the connection, seen without reading a byte."""
    return client.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_ESTABLISHED


def test_a_websocket_left_unread_is_closed_and_the_web_process_stays_small_while_a_reader_gets_everything(
    run_stack: AtelierServer, team: Team, tmp_path: Path
) -> None:
    run = make_run(team, status=RunStatus.RUNNING, visibility=Visibility.PUBLIC)
    text = "x" * 8000  # a model streaming fast: its text is stored about every 8 KB
    # Replay pages of 50 events rather than 500: what the consumers hold while reading is then
    # small beside what a socket left unread would hold.
    with own_daphne(run_stack, tmp_path, RUN_WS_REPLAY_PAGE="50") as (port, pid):
        stalled = websocket_opened_then_left_unread(port, run.pk)
        reader_got: list[int] = []

        def read_to_the_end() -> None:
            url = f"ws://localhost:{port}/ws/runs/{run.pk}/"
            origin = Origin(f"http://localhost:{port}")
            with (
                connect(url, origin=origin, open_timeout=10, max_size=None) as ws,
                contextlib.suppress(ConnectionClosedOK),
            ):
                while True:
                    reader_got.append(json.loads(ws.recv(timeout=60))["seq"])

        reader = threading.Thread(target=read_to_the_end, daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while sockets_open_from_loopback() < 2:
            assert time.monotonic() < deadline, "the reader's socket did not open"
            time.sleep(0.05)
        before = rss_mib(pid)
        peak = before
        for batch in range(64):  # 4,096 events, 32 MB; the bound is 4 MiB
            store_events(run.pk, [("assistant_delta", {"step": batch, "text": text})] * 64)
            peak = max(peak, rss_mib(pid))
        deadline = time.monotonic() + 30
        while still_open(stalled) or sockets_open_from_loopback() > 1:  # closed, and its slot given back
            assert time.monotonic() < deadline, f"the socket left unread: open {still_open(stalled)}"
            time.sleep(0.1)
            peak = max(peak, rss_mib(pid))
        stalled.close()
        run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Submitted.")
        reader.join(timeout=60)
    assert reader_got == list(range(1, 64 * 64 + 2))  # every event and the final status, in order
    assert peak - before < 16, f"the web process grew by {peak - before:.0f} MiB with a socket left unread"
