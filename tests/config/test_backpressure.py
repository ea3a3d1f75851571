"""A client that stops reading a big download holds the web process (daphne) at a few chunks of
memory, not at the whole body; a client that reads gets every byte (config/backpressure.py)."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from creations.artifacts.origin import grant_sign
from creations.models import Artifact, ArtifactKind, RunStatus, Visibility
from devstack.ports import free_port
from devstack.processes import wait_for_port
from devstack.stack import AtelierServer, origins_env, web_process
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024
VIDEO_BYTES = 200 * MB
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


@pytest.fixture
def measured_web(run_stack: AtelierServer, tmp_path: Path) -> Iterator[tuple[int, int]]:
    """A daphne of its own beside the stack's (same configuration), whose memory no earlier test
    has touched: its port and process id."""
    port = free_port()
    web = web_process(port, {**run_stack.processes["web"].env, **origins_env(port)}, tmp_path, name="web-measured")
    web.start()
    try:
        wait_for_port(web, port)
        assert web.popen is not None
        yield port, web.popen.pid
    finally:
        web.stop()


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
