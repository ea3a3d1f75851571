"""Web runs and the terminal share one sandbox session, and with it the
overlapped start: the model is asked for the first step while the sandbox is
still starting, so a cold start costs no extra wait before the first reply."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from creations.models import RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from sandboxes.agent import AgentLimits, model_client_for
from sandboxes.agent.one_shot import new_run_id, run_one_shot
from sandboxes.pool import ColdStartProvider
from sandboxes.runtime import Sandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit

pytestmark = [pytest.mark.docker]

WAIT_FOR_THE_MODEL_SECONDS = 60


class StartsOnlyOnceTheModelWasAsked:
    """A real (gVisor) provider whose acquire waits for the model's first request.
    A caller that starts the sandbox before asking the model never gets one."""

    def __init__(self, first_request: threading.Event) -> None:
        self.first_request = first_request
        self.inner = ColdStartProvider()
        self.acquired_at: float | None = None

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        if not self.first_request.wait(timeout=WAIT_FOR_THE_MODEL_SECONDS):
            raise RuntimeError("the sandbox was needed before the model was asked anything")
        sandbox = self.inner.acquire(labels=labels)
        self.acquired_at = time.monotonic()
        return sandbox

    def release(self, sandbox: Sandbox) -> None:
        self.inner.release(sandbox)


def _script(first_request: threading.Event, asked_at: list[float]) -> list[Any]:
    def first(body: dict[str, Any]) -> Any:
        asked_at.append(time.monotonic())
        first_request.set()
        return bash("echo hello > /testbed/output/hello.txt", "Writing a file.")

    return [first, submit_reply("A file.")]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_web_run_asks_the_model_before_its_sandbox_has_started(
    sandbox_image: str, team: Team, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_request, asked_at = threading.Event(), list[float]()
    provider = StartsOnlyOnceTheModelWasAsked(first_request)
    monkeypatch.setattr("creations.runs.execution.get_provider", lambda: provider)
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)  # run here, not on a worker
    endpoint = scripted_endpoint(team, scripted_model, _script(first_request, asked_at))
    run = submit(team, endpoint, brief="write hello")

    assert run_claim_next(worker="test") == run.pk
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert [a.path for a in run.artifacts.all()] == ["hello.txt"]
    assert provider.acquired_at is not None
    assert asked_at[0] < provider.acquired_at


def test_the_terminal_asks_the_model_before_its_sandbox_has_started(
    sandbox_image: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    first_request, asked_at = threading.Event(), list[float]()
    provider = StartsOnlyOnceTheModelWasAsked(first_request)
    scripted_model.play([])
    script = _script(first_request, asked_at)
    scripted_model.exhausted = lambda body: script[
        min(sum(1 for m in body.get("messages", []) if m.get("role") == "assistant"), 1)
    ]

    result = run_one_shot(
        provider=provider,
        model=model_client_for(base_url=scripted_model.base_url, model=scripted_model.model),
        brief="write hello",
        limits=AgentLimits(max_steps=5, max_wall_seconds=120),
        input_files={},
        output_dir=tmp_path,
        emit=lambda event: None,
        cancel=threading.Event(),
        run_id=new_run_id(),
    )

    assert result.outcome.reason == "submitted"
    assert (tmp_path / "hello.txt").read_text() == "hello\n"
    assert provider.acquired_at is not None
    assert asked_at[0] < provider.acquired_at
