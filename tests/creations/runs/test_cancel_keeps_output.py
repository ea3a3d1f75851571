"""A cancel stops the agent at once and keeps what it had made, however long copying that takes:
the grace after a cancel bounds how long the agent has to stop, not the copy. A loaded host
(two engines, both cores busy) can take longer than the grace to copy a few files out."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from creations.models import Artifact, RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from creations.runs.services import run_cancel
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from sandboxes.runtime import CommandResult, CopiedFile, CopyOutReport, OutputCallback, Sandbox
from tests.support.fakes import FakeSandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit, wait_for_final

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

GRACE_SECONDS = 0.2
COPY_SECONDS = 1.0  # five graces: the copy of a loaded host


@dataclass
class BusySandbox(FakeSandbox):
    """Its one command works until the sandbox is stopped; copying its output out is slow."""

    working: threading.Event = field(default_factory=threading.Event)

    def run_command(self, command: str, *, timeout: float, on_output: OutputCallback | None = None) -> CommandResult:
        if on_output is not None:
            on_output("working\n")
        self.working.set()
        deadline = time.monotonic() + timeout
        while not self.stopped and time.monotonic() < deadline:
            time.sleep(0.02)
        return CommandResult(exit_code=None, output="working\n", duration=timeout, sandbox_died=self.stopped)

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        time.sleep(COPY_SECONDS)
        if self.stopped:
            raise RuntimeError("No such container")
        draft = dest_dir / "draft.txt"
        draft.write_text("the first half\n")
        return CopyOutReport(files=[CopiedFile(path="draft.txt", local_path=draft, size=draft.stat().st_size)])


class OneBusySandbox:
    def __init__(self) -> None:
        self.sandbox = BusySandbox()

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        return self.sandbox

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()


@pytest.fixture
def busy_sandboxes(monkeypatch: pytest.MonkeyPatch, settings: Any) -> OneBusySandbox:
    """Runs execute in this test's process, in one busy fake sandbox, woken by nobody."""
    settings.RUN_CANCEL_GRACE_SECONDS = GRACE_SECONDS
    settings.RUN_CANCEL_POLL_SECONDS = 0.1
    provider = OneBusySandbox()
    monkeypatch.setattr("creations.runs.execution.get_provider", lambda: provider)
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)
    return provider


def test_a_cancel_keeps_the_files_made_so_far_when_copying_them_takes_longer_than_the_grace(
    team: Team, scripted_model: ScriptedModel, busy_sandboxes: OneBusySandbox
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash("make the first half && sleep 60"), submit_reply()])
    run = submit(team, endpoint, brief="a long piece")
    assert run_claim_next(worker="test") == run.pk
    worker = threading.Thread(target=run_execute, kwargs={"run_id": run.pk}, daemon=True)
    worker.start()
    assert busy_sandboxes.sandbox.working.wait(timeout=30)

    assert run_cancel(run=run, user=team.owner)
    run = wait_for_final(run, timeout=30)
    worker.join(timeout=30)

    assert run.status == RunStatus.CANCELLED, run.reason
    assert [a.path for a in Artifact.objects.filter(run=run)] == ["draft.txt"]
    assert busy_sandboxes.sandbox.stopped  # released once its output was out
    collected = run.events.get(kind="artifacts").payload
    assert [item["path"] for item in collected["items"]] == ["draft.txt"]
