"""Errors as sentences: the API's problem `detail`, never a trace; which server could not be reached."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from atelier_cli.answers import RUN, WORKSPACES
from atelier_cli.errors import ApiError
from atelier_cli.exit_status import ExitStatus
from atelier_cli.main import main
from tests.cli.fake_api import FakeApi
from tests.support import free_port

PROBLEM = {"Content-Type": "application/problem+json"}


def problem(status: int, detail: str) -> httpx.Response:
    return httpx.Response(status, headers=PROBLEM, json={"title": "x", "status": status, "detail": detail})


def test_an_error_answer_is_its_detail() -> None:
    api = FakeApi({("POST", "/runs/4/cancel"): lambda r: problem(409, "This run has already ended.")})
    with pytest.raises(ApiError, match=r"^This run has already ended\.$") as caught:
        api.client().post("/runs/4/cancel", RUN)
    assert caught.value.status == 409


def test_a_refused_token_says_how_to_log_in_again() -> None:
    api = FakeApi({("GET", "/workspaces"): lambda r: problem(401, "This token was revoked.")})
    with pytest.raises(ApiError, match=r"This token was revoked\. Run `atelier login`"):
        api.client().get("/workspaces", WORKSPACES)


def test_an_answer_that_is_not_ours_is_described_not_dumped() -> None:
    api = FakeApi({("GET", "/workspaces"): lambda r: httpx.Response(502, text="<html>Bad gateway</html>")})
    with pytest.raises(ApiError, match=r"^The server answered 502 Bad Gateway\.$"):
        api.client().get("/workspaces", WORKSPACES)


def test_a_rate_limit_is_waited_out_when_the_server_says_how_long() -> None:
    answers = iter(
        [httpx.Response(429, headers={**PROBLEM, "Retry-After": "3"}, json={}), httpx.Response(200, json=[])]
    )
    api = FakeApi({("GET", "/workspaces"): lambda r: next(answers)})
    assert api.client().get("/workspaces", WORKSPACES) == []
    assert len(api.sent("GET", "/workspaces")) == 2


def test_the_command_names_the_server_it_could_not_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("ATELIER_URL", url)
    monkeypatch.setenv("ATELIER_TOKEN", "atl_x")
    assert main(["runs"]) == ExitStatus.UNREACHABLE
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Could not reach {url}: the connection was refused")
    assert "Traceback" not in err


def test_a_missing_input_file_stops_before_anything_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATELIER_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("ATELIER_TOKEN", "atl_x")
    assert main(["create", "a map", "--input", str(tmp_path / "missing.csv")]) == ExitStatus.USAGE
    assert capsys.readouterr().err == f"Error: {tmp_path / 'missing.csv'}: no such file.\n"
