"""`make run` (platform/dev/run.sh): what a newcomer's machine exposes, and where."""

import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devstack.redis_server import RedisServer
from tests.support import free_port, has_executable, port_open, require

# `make run`'s own stack, started without `start_stack`: marked by hand (tests/support/markers.py).
pytestmark = pytest.mark.stack

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0


@dataclass
class DevServer:
    port: int
    artifact_port: int
    log: Path


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """`platform/dev/run.sh` as a newcomer starts it, with its state in a temporary folder; one for
    the module, whose tests only look at it."""
    tmp_path = tmp_path_factory.mktemp("dev-server")
    require(has_executable("redis-server"), "redis-server (the Debian package redis-server)")
    require((ROOT / ".venv" / "bin" / "daphne").exists(), "the project's virtualenv (make venv)")
    redis = RedisServer(tmp_path)
    redis.start()
    port = free_port_and_the_next()
    unset = {"DJANGO_SETTINGS_MODULE", "BIND", "SECRET_KEY", "FIELD_ENCRYPTION_KEYS", "SITE_URL", "ARTIFACT_ORIGIN"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(
        {
            "DEVELOPMENT_SECRETS_DIR": str(tmp_path / "var"),
            "PORT": str(port),
            "REDIS_URL": redis.url,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "MEDIA_ROOT": str(tmp_path / "media"),
            "STATIC_ROOT": str(tmp_path / "static"),
            "WORKER_CONCURRENCY": "1",
            # A host of its own: its janitor sweeps its own sandboxes, never other tests'.
            "SANDBOX_HOST_ID": f"dev-server-{tmp_path.name}"[:63],
        }
    )
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "platform/dev/run.sh"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (port_open("127.0.0.1", port) and port_open("127.0.0.1", port + 1)):
            assert proc.poll() is None, f"run.sh ended:\n{log.read_text(errors='replace')[-3000:]}"
            assert time.monotonic() < deadline, f"not serving after {START_TIMEOUT}s:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)
        yield DevServer(port=port, artifact_port=port + 1, log=log)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        redis.stop()


def free_port_and_the_next() -> int:
    """A free port whose successor is free too: `make run` serves artifacts on PORT + 1.
    Both are tried by binding them (a port no server listens on may still be taken by a
    client connection's own end, and then daphne cannot listen on it)."""
    while True:
        port = free_port()
        if port < 65535 and _bindable(port) and _bindable(port + 1):
            return port


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as the kernel writes them) of TCP sockets listening on `port`."""
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, local_port = local.rsplit(":", 1)
            if state == "0A" and int(local_port, 16) == port:  # 0A: LISTEN
                addresses.add(address)
    return addresses


def get(port: int, path: str, *, host: str) -> int:
    """The status of GET `path` on 127.0.0.1:`port`, as a browser that typed `host` asks for it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": host})
        return connection.getresponse().status
    finally:
        connection.close()


def test_make_run_listens_on_loopback_only(dev_server: DevServer) -> None:
    assert listening_addresses(dev_server.port) == {"0100007F"}  # 127.0.0.1, nothing else
    assert listening_addresses(dev_server.artifact_port) == {"0100007F"}


def test_make_run_serves_the_platform_at_localhost_and_127_0_0_1_and_artifacts_on_the_next_port(
    dev_server: DevServer,
) -> None:
    port, artifact_port = dev_server.port, dev_server.artifact_port
    assert get(port, "/accounts/login/", host=f"localhost:{port}") == 200
    assert get(port, "/accounts/login/", host=f"127.0.0.1:{port}") == 200
    # The artifact origin serves artifacts and nothing else.
    assert get(artifact_port, "/accounts/login/", host=f"localhost:{artifact_port}") == 404
