"""Creating a run: a retry after a lost answer sends the same Idempotency-Key, so the
server makes the run once; another invocation is another run."""

from __future__ import annotations

import json

import httpx
import pytest

from atelier_cli.commands import create
from atelier_cli.commands.create import run_create
from atelier_cli.errors import Unreachable
from atelier_cli.main import main
from tests.cli.fake_api import FakeApi, run_answer

BODY = {"brief": "a poster", "input_ids": []}


def test_a_retry_after_a_lost_answer_sends_the_same_key() -> None:
    answers = iter(["lost", "created"])

    def create(request: httpx.Request) -> httpx.Response:
        if next(answers) == "lost":
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(201, json=run_answer(9, web_url="http://atelier.test/r/9/"))

    api = FakeApi({("POST", "/workspaces/ana/runs"): create})
    assert run_create(api.client(), "ana", BODY).id == 9
    first, retry = api.sent("POST", "/workspaces/ana/runs")
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
    assert len(first.headers["Idempotency-Key"]) == 36


def test_each_invocation_has_a_key_of_its_own() -> None:
    api = FakeApi({("POST", "/workspaces/ana/runs"): lambda request: httpx.Response(201, json=run_answer(9))})
    run_create(api.client(), "ana", BODY)
    run_create(api.client(), "ana", BODY)
    keys = {request.headers["Idempotency-Key"] for request in api.sent("POST", "/workspaces/ana/runs")}
    assert len(keys) == 2


def test_it_stops_retrying_and_says_which_server_it_could_not_reach() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    api = FakeApi({("POST", "/workspaces/ana/runs"): refuse})
    with pytest.raises(Unreachable, match=r"Could not reach http://atelier\.test"):
        run_create(api.client(), "ana", BODY)
    keys = {request.headers["Idempotency-Key"] for request in api.sent("POST", "/workspaces/ana/runs")}
    assert len(api.sent("POST", "/workspaces/ana/runs")) == 4
    assert len(keys) == 1


def test_artifacts_of_earlier_runs_are_named_as_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi({("POST", "/workspaces/ana/runs"): lambda request: httpx.Response(201, json=run_answer(9))})
    monkeypatch.setattr(create, "api_client", api.client)
    assert (
        main(["create", "the same, in blue", "--workspace", "ana", "--from-artifact", "4", "--from-artifact", "12"])
        == 0
    )
    (sent,) = api.sent("POST", "/workspaces/ana/runs")
    assert json.loads(sent.content)["artifact_ids"] == [4, 12]
