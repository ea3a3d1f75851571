"""The Python packages an image build installs, served to it on this machine's loopback for the length
of the build, so that they never become a layer of the image.

Docker's classic builder, the one the Docker SDK drives, has no mounts for a build step: wheels copied
into the build context become a layer the image keeps (180 MB for the sandbox image), and installing
them in a stage of its own whose virtualenv the image then copies writes and commits that virtualenv
twice and leaves the stage behind as an image (about a quarter of the sandbox image's build time and
CPU: bench/image_build.py). So the builds run on the host's network, and their install step reads the
wheels, and uv beside them, from here.

The port follows from what is served, so a second build of the same packages is given the same URL and
Docker's layer cache still knows its install step; when that port is taken (the same packages being
built elsewhere on this machine at that moment) any free one does, and the step simply runs again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import ipaddress
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
# Above the well-known ports and below Linux's ephemeral range, where outgoing connections take theirs.
PORTS = range(20_000, 30_000)


class EngineElsewhere(RuntimeError):
    """The Docker engine is not this machine's: its builds cannot read this machine's loopback."""


def engine_is_on_this_machine(engine_url: str) -> bool:
    """Whether the Docker SDK's URL for the engine (`APIClient.base_url`) is this machine's own: its
    socket (`http+docker://localhost`) or a loopback address; not another host over TCP or SSH."""
    parts = urlsplit(engine_url)
    if parts.scheme == "http+docker":
        return parts.hostname in ("localhost", "localunixsocket")
    if parts.hostname == "localhost":
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(parts.hostname or "").is_loopback
    return False


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    """GET and HEAD of the folder's files and its listing; nothing else, and no log line per file."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def port_for(folder: Path) -> int:
    """The port for serving `folder`: the same for the same files (names and sizes)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        digest.update(f"{path.name}\0{path.stat().st_size}\n".encode())
    return PORTS[int.from_bytes(digest.digest()[:4], "big") % len(PORTS)]


class _PackageServer(http.server.ThreadingHTTPServer):
    # uv opens dozens of connections at once: with the default backlog of five, the rest wait on
    # the kernel's retransmission of their handshake, a second or more each.
    request_queue_size = 128


def _listening(folder: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietFiles, directory=str(folder))
    try:
        return _PackageServer((LOOPBACK, port_for(folder)), handler)
    except OSError:
        return _PackageServer((LOOPBACK, 0), handler)


@contextlib.contextmanager
def packages_served(folder: Path, *, engine_url: str) -> Iterator[str]:
    """The URL of `folder` (wheels, and the `uv` binary) on the loopback interface until the block
    ends: its listing is the index uv's `--find-links` reads; `<url>/uv` is the installer. Refused
    (EngineElsewhere) for an engine on another host, whose builds would find nothing there."""
    if not engine_is_on_this_machine(engine_url):
        raise EngineElsewhere(
            f"The Docker engine at {engine_url} is not this machine's, and an image build reads its Python "
            "packages from this machine's loopback: run the build on that engine's host (DOCKER_HOST unset)."
        )
    server = _listening(folder)
    thread = threading.Thread(target=server.serve_forever, name="build-packages", daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
