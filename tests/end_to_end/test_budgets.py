"""Budgets on a real worker, in real gVisor sandboxes, with a scripted model: a run that
crosses its workspace's month is told to submit, then stopped (quota_exceeded); a run at
its own step limit ends limit_reached; both keep their files. A run whose workspace ran
out while it waited starts nothing. Files past the storage quota are named, not stored."""

from __future__ import annotations

import json

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from creations.models import Artifact, RunEvent, RunStatus, UsageRecord
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from creations.runs.services import creation_delete
from creations.usage.selectors import month_start, workspace_storage_bytes
from devstack.containers import run_containers
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from sandboxes.agent.prompts import SHARED_BUDGET_NOTE
from tests.support.events import verify_events
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit, wait_for_final
from workspaces.models import Workspace

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

MAKE_A_FILE = "mkdir -p /testbed/output && echo draft > /testbed/output/draft.bin"
STEP_USAGE = {"prompt_tokens": 600, "completion_tokens": 10}


@pytest.mark.docker
def test_a_run_that_crosses_the_months_token_budget_is_told_to_submit_then_stopped(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_tokens=1000)
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        # 610 tokens a step: under 1000 after the first, over after the second; the model never submits.
        [bash(MAKE_A_FILE, usage=STEP_USAGE), bash("echo still working", usage=STEP_USAGE)],
    )
    run = wait_for_final(submit(team, endpoint), logs=run_stack.logs)

    assert run.status == RunStatus.QUOTA_EXCEEDED, run.reason
    month = f"{month_start(run.finished_at):%B}"
    assert run.reason.startswith(f"This workspace has used its 1,000 model tokens for {month}; it renews on 1 ")
    assert run.reason.endswith("(UTC). The run was stopped; the files made so far are kept.")
    # Two steps, the crossing, one step with the note, then the stop.
    requests = scripted_model.chat_requests()
    assert len(requests) == 3
    assert SHARED_BUDGET_NOTE in requests[2].messages[-1]["content"]
    assert SHARED_BUDGET_NOTE not in json.dumps(requests[1].messages)
    finished = RunEvent.objects.get(run=run, kind="finished").payload
    assert (finished["reason"], finished["steps"]) == ("budget_exhausted", 3)
    assert run.total_tokens == 3 * 610
    assert list(Artifact.objects.filter(run=run).values_list("path", flat=True)) == ["draft.bin"]
    verify_events(run, must_emit={"status", "step_started", "usage", "finished", "artifacts"})
    assert run_containers(run.pk) == []


def test_a_run_whose_workspace_ran_out_while_it_waited_starts_nothing(
    team: Team, scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: None)  # run here, not on a worker

    def no_sandbox() -> None:
        raise AssertionError("no sandbox may start")

    monkeypatch.setattr("creations.runs.execution.get_provider", no_sandbox)
    run = submit(team, scripted_endpoint(team, scripted_model, [bash("echo hi")]))
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_month_sandbox_seconds=60)
    UsageRecord.objects.create(
        workspace=team.workspace, model_name="scripted", status=RunStatus.SUCCEEDED, sandbox_seconds=60
    )

    assert run_claim_next(worker="test") == run.pk
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.QUOTA_EXCEEDED
    assert run.reason.startswith("This workspace has used its 1 minute of sandbox time for ")
    assert run.reason.endswith(" The run did not start.")
    assert scripted_model.chat_requests() == []


@pytest.mark.docker
def test_a_run_at_its_own_step_limit_ends_limit_reached_with_its_files(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash(MAKE_A_FILE), bash("echo still working")])
    run = wait_for_final(submit(team, endpoint, max_steps=2), logs=run_stack.logs)

    assert run.status == RunStatus.LIMIT_REACHED, run.reason
    assert run.reason == "Stopped at this run's step limit (2 steps); the files made so far are kept."
    assert list(Artifact.objects.filter(run=run).values_list("path", flat=True)) == ["draft.bin"]


@pytest.mark.docker
def test_files_past_the_storage_quota_are_named_on_the_run_and_deleting_frees_the_rest(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    Workspace.objects.filter(pk=team.workspace.pk).update(quota_storage_bytes=1000)
    make_files = (
        "mkdir -p /testbed/output && cd /testbed/output && "
        "head -c 600 /dev/zero > a.bin && head -c 5000 /dev/zero > big.bin && head -c 300 /dev/zero > c.bin"
    )
    endpoint = scripted_endpoint(team, scripted_model, [bash(make_files), submit_reply("three files")])
    run = wait_for_final(submit(team, endpoint), logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    stored = {a.path: a for a in Artifact.objects.filter(run=run)}
    assert sorted(stored) == ["a.bin", "c.bin"]
    assert run.output_bytes == 900
    collected = RunEvent.objects.get(run=run, kind="artifacts").payload
    (rejected,) = collected["rejected"]
    assert rejected["name"] == "big.bin"
    assert rejected["reason"].startswith("Not stored: this 4.9 KB file would pass the workspace's storage quota")
    client = Client()
    client.force_login(team.member)
    for page in (f"/runs/{run.pk}/", f"/runs/{run.pk}/artifacts/", f"/creations/{run.creation_id}/"):
        html = client.get(page).content.decode()
        assert (
            "<code>big.bin</code>: Not stored: this 4.9 KB file would pass the workspace&#x27;s storage quota" in html
        )

    assert workspace_storage_bytes(workspace=team.workspace) == 900
    names = [str(a.file.name) for a in stored.values()]
    assert all(default_storage.exists(name) for name in names)
    creation_delete(creation=run.creation, user=team.member)
    assert workspace_storage_bytes(workspace=team.workspace) == 0
    assert not any(default_storage.exists(name) for name in names)
