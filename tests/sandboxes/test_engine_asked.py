"""What a worker asks its Docker engine, and how often: the API version once per process, whether
it answers on every health beat, and whether it still has the runtime and the image (`docker
info`, for which the engine starts processes of its own) only every SANDBOX_ENGINE_CHECK_SECONDS
or after a problem. What /healthz/workers reads of the host follows each answer.

The engine here is a stand-in on a Unix socket that docker-py reaches over real HTTP, as it does
dockerd, and that records each request; tests/creations/runs/test_worker_hosts.py has a worker
check the real engine.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from sandboxes import host_presence
from sandboxes.engine_client import _api_version, engine_client
from sandboxes.host_keeper import HostKeeper
from sandboxes.image import sandbox_image_tag
from tests.support.markers import STAND_IN_ENGINES

API_VERSION = "1.44"


class StandInEngine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path) -> None:
        self.requests: list[str] = []
        self.runtimes: dict[str, Any] = {"runc": {"path": "runc"}, "runsc": {"path": "/usr/bin/runsc"}}
        self.images = {sandbox_image_tag()}
        self.api_version = API_VERSION
        self.failing: set[str] = set()  # requests answered with a server error, by how their path ends
        super().__init__(str(path), _Answers)

    def asked(self, what: str) -> int:
        return sum(1 for path in self.requests if path.endswith(what))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


class _Answers(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StandInEngine

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.server.requests.append(path)
        unversioned = path.split("/", 2)[2] if path.startswith("/v1.") else path.lstrip("/")
        asked_version = path.split("/", 2)[1][1:] if path.startswith("/v1.") else None
        if any(path.endswith(end) for end in self.server.failing):
            self._json({"message": "the engine failed"}, status=500)
        elif asked_version is not None and _version(asked_version) > _version(self.server.api_version):
            most = self.server.api_version
            self._json(
                {"message": f"client version {asked_version} is too new. Maximum supported API version is {most}"},
                status=400,
            )
        elif unversioned == "version":
            self._json({"ApiVersion": self.server.api_version, "MinAPIVersion": "1.24", "Version": "26.1.0"})
        elif unversioned == "_ping":
            self._answer(200, b"OK", "text/plain")
        elif unversioned == "info":
            self._json({"Runtimes": self.server.runtimes, "CgroupDriver": "cgroupfs", "CgroupVersion": "2"})
        elif unversioned.startswith("images/") and unversioned.endswith("/json"):
            name = unversioned[len("images/") : -len("/json")]
            if name in self.server.images:
                self._json({"Id": "sha256:" + "a" * 64, "RepoTags": [name]})
            else:
                self._json({"message": f"No such image: {name}"}, status=404)
        else:
            self._json({"message": "not a request this stand-in knows"}, status=404)

    def _json(self, body: dict[str, Any], *, status: int = 200) -> None:
        self._answer(status, json.dumps(body).encode(), "application/json")

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
        pass


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInEngine]:
    """A stand-in engine this process's clients reach (DOCKER_HOST), its API version not yet asked."""
    socket_path = tmp_path / "docker.sock"
    server = StandInEngine(socket_path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    address = f"unix://{socket_path}"
    monkeypatch.setenv("DOCKER_HOST", address)
    STAND_IN_ENGINES.add(address)
    _api_version.reset()
    yield server
    server.shutdown()
    server.server_close()
    _api_version.reset()
    STAND_IN_ENGINES.discard(address)


def _host(host_id: str) -> host_presence.HostStatus:
    (host,) = [host for host in host_presence.alive_hosts() if host.host_id == host_id]
    return host


@pytest.fixture
def keeper(engine: StandInEngine, platform_on_own_redis: str, settings: Any) -> HostKeeper:
    """A worker's keeper of the stand-in's host, its whole check due every hour, not yet beating."""
    settings.SANDBOX_ENGINE_CHECK_SECONDS = 3600
    return HostKeeper(worker="w@test:1")


def _whole_check_due(keeper: HostKeeper, settings: Any) -> None:
    """The next beat checks it all, as once SANDBOX_ENGINE_CHECK_SECONDS have passed."""
    settings.SANDBOX_ENGINE_CHECK_SECONDS = 0
    keeper.beat_once()
    settings.SANDBOX_ENGINE_CHECK_SECONDS = 3600


def test_a_process_asks_its_engine_for_the_api_version_once_however_many_clients_it_makes(
    engine: StandInEngine,
) -> None:
    for _ in range(3):
        client = engine_client(timeout=5)
        assert client.ping()
        client.close()
    assert engine.asked("/version") == 1
    assert engine.asked(f"/v{API_VERSION}/_ping") == 3  # the version asked is the one every client speaks


def test_an_engine_that_does_not_answer_leaves_no_version_behind(engine: StandInEngine, tmp_path: Path) -> None:
    engine.shutdown()
    engine.server_close()
    Path(engine.server_address).unlink()  # type: ignore[arg-type]
    with pytest.raises(docker.errors.DockerException, match=r"(?i)connection|no such file"):
        engine_client(timeout=5)
    revived = StandInEngine(Path(str(engine.server_address)))
    threading.Thread(target=revived.serve_forever, daemon=True).start()
    try:
        engine_client(timeout=5).close()
        assert revived.asked("/version") == 1  # asked again, now that it answers
    finally:
        revived.shutdown()
        revived.server_close()


def test_beats_ask_whether_the_engine_answers_and_its_runtime_and_image_only_when_the_whole_check_is_due(
    engine: StandInEngine, keeper: HostKeeper, settings: Any
) -> None:
    for _ in range(4):
        keeper.beat_once()
    assert engine.asked("/info") == 1
    assert engine.asked(f"/images/{sandbox_image_tag()}/json") == 1
    assert engine.asked("/_ping") == 3
    host = _host(keeper.host_id)
    assert host.engine_ok
    assert host.problem == ""

    _whole_check_due(keeper, settings)
    assert engine.asked("/info") == 2


def test_a_lost_runtime_shows_at_the_next_whole_check_and_its_return_at_the_next_beat(
    engine: StandInEngine, keeper: HostKeeper, settings: Any
) -> None:
    keeper.beat_once()
    del engine.runtimes[settings.SANDBOX_RUNTIME]
    keeper.beat_once()  # between whole checks: the engine answers, the runtime is taken as it was
    assert _host(keeper.host_id).engine_ok

    _whole_check_due(keeper, settings)
    host = _host(keeper.host_id)
    assert not host.engine_ok
    assert host.problem == f"the engine has no {settings.SANDBOX_RUNTIME} runtime"

    engine.runtimes[settings.SANDBOX_RUNTIME] = {"path": "/usr/bin/runsc"}
    infos = engine.asked("/info")
    keeper.beat_once()  # after a problem every beat checks it all again
    assert engine.asked("/info") == infos + 1
    assert _host(keeper.host_id).engine_ok


def test_an_engine_that_stops_answering_shows_at_the_next_beat(engine: StandInEngine, keeper: HostKeeper) -> None:
    keeper.beat_once()
    engine.shutdown()
    engine.server_close()
    keeper.beat_once()
    host = _host(keeper.host_id)
    assert not host.engine_ok
    assert host.problem == "the Docker engine does not answer"


def test_an_engine_failing_to_look_up_the_image_is_reported_and_the_beats_go_on(
    engine: StandInEngine, keeper: HostKeeper
) -> None:
    engine.failing.add(f"/images/{sandbox_image_tag()}/json")
    keeper.beat_once()
    host = _host(keeper.host_id)
    assert not host.engine_ok
    assert host.problem == "the Docker engine failed a check (500: the engine failed)"  # it answered, with an error

    engine.failing.clear()
    keeper.beat_once()
    assert _host(keeper.host_id).engine_ok


def test_a_client_of_the_real_engine_is_still_refused_to_a_test_not_marked_docker(
    engine: StandInEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCKER_HOST")  # docker-py's default: the engine of this machine
    _api_version.reset()
    with pytest.raises(pytest.fail.Exception, match="not marked `docker`"):
        engine_client(timeout=5)
    assert engine.requests == []


def test_an_engine_back_as_an_older_one_is_asked_its_version_again_and_works(
    engine: StandInEngine, keeper: HostKeeper
) -> None:
    keeper.beat_once()
    engine.api_version = "1.41"  # restarted as an older engine, which refuses the version asked before
    keeper.beat_once()
    assert not _host(keeper.host_id).engine_ok
    keeper.beat_once()
    assert _host(keeper.host_id).engine_ok
    assert engine.asked("/version") == 2
    assert engine.asked("/v1.41/info") == 1
