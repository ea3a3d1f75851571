"""Evaluations at the service level, on PostgreSQL: suites kept whole or not at all, the demo model
refused, tasks released no faster than the workspace's concurrency, answers read and scored,
plain tasks answered by a real (scripted) model over HTTP and counted in usage, cancel as a whole."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from creations.evaluations.models import Evaluation, EvaluationItem, EvaluationStatus, ItemStatus, Suite
from creations.evaluations.results import evaluation_results, wilson_interval
from creations.evaluations.scoring import ANSWER_MAX_CHARS
from creations.evaluations.services import DEMO_REFUSED, evaluation_cancel, evaluation_start, plain_item_answer
from creations.evaluations.suites import sample_suites_add, suite_upload
from creations.models import IN_FLIGHT_STATUSES, Run, RunStatus, UsageRecord
from creations.runs.admission import run_claim_next
from creations.runs.services import creation_submit
from creations.runs.state import run_finish
from devstack.scripted_model import ScriptedModel, reply
from tests.creations.evaluations.conftest import PlainMessages, suite_lines
from tests.creations.schedules.steps import ended
from tests.support.fixtures.accounts import Team, make_user
from workspaces.models import ModelEndpoint, Role
from workspaces.services import membership_add, workspace_create

pytestmark = pytest.mark.django_db


def upload(team: Team, data: bytes, **kwargs: Any) -> Suite:
    return suite_upload(workspace=team.workspace, user=team.member, name="Squares", data=data, **kwargs)


def test_a_suite_is_kept_whole_or_not_at_all(team: Team) -> None:
    suite = upload(team, suite_lines(3))
    assert list(suite.tasks.values_list("task_id", "expected")) == [("t1", "1"), ("t2", "4"), ("t3", "9")]
    bad = suite_lines(2) + b'\n{"id": "t3", "prompt": "p", "rule": "number", "expected": "nine"}'
    with pytest.raises(ValidationError) as refused:
        upload(team, bad)
    assert refused.value.message_dict["tasks"] == ["Line 3, field “expected”: the expected answer is not a number."]
    assert Suite.objects.count() == 1


def test_a_tasks_files_must_be_files_a_run_takes(team: Team) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tool.exe", b"MZ")
    line = b'{"id": "t", "prompt": "p", "rule": "exact", "expected": "x", "files": ["tool.exe"]}'
    with pytest.raises(ValidationError) as refused:
        upload(team, line, zip_data=buffer.getvalue())
    refusal = "Task “t”, field “files”: tool.exe: this type of file is not accepted."
    assert refused.value.message_dict["tasks"] == [refusal]
    assert not Suite.objects.exists()


def test_viewers_upload_nothing_and_start_nothing(team: Team, endpoint: ModelEndpoint) -> None:
    with pytest.raises(PermissionDenied):
        suite_upload(workspace=team.workspace, user=team.viewer, name="x", data=suite_lines(1))
    suite = upload(team, suite_lines(1))
    with pytest.raises(PermissionDenied):
        evaluation_start(workspace=team.workspace, user=team.viewer, suite=suite, endpoints=[endpoint], modes="plain")


def test_the_sample_suites_are_labelled_and_carry_a_300_kb_document(team: Team) -> None:
    suites = sample_suites_add(workspace=team.workspace, user=team.member)
    assert [(s.name, s.is_sample, s.task_count) for s in suites] == [
        ("Sample: computation where a computer helps", True, 10),
        ("Sample: questions about a 300 KB delivery log", True, 8),
        ("Sample: formatting instructions", True, 6),
    ]
    (log,) = suites[1].files.all()
    assert (log.name, 300 * 1024 <= log.size < 310 * 1024) == ("deliveries.txt", True)
    assert all(task.file_names == ["deliveries.txt"] for task in suites[1].tasks.all())


def test_the_demo_model_cannot_be_evaluated(team: Team) -> None:
    suite = upload(team, suite_lines(2))
    with pytest.raises(ValidationError) as refused:
        evaluation_start(workspace=team.workspace, user=team.member, suite=suite, endpoints=[None], modes="both")
    assert refused.value.message_dict == {"models": [DEMO_REFUSED]}
    assert not Evaluation.objects.exists()


def _in_flight(evaluation: Evaluation) -> int:
    return EvaluationItem.objects.filter(evaluation=evaluation, status=ItemStatus.IN_FLIGHT).count()


def test_thirty_tasks_with_concurrency_two_never_have_more_than_two_in_flight(
    team: Team, endpoint: ModelEndpoint, django_capture_on_commit_callbacks: Any
) -> None:
    team.workspace.quota_concurrent_runs = 2
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    suite = upload(team, suite_lines(30))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_start(
            workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="sandbox"
        )
    most_runs = most_items = 0
    for _ in range(30):
        runs = list(Run.objects.filter(workspace=team.workspace, status__in=[RunStatus.QUEUED, *IN_FLIGHT_STATUSES]))
        most_runs, most_items = max(most_runs, len(runs)), max(most_items, _in_flight(evaluation))
        assert runs, "a task was left waiting with a slot free"
        oldest = min(runs, key=lambda run: run.pk)
        n = int(oldest.creation.brief.split()[2])  # "What is N squared?"
        with django_capture_on_commit_callbacks(execute=True):
            ended(oldest, {"answer.txt": str(n * n).encode()})
    assert (most_runs, most_items) == (2, 2)
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.FINISHED
    assert Run.objects.filter(workspace=team.workspace).count() == 30
    (model,) = evaluation_results(evaluation)
    assert (model.modes[0].counted, model.modes[0].correct) == (30, 30)


def test_another_workspaces_run_starts_before_the_evaluations_next_tasks(
    team: Team, endpoint: ModelEndpoint, django_capture_on_commit_callbacks: Any
) -> None:
    suite = upload(team, suite_lines(30))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_start(workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="sandbox")
    first = run_claim_next(worker="w", host="h")  # the evaluation's first task takes a slot
    assert first is not None
    neighbour = make_user("nina")
    elsewhere = workspace_create(name="Elsewhere", owner=neighbour)
    their_run = creation_submit(workspace=elsewhere, author=neighbour, brief="a poster")
    # Its workspace has nothing in flight: its first run comes before the evaluation's second.
    assert run_claim_next(worker="w", host="h") == their_run.pk


def test_a_sandbox_answer_comes_from_answer_txt_else_the_final_message(
    team: Team, endpoint: ModelEndpoint, django_capture_on_commit_callbacks: Any
) -> None:
    suite = upload(team, suite_lines(3))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_start(
            workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="sandbox"
        )
    first, second = Run.objects.order_by("pk")
    assert "write it and nothing else to /testbed/output/answer.txt" in first.creation.brief
    with django_capture_on_commit_callbacks(execute=True):
        ended(first, {"answer.txt": b"1\n", "work.py": b"print(1)"})
    with django_capture_on_commit_callbacks(execute=True):
        Run.objects.filter(pk=second.pk).update(status=RunStatus.RUNNING)
        run_finish(run_id=second.pk, status=RunStatus.SUCCEEDED, reason="", summary="The answer is 5.")
    third = Run.objects.order_by("pk").last()
    assert third is not None
    assert third.pk > second.pk
    with django_capture_on_commit_callbacks(execute=True):
        ended(third, {}, status=RunStatus.FAILED)
    items = EvaluationItem.objects.filter(evaluation=evaluation).order_by("position")
    assert [(i.answer, i.answer_source, i.status, i.correct, i.why) for i in items] == [
        ("1", "answer.txt", ItemStatus.SCORED, True, ""),
        ("The answer is 5.", "final message", ItemStatus.SCORED, False, "expected 4"),
        ("", "", ItemStatus.FAILED, False, "ended"),
    ]
    assert items[0].run_id == first.pk


def test_an_answer_that_cannot_be_stored_as_it_is_is_scored_and_kept_bounded(
    team: Team, endpoint: ModelEndpoint, django_capture_on_commit_callbacks: Any
) -> None:
    """An agent's answer.txt may hold NUL (which PostgreSQL refuses) and be far longer than any answer."""
    suite = upload(team, suite_lines(2))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_start(
            workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="sandbox"
        )
    first, second = Run.objects.order_by("pk")
    with django_capture_on_commit_callbacks(execute=True):
        ended(first, {"answer.txt": b"1\x00\n"})
    with django_capture_on_commit_callbacks(execute=True):
        ended(second, {"answer.txt": b"4 " + b"x" * 300_000})
    items = list(EvaluationItem.objects.filter(evaluation=evaluation).order_by("position"))
    assert [(i.status, i.answer_source) for i in items] == [(ItemStatus.SCORED, "answer.txt")] * 2
    assert items[0].answer == "1\u2400"
    assert len(items[1].answer) == ANSWER_MAX_CHARS
    assert Evaluation.objects.get(pk=evaluation.pk).status == EvaluationStatus.FINISHED


def test_a_plain_task_is_one_completion_without_tools_counted_in_usage(
    team: Team, plain_messages: PlainMessages, django_capture_on_commit_callbacks: Any
) -> None:
    with ScriptedModel([reply("It is 4.", usage={"prompt_tokens": 30, "completion_tokens": 5})]) as model:
        endpoint = ModelEndpoint.objects.create(
            workspace=team.workspace, name="scripted", base_url=model.base_url, model=model.model
        )
        suite = upload(team, suite_lines(1))
        with django_capture_on_commit_callbacks(execute=True):
            evaluation = evaluation_start(
                workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="plain"
            )
        assert Run.objects.count() == 0
        (item_id,) = plain_messages
        with django_capture_on_commit_callbacks(execute=True):
            plain_item_answer(item_id=item_id)
        (request,) = model.chat_requests()
    assert "tools" not in request.body
    assert request.messages[0]["content"].startswith("What is 1 squared?")
    item = EvaluationItem.objects.get(pk=item_id)
    assert (item.answer, item.correct, item.tokens, item.status) == ("It is 4.", False, 35, ItemStatus.SCORED)
    record = UsageRecord.objects.get(workspace=team.workspace)
    assert (record.creation_title, record.run_id, record.prompt_tokens, record.completion_tokens, record.person_id) == (
        "Evaluation: Squares (plain)",
        None,
        30,
        5,
        team.member.pk,
    )
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.FINISHED


def test_cancel_stops_the_whole_evaluation_and_keeps_what_was_scored(
    team: Team, endpoint: ModelEndpoint, plain_messages: PlainMessages, django_capture_on_commit_callbacks: Any
) -> None:
    suite = upload(team, suite_lines(5))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_start(
            workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="both"
        )
    # Task 1 in sandbox and plain mode are in flight (concurrency 2 by default).
    run = Run.objects.get()
    assert len(plain_messages) == 1
    other_member = make_user("carl")
    membership_add(workspace=team.workspace, user=other_member, role=Role.MEMBER)
    with pytest.raises(PermissionDenied):
        evaluation_cancel(evaluation=evaluation, user=other_member)
    with django_capture_on_commit_callbacks(execute=True):
        assert evaluation_cancel(evaluation=evaluation, user=team.member)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert set(EvaluationItem.objects.filter(evaluation=evaluation).values_list("status", flat=True)) == {
        ItemStatus.CANCELLED
    }
    plain_item_answer(item_id=plain_messages[0])  # the message arrives after the cancel: nothing is asked
    assert not UsageRecord.objects.filter(run__isnull=True).exists()
    assert Run.objects.count() == 1
    assert evaluation.status == EvaluationStatus.CANCELLED
    assert not evaluation_cancel(evaluation=evaluation, user=team.owner)


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 10)[0] == 0.0
    assert round(wilson_interval(0, 10)[1], 4) == 0.2775
    assert wilson_interval(0, 0) == (0.0, 1.0)
