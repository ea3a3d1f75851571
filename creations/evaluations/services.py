"""Writes for evaluations (suites: creations.evaluations.suites): start an evaluation, release its
tasks as earlier ones finish, settle each task's answer, cancel it as a whole.

An evaluation holds at most its workspace's concurrency (`Workspace.quota_concurrent_runs`) of
tasks in flight, sandbox and plain together: `evaluation_release` starts the next ones, oldest
first, under the evaluation's row lock, whenever one ends (a run's `run_finished`, a plain task's
Celery task) and once when it starts. So a 100-task suite never fills the workspace's queue, and
other people's runs in the workspace wait behind at most that many of it.

A sandbox task is an ordinary run (creations.runs.services.creation_submit) in the name of whoever
started the evaluation: the same permission, budget, storage and queue checks; a check that
refuses fails that task with its sentence. A plain task is one chat completion without tools
(creations.evaluations.plain) in a Celery task, its tokens written to the usage ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from functools import partial

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.utils import timezone

from creations.evaluations.answers import FROM_REPLY, Answer, run_answer
from creations.evaluations.briefs import plain_prompt, sandbox_brief
from creations.evaluations.models import (
    MAX_MODELS,
    Evaluation,
    EvaluationItem,
    EvaluationStatus,
    ItemStatus,
    Mode,
    Modes,
    Suite,
    SuiteFile,
    SuiteTask,
)
from creations.evaluations.plain import complete_plain
from creations.evaluations.scoring import ANSWER_MAX_CHARS, score
from creations.evaluations.suites import check_may_evaluate
from creations.events.storable import storable_text
from creations.models import Run, RunStatus, Visibility
from creations.runs.services import creation_submit, run_cancel
from creations.usage.budgets import check_can_submit, exhausted_budget_message
from creations.usage.ledger import usage_record_completion
from creations.usage.selectors import workspace_month_usage
from workspaces.endpoints import KEY_UNREADABLE
from workspaces.models import ModelEndpoint, Workspace
from workspaces.permissions import (
    CANCEL_EVALUATION_REFUSED,
    may_cancel_evaluation,
)
from workspaces.selectors import membership_get

log = logging.getLogger(__name__)

PLAIN_TASK_NAME = "creations.evaluations.tasks.answer_plain_task"
DEMO_REFUSED = (
    "The demo model replays the recordings of its showcase briefs and answers nothing else, so it cannot be "
    "evaluated: add your team's own model on the Models page and evaluate that."
)


def _clean_models(workspace: Workspace, endpoints: Sequence[ModelEndpoint | None]) -> list[ModelEndpoint]:
    if any(endpoint is None for endpoint in endpoints):
        raise ValidationError({"models": DEMO_REFUSED})
    chosen = [endpoint for endpoint in endpoints if endpoint is not None]
    if not chosen:
        raise ValidationError({"models": f"Pick one to {MAX_MODELS} of the workspace's models."})
    if len(chosen) > MAX_MODELS:
        raise ValidationError({"models": f"An evaluation compares at most {MAX_MODELS} models; pick fewer."})
    if len({endpoint.pk for endpoint in chosen}) != len(chosen):
        raise ValidationError({"models": "A model is picked twice; pick each once."})
    for endpoint in chosen:
        if endpoint.workspace_id != workspace.pk or endpoint.retired_at is not None:
            raise ValidationError({"models": "That model is not registered in this workspace."})
        if not endpoint.is_enabled:
            raise ValidationError({"models": f"The model “{endpoint.name}” is switched off; pick another one."})
        if endpoint.key_unreadable:
            raise ValidationError({"models": f"The model “{endpoint.name}” cannot be used. {KEY_UNREADABLE}"})
    return chosen


@transaction.atomic
def evaluation_start(
    *, workspace: Workspace, user: User, suite: Suite, endpoints: Sequence[ModelEndpoint | None], modes: str
) -> Evaluation:
    """Run `suite` against `endpoints` in `modes` (sandbox, plain or both): one item per task by
    model by mode, released a few at a time (`evaluation_release`), the first ones now."""
    check_may_evaluate(workspace, user)
    if suite.workspace_id != workspace.pk:
        raise ValidationError({"suite": "That suite belongs to another workspace."})
    if modes not in Modes.values:
        raise ValidationError({"modes": "Choose sandbox, plain or both."})
    chosen = _clean_models(workspace, endpoints)
    check_can_submit(workspace)
    # Held until the evaluation is made, so the suite cannot be deleted under it (suite_delete).
    if Suite.objects.select_for_update().filter(pk=suite.pk).values_list("pk", flat=True).first() is None:
        raise ValidationError({"suite": "That suite was deleted; pick another one."})
    evaluation = Evaluation.objects.create(workspace=workspace, suite=suite, started_by=user, modes=modes)
    items: list[EvaluationItem] = []
    # Task by task, each model and mode in turn: the first results already compare them all.
    for task in suite.tasks.all():
        for endpoint in chosen:
            for mode in Modes.expand(modes):
                items.append(
                    EvaluationItem(
                        evaluation=evaluation,
                        task=task,
                        model_endpoint=endpoint,
                        model_name=endpoint.name,
                        mode=mode,
                        position=len(items) + 1,
                    )
                )
    EvaluationItem.objects.bulk_create(items)
    evaluation_release(evaluation_id=evaluation.pk)
    return evaluation


# --- releasing -----------------------------------------------------------------------------------


def _task_files(task: SuiteTask) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for suite_file in SuiteFile.objects.filter(suite_id=task.suite_id, name__in=task.file_names):
        with suite_file.file.open("rb") as handle:
            files[suite_file.name] = handle.read()
    return {name: files[name] for name in task.file_names if name in files}


def _fail(item: EvaluationItem, why: str) -> None:
    item.status, item.correct, item.why, item.finished_at = ItemStatus.FAILED, False, why, timezone.now()
    item.save(update_fields=["status", "correct", "why", "finished_at", "started_at"])


def _release_sandbox(item: EvaluationItem, evaluation: Evaluation) -> bool:
    """Submit the item's run; False (and the item failed, saying why) when a check refuses it."""
    task = item.task
    starter = evaluation.started_by
    try:
        if starter is None or item.model_endpoint is None:
            raise PermissionDenied("The person who started the evaluation, or its model, is gone.")
        uploads = [SimpleUploadedFile(name, content) for name, content in _task_files(task).items()]
        with transaction.atomic():
            run = creation_submit(
                workspace=evaluation.workspace,
                author=starter,
                brief=sandbox_brief(prompt=task.prompt, file_names=list(task.file_names)),
                files=uploads,
                visibility=Visibility.WORKSPACE,
                model_endpoint=item.model_endpoint,
                title=f"{evaluation.suite.name} · {task.task_id} · {item.model_name}"[:200],
            )
    except (ValidationError, PermissionDenied) as refused:
        messages = refused.messages if isinstance(refused, ValidationError) else [str(refused)]
        _fail(item, " ".join(messages))
        return False
    item.run, item.status = run, ItemStatus.IN_FLIGHT
    item.save(update_fields=["run", "status", "started_at"])
    return True


def _send_plain(item_id: int) -> None:
    try:
        current_app.send_task(PLAIN_TASK_NAME, args=[item_id])
    except Exception as error:  # the broker is away: the item fails, saying so, and the next is released
        log.warning("Could not send plain task %s: %s", item_id, error)
        EvaluationItem.objects.filter(pk=item_id, status=ItemStatus.IN_FLIGHT).update(
            status=ItemStatus.FAILED,
            correct=False,
            why="No worker could be reached for it.",
            finished_at=timezone.now(),
        )


def evaluation_release(*, evaluation_id: int) -> int:
    """Start the next waiting items while the evaluation has fewer than its workspace's concurrency
    in flight; finish it once nothing waits or goes. Returns how many it started."""
    started = 0
    with transaction.atomic():
        evaluation = (
            Evaluation.objects.select_for_update(of=("self",))
            .select_related("workspace", "suite", "started_by")
            .filter(pk=evaluation_id)
            .first()
        )
        if evaluation is None or evaluation.status != EvaluationStatus.RUNNING:
            return 0
        items = EvaluationItem.objects.filter(evaluation=evaluation)
        free = evaluation.workspace.quota_concurrent_runs - items.filter(status=ItemStatus.IN_FLIGHT).count()
        waiting = items.filter(status=ItemStatus.PENDING).select_related("task", "model_endpoint").order_by("position")
        for item in waiting.iterator():
            if started >= free:
                break
            item.started_at = timezone.now()
            if item.mode == Mode.SANDBOX:
                started += _release_sandbox(item, evaluation)
                continue
            item.status = ItemStatus.IN_FLIGHT
            item.save(update_fields=["status", "started_at"])
            transaction.on_commit(partial(_send_plain, item.pk))
            started += 1
        if not items.filter(status__in=(ItemStatus.PENDING, ItemStatus.IN_FLIGHT)).exists():
            Evaluation.objects.filter(pk=evaluation.pk).update(
                status=EvaluationStatus.FINISHED, finished_at=timezone.now()
            )
    return started


# --- settling ------------------------------------------------------------------------------------


def _settle(item: EvaluationItem, *, answer: Answer, why_no_answer: str = "") -> None:
    """Score the item's answer and save it; the caller holds the item's row and saves the rest."""
    # An agent's file or a model's reply: bounded as the rules read it, and storable whatever it holds.
    text = storable_text(answer.text[:ANSWER_MAX_CHARS])
    item.answer, item.answer_source = text, answer.source
    item.finished_at = timezone.now()
    if not text.strip() and why_no_answer:
        item.status, item.correct, item.read, item.why = ItemStatus.FAILED, False, "", why_no_answer
    else:
        task = item.task
        verdict = score(rule=task.rule, expected=task.expected, answer=text, options=task.options)
        item.status, item.correct = ItemStatus.SCORED, verdict.correct
        item.read, item.why = storable_text(verdict.read), storable_text(verdict.why)
    item.save()


def evaluation_run_ended(*, run_id: int) -> None:
    """A run ended: if it was an evaluation's sandbox task, score its answer, then release the next."""
    with transaction.atomic():
        item = (
            EvaluationItem.objects.select_for_update(of=("self",))
            .select_related("task", "run")
            .filter(run_id=run_id, status=ItemStatus.IN_FLIGHT)
            .first()
        )
        if item is None:
            return
        run = item.run
        assert run is not None
        item.prompt_tokens, item.completion_tokens = run.prompt_tokens, run.completion_tokens
        if run.started_at and run.finished_at:
            item.seconds = (run.finished_at - run.started_at).total_seconds()
        reason = "" if run.status == RunStatus.SUCCEEDED else (run.reason or f"The run ended {run.status}.")
        _settle(item, answer=run_answer(run), why_no_answer=reason or "The run gave no answer.")
    evaluation_release(evaluation_id=item.evaluation_id)


def plain_item_answer(*, item_id: int) -> None:
    """A plain task (the Celery task's work): one completion, its usage recorded, its answer scored."""
    item = (
        EvaluationItem.objects.select_related("task", "model_endpoint", "evaluation__workspace", "evaluation__suite")
        .filter(pk=item_id, status=ItemStatus.IN_FLIGHT)
        .first()
    )
    if item is None:  # cancelled meanwhile
        return
    evaluation, task, endpoint = item.evaluation, item.task, item.model_endpoint
    exhausted = exhausted_budget_message(
        workspace=evaluation.workspace, usage=workspace_month_usage(workspace=evaluation.workspace)
    )
    if endpoint is None or exhausted:
        with transaction.atomic():
            if EvaluationItem.objects.select_for_update().filter(pk=item.pk, status=ItemStatus.IN_FLIGHT).first():
                _fail(item, exhausted or "Its model was deleted.")
        evaluation_release(evaluation_id=evaluation.pk)
        return
    prompt = task.plain_prompt or plain_prompt(prompt=task.prompt, files=_task_files(task))
    completion = complete_plain(endpoint=endpoint, prompt=prompt)
    with transaction.atomic():
        if completion.prompt_tokens or completion.completion_tokens or not completion.error:
            usage_record_completion(
                workspace_id=evaluation.workspace_id,
                person_id=evaluation.started_by_id,
                model_endpoint=endpoint,
                title=f"Evaluation: {evaluation.suite.name} (plain)",
                succeeded=not completion.error,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
            )
        locked = EvaluationItem.objects.select_for_update().filter(pk=item.pk, status=ItemStatus.IN_FLIGHT).first()
        if locked is not None:
            item.prompt_tokens, item.completion_tokens = completion.prompt_tokens, completion.completion_tokens
            item.seconds = completion.seconds
            _settle(item, answer=Answer(completion.text.strip(), FROM_REPLY), why_no_answer=completion.error)
    evaluation_release(evaluation_id=evaluation.pk)


STALE_PLAIN_WHY = "Its worker stopped before the model answered."


def plain_items_fail_stale() -> int:
    """Plain tasks in flight past EVALUATION_PLAIN_TASK_STALE_SECONDS lost their worker: fail them,
    saying so, and release their evaluations' next tasks. Returns how many it failed.

    The UPDATE is conditional on the item still being in flight, and takes its row lock: an answer
    settling the item at that moment (under the same lock) wins, and the sweep then leaves it; an
    answer arriving after the sweep finds it failed and is not scored (its usage is still recorded)."""
    cutoff = timezone.now() - timedelta(seconds=settings.EVALUATION_PLAIN_TASK_STALE_SECONDS)
    stale = EvaluationItem.objects.filter(mode=Mode.PLAIN, status=ItemStatus.IN_FLIGHT, started_at__lt=cutoff)
    failed = 0
    for item_id, evaluation_id in list(stale.values_list("pk", "evaluation_id")):
        swept = EvaluationItem.objects.filter(pk=item_id, status=ItemStatus.IN_FLIGHT).update(
            status=ItemStatus.FAILED, correct=False, why=STALE_PLAIN_WHY, finished_at=timezone.now()
        )
        if swept:
            failed += 1
            log.warning("Plain task %s of evaluation %s lost its worker; failed it", item_id, evaluation_id)
            evaluation_release(evaluation_id=evaluation_id)
    return failed


# --- cancelling ----------------------------------------------------------------------------------


def evaluation_cancel(*, evaluation: Evaluation, user: User) -> bool:
    """Stop it as a whole: nothing more is released, tasks waiting or going are cancelled (their runs
    asked to stop), and what was scored stays. False when it had ended already."""
    membership = membership_get(workspace=evaluation.workspace_id, user=user)
    if not may_cancel_evaluation(membership, started_by_id=evaluation.started_by_id, user=user):
        raise PermissionDenied(CANCEL_EVALUATION_REFUSED)
    with transaction.atomic():
        cancelled = Evaluation.objects.filter(pk=evaluation.pk, status=EvaluationStatus.RUNNING).update(
            status=EvaluationStatus.CANCELLED, finished_at=timezone.now()
        )
        if not cancelled:
            return False
        going = EvaluationItem.objects.filter(
            evaluation=evaluation, status__in=(ItemStatus.PENDING, ItemStatus.IN_FLIGHT)
        )
        run_ids = [run_id for run_id in going.values_list("run_id", flat=True) if run_id is not None]
        going.update(status=ItemStatus.CANCELLED, finished_at=timezone.now())
    for run in Run.objects.select_related("creation__workspace").filter(pk__in=run_ids):
        run_cancel(run=run, user=user)
    evaluation.refresh_from_db()
    return True
