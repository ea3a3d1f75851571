"""Which events make deliveries: a run's ending (by its status), a new version (not one whose files
are those of the version it continued from), a schedule pausing; nothing for private creations,
nor for webhooks switched off or that did not ask."""

from __future__ import annotations

from typing import Any

import pytest

from creations.models import Run, RunStatus, Visibility
from creations.runs.services import creation_submit, run_refine
from creations.runs.state import run_finish
from creations.webhooks.models import WebhookDelivery
from creations.webhooks.services import DELIVER_TASK_NAME, webhook_create, webhook_update
from tests.support.artifacts import Output, add_artifact
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db
EVERYTHING = ["run.succeeded", "run.failed", "run.cancelled", "version.made", "schedule.paused"]


@pytest.fixture(autouse=True)
def queued(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The deliveries sent to the broker (none is: the test looks at what would be)."""
    sent: list[Any] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda *args, **kwargs: None)

    def send_task(name: str, args: list[Any]) -> None:
        if name == DELIVER_TASK_NAME:  # not the other tasks a run's ending sends (its notification e-mails)
            sent.append(args[0])

    monkeypatch.setattr("celery.current_app.send_task", send_task)
    return sent


def _ended(run: Run, files: dict[str, bytes], status: RunStatus = RunStatus.SUCCEEDED) -> Run:
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    for path, data in files.items():
        add_artifact(run, Output(path, data))
    assert run_finish(run_id=run.pk, status=status, reason="ended")
    run.refresh_from_db()
    return run


def _events() -> list[str]:
    return list(WebhookDelivery.objects.order_by("pk").values_list("event", flat=True))


def test_runs_ending_and_new_versions_are_delivered_to_the_webhooks_that_asked(
    team: Team, django_capture_on_commit_callbacks: Any, queued: list[Any]
) -> None:
    endpoint = ModelEndpoint.objects.create(
        workspace=team.workspace, name="m", base_url="http://127.0.0.1:9/v1", model="m"
    )
    everything = webhook_create(
        workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/a", events=EVERYTHING
    )
    webhook_create(workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/b", events=["run.failed"])
    switched_off = webhook_create(
        workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/c", events=EVERYTHING
    )
    webhook_update(webhook=switched_off.webhook, user=team.owner, is_active=False)

    with django_capture_on_commit_callbacks(execute=True):
        v1 = creation_submit(workspace=team.workspace, author=team.member, brief="a report", model_endpoint=endpoint)
        _ended(v1, {"report.md": b"one"})
        v2 = run_refine(run=v1, user=team.member, instruction="again")
        _ended(v2, {"report.md": b"one"})  # the same files: no new version to announce
        v3 = run_refine(run=v2, user=team.member, instruction="again")
        _ended(v3, {}, status=RunStatus.TIMED_OUT)
    assert _events() == ["run.succeeded", "version.made", "run.succeeded", "run.failed", "run.failed"]
    made = WebhookDelivery.objects.filter(webhook=everything.webhook).first()
    assert made is not None
    assert made.payload["data"]["run"]["version"] == 3
    assert made.payload["data"]["run"]["status"] == "timed_out"
    assert made.payload["data"]["creation"]["url"].endswith(f"/creations/{v1.creation_id}/")
    assert sorted(queued) == sorted(WebhookDelivery.objects.values_list("pk", flat=True))  # each one queued


def test_a_private_creation_makes_no_delivery(team: Team, django_capture_on_commit_callbacks: Any) -> None:
    webhook_create(workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/a", events=EVERYTHING)
    with django_capture_on_commit_callbacks(execute=True):
        run = creation_submit(
            workspace=team.workspace, author=team.member, brief="diary", visibility=Visibility.PRIVATE
        )
        _ended(run, {"diary.md": b"dear"})
    assert _events() == []
