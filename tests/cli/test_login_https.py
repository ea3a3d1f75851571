"""`atelier login` sends the token over https unless the server is this machine: an
address without a scheme means https, and plain http to another machine is refused
(before anything is sent) unless the person says --insecure."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from atelier_cli.credentials import is_loopback
from atelier_cli.exit_status import ExitStatus
from tests.cli.fake_api import FakeApi
from tests.cli.running import Atelier, AtelierOn

TOKEN = "atl_login_" + "1" * 40
WORKSPACES = [{"slug": "ana", "name": "Ana", "is_personal": True, "role": "owner"}]


@pytest.fixture
def api() -> FakeApi:
    return FakeApi({("GET", "/workspaces"): lambda request: httpx.Response(200, json=WORKSPACES)})


@pytest.fixture
def atelier(atelier_on: AtelierOn, api: FakeApi) -> Atelier:
    return atelier_on(api.transport())


def saved(tmp_path: Path) -> dict[str, str] | None:
    path = tmp_path / "config/atelier/config.json"
    return json.loads(path.read_text()) if path.exists() else None


def test_an_address_without_a_scheme_is_reached_over_https(atelier: Atelier, api: FakeApi, tmp_path: Path) -> None:
    outcome = atelier("login", "--url", "atelier.example.net", stdin=TOKEN + "\n", token=None)

    assert outcome.status == ExitStatus.OK, outcome.err
    assert [str(request.url) for request in api.requests] == ["https://atelier.example.net/api/v1/workspaces"]
    assert saved(tmp_path) == {"url": "https://atelier.example.net", "token": TOKEN}


@pytest.mark.parametrize("url", ["http://atelier.example.net", "http://10.0.0.7:8000", "http://[2001:db8::7]/"])
def test_plain_http_to_another_machine_is_refused_before_anything_is_sent(
    atelier: Atelier, api: FakeApi, tmp_path: Path, url: str
) -> None:
    outcome = atelier("login", "--url", url, stdin=TOKEN + "\n", token=None)

    assert outcome.status == ExitStatus.INSECURE == 11
    secure = "https://" + url.removeprefix("http://").rstrip("/")
    assert outcome.err == (
        f"Error: {url.rstrip('/')} is plain http to another machine: your token would cross the network readable "
        f"by anyone on the way. Use {secure}, or add --insecure if you trust every network in between. "
        "Nothing was saved.\n"
    )
    assert api.requests == []
    assert saved(tmp_path) is None

    as_json = atelier("login", "--url", url, "--json", stdin=TOKEN + "\n", token=None)
    assert as_json.status == ExitStatus.INSECURE
    assert (as_json.error()["error"], as_json.error()["exit_status"]) == ("insecure", 11)


def test_insecure_allows_plain_http_to_another_machine(atelier: Atelier, api: FakeApi, tmp_path: Path) -> None:
    outcome = atelier("login", "--url", "http://atelier.example.net", "--insecure", stdin=TOKEN + "\n", token=None)

    assert outcome.status == ExitStatus.OK, outcome.err
    assert [str(request.url) for request in api.requests] == ["http://atelier.example.net/api/v1/workspaces"]
    assert saved(tmp_path) == {"url": "http://atelier.example.net", "token": TOKEN}


@pytest.mark.parametrize("url", ["http://localhost:8000", "http://127.0.0.1:8000", "http://[::1]:8000"])
def test_plain_http_to_this_machine_needs_no_flag(atelier: Atelier, tmp_path: Path, url: str) -> None:
    outcome = atelier("login", "--url", url, stdin=TOKEN + "\n", token=None)

    assert outcome.status == ExitStatus.OK, outcome.err
    assert saved(tmp_path) == {"url": url, "token": TOKEN}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),
        ("atelier.localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("localhost.example.net", False),
        ("atelier.test", False),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        # Mapped: Python 3.13 calls it loopback, earlier versions do not; never taken as this machine.
        ("::ffff:127.0.0.1", False),
        ("", False),
    ],
)
def test_this_machine_is_localhost_127_0_0_0_8_and_1(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
