"""A plain task whose worker died is failed by the beat sweep, saying so, and frees its slot for the
next task; an answer arriving after the sweep does not settle it a second time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from creations.evaluations.models import EvaluationItem, EvaluationStatus, ItemStatus
from creations.evaluations.plain import Completion, complete_plain
from creations.evaluations.services import evaluation_start, plain_item_answer, plain_items_fail_stale
from creations.evaluations.suites import suite_upload
from creations.models import UsageRecord
from devstack.scripted_model import ScriptedModel, reply
from tests.creations.evaluations.conftest import PlainMessages, suite_lines
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db

STALE = 600.0


def test_a_plain_task_whose_worker_died_is_failed_and_the_next_one_released(
    team: Team,
    plain_messages: PlainMessages,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.EVALUATION_PLAIN_TASK_STALE_SECONDS = STALE
    swept: list[int] = []

    def answer_after_the_sweep(**kwargs: Any) -> Completion:
        """The worker was only slow: the sweep fails its task while the model is still answering."""
        completion = complete_plain(**kwargs)
        swept.append(plain_items_fail_stale())
        return completion

    monkeypatch.setattr("creations.evaluations.services.complete_plain", answer_after_the_sweep)
    with ScriptedModel([reply("It is 1.", usage={"prompt_tokens": 30, "completion_tokens": 5})]) as model:
        endpoint = ModelEndpoint.objects.create(
            workspace=team.workspace, name="scripted", base_url=model.base_url, model=model.model
        )
        suite = suite_upload(workspace=team.workspace, user=team.member, name="Squares", data=suite_lines(3))
        with django_capture_on_commit_callbacks(execute=True):
            evaluation = evaluation_start(
                workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="plain"
            )
        first, second = plain_messages  # concurrency 2: the third task waits
        EvaluationItem.objects.filter(pk=first).update(started_at=timezone.now() - timedelta(seconds=STALE + 1))
        EvaluationItem.objects.filter(pk=second).update(started_at=timezone.now() - timedelta(seconds=STALE - 60))

        with django_capture_on_commit_callbacks(execute=True):
            plain_item_answer(item_id=first)

    assert swept == [1]
    dead = EvaluationItem.objects.get(pk=first)
    assert (dead.status, dead.correct, dead.why, dead.answer) == (
        ItemStatus.FAILED,
        False,
        "Its worker stopped before the model answered.",
        "",  # the late answer settles nothing a second time
    )
    assert UsageRecord.objects.filter(workspace=team.workspace).count() == 1  # the tokens it spent still count
    assert EvaluationItem.objects.get(pk=second).status == ItemStatus.IN_FLIGHT  # not stale yet
    assert len(plain_messages) == 3  # the freed slot went to the third task
    assert EvaluationItem.objects.get(pk=plain_messages[2]).status == ItemStatus.IN_FLIGHT
    assert plain_items_fail_stale() == 0  # nothing more is stale
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.RUNNING


def test_beat_runs_the_stale_plain_task_sweep_every_minute(settings: Any) -> None:
    import creations.evaluations.tasks  # noqa: F401 - registers the tasks, as the worker's autodiscovery does
    from config.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["evaluations-fail-stale-plain-tasks"]
    assert entry["task"] in app.tasks
    assert entry["schedule"] == 60.0
    assert settings.EVALUATION_PLAIN_TASK_STALE_SECONDS == 1800.0  # three times a completion's longest
