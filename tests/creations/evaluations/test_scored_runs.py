"""An evaluation's sandbox task is scored, not shown or refined: its run stores its outputs and is
scored as any run, but keeps no snapshot of its /testbed and starts no preview sandbox, the two
things that took most of a task's time after its agent ended. An ordinary run, executed the same
way, keeps both. Executed in this process in fake sandboxes (gVisor is tests/end_to_end's)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.test import Client

from creations.evaluations.models import EvaluationItem, ItemStatus
from creations.evaluations.services import evaluation_start
from creations.evaluations.suites import suite_upload
from creations.models import Artifact, Run, RunSnapshot, RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import NOT_KEPT_SCORED, run_execute
from creations.runs.selectors import run_is_scored_not_kept
from creations.runs.services import run_refine
from devstack.scripted_model import ScriptedModel
from devstack.scripted_model import submit as submit_reply
from sandboxes.docker_runtime import SandboxError
from sandboxes.runtime import CopiedFile, CopyOutReport, Sandbox
from tests.creations.evaluations.conftest import suite_lines
from tests.support.fakes import FakeSandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@dataclass
class AnsweringSandbox(FakeSandbox):
    """A fake sandbox whose output/ holds answer.txt, the right answer to "What is 1 squared?"."""

    written: dict[str, list[str]] = field(default_factory=dict)  # by folder, the names written in

    def write_files(self, files: Mapping[str, bytes], *, dest: str = "/testbed/input") -> None:
        self.written.setdefault(dest, []).extend(files)

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        answer = dest_dir / "answer.txt"
        answer.write_text("1\n")
        return CopyOutReport(files=[CopiedFile(path="answer.txt", local_path=answer, size=2)])


@dataclass
class AnsweringSandboxes:
    made: list[AnsweringSandbox] = field(default_factory=list)

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        self.made.append(AnsweringSandbox())
        return self.made[-1]

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()


@dataclass
class PreviewSandboxes:
    """The runs a preview sandbox was asked for; none starts here (previews are best effort)."""

    asked_for: list[int] = field(default_factory=list)

    def start(self, run_id: int) -> None:
        self.asked_for.append(run_id)
        raise SandboxError("no preview sandbox in this test")


@pytest.fixture
def sandboxes(monkeypatch: pytest.MonkeyPatch) -> AnsweringSandboxes:
    provider = AnsweringSandboxes()
    monkeypatch.setattr("creations.runs.execution.get_provider", lambda: provider)
    return provider


@pytest.fixture
def previews(monkeypatch: pytest.MonkeyPatch) -> PreviewSandboxes:
    preview_sandboxes = PreviewSandboxes()
    monkeypatch.setattr("creations.artifacts.previews._start_sandbox", preview_sandboxes.start)
    return preview_sandboxes


def _evaluation_run(team: Team, scripted_model: ScriptedModel) -> Run:
    endpoint = scripted_endpoint(team, scripted_model, [submit_reply("The answer is in answer.txt.")])
    suite = suite_upload(workspace=team.workspace, user=team.member, name="Squares", data=suite_lines(1))
    evaluation = evaluation_start(
        workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="sandbox"
    )
    run = EvaluationItem.objects.get(evaluation=evaluation).run
    assert run is not None
    return run


def test_only_an_evaluations_task_is_a_run_scored_and_not_kept(team: Team, scripted_model: ScriptedModel) -> None:
    scored = _evaluation_run(team, scripted_model)
    ordinary = submit(team, scripted_endpoint(team, scripted_model, []))
    assert run_is_scored_not_kept(run_id=scored.pk)
    assert not run_is_scored_not_kept(run_id=ordinary.pk)


def test_an_evaluations_task_is_scored_from_its_stored_answer_without_snapshot_or_previews(
    team: Team, scripted_model: ScriptedModel, sandboxes: AnsweringSandboxes, previews: PreviewSandboxes
) -> None:
    scored = _evaluation_run(team, scripted_model)
    assert run_claim_next(worker="test") == scored.pk
    run_execute(run_id=scored.pk)

    scored.refresh_from_db()
    assert scored.status == RunStatus.SUCCEEDED, scored.reason
    item = EvaluationItem.objects.get(run=scored)
    assert (item.status, item.correct, item.answer_source, item.answer) == (ItemStatus.SCORED, True, "answer.txt", "1")
    assert item.tokens > 0
    (answer,) = Artifact.objects.filter(run=scored)
    assert (answer.path, answer.preview.name, answer.rendered.name) == ("answer.txt", "", "")
    assert not RunSnapshot.objects.filter(run=scored).exists()
    # Said on its page as any version whose files were not kept is said.
    assert list(scored.events.filter(kind="snapshot").values_list("payload", flat=True)) == [
        {"size": 0, "note": NOT_KEPT_SCORED}
    ]
    assert previews.asked_for == []
    client = Client()
    client.force_login(team.viewer)
    page = client.get(scored.get_absolute_url())
    assert page.status_code == 200
    assert "answer.txt" in page.content.decode()
    assert NOT_KEPT_SCORED in page.content.decode()

    # A refine of it starts from its deliverables, as from any version whose files were not kept;
    # the refine is an ordinary run, and keeps both.
    refine = run_refine(run=scored, user=team.member, instruction="Say how you computed it.")
    assert run_claim_next(worker="test") == refine.pk
    run_execute(run_id=refine.pk)
    refine.refresh_from_db()
    assert refine.status == RunStatus.SUCCEEDED, refine.reason
    assert sandboxes.made[-1].written["/testbed/output"] == ["answer.txt"]
    assert RunSnapshot.objects.filter(run=refine).exists()
    # Its answer.txt is shown as a document, as any run's is; plain text needs no preview sandbox for it.
    (refined_answer,) = Artifact.objects.filter(run=refine)
    assert refined_answer.rendered.name
    assert previews.asked_for == []
