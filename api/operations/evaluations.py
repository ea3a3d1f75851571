"""Suites and evaluations: upload a suite, list them; start an evaluation, follow it, read its
results, cancel it. Who may is creations.evaluations' services' answer; reads are for every member
of the workspace (workspaces.permissions)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest
from ninja import File, Form, Router, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile

from api.auth import WRITE, caller
from api.problems import Problem, refusals_as_conflicts
from api.schemas.evaluations import (
    EvaluationIn,
    EvaluationOut,
    ModelResultOut,
    ModeResultOut,
    ResultsOut,
    SuiteOut,
    TaskResultOut,
)
from creations.evaluations.models import Evaluation, Suite
from creations.evaluations.results import evaluation_items, evaluation_progress, evaluation_results
from creations.evaluations.services import evaluation_cancel, evaluation_start
from creations.evaluations.suites import suite_delete, suite_upload
from workspaces.models import ModelEndpoint
from workspaces.permissions import workspace_membership_or_404
from workspaces.selectors import membership_get

workspace_router = Router(tags=["evaluations"])
router = Router(tags=["evaluations"])


@workspace_router.get("/{slug}/suites", response=list[SuiteOut], summary="The workspace's suites, newest first")
def list_suites(request: HttpRequest, slug: str) -> list[Suite]:
    workspace = workspace_membership_or_404(slug=slug, user=caller(request)).workspace
    return list(Suite.objects.filter(workspace=workspace).select_related("uploaded_by"))


@workspace_router.post(
    "/{slug}/suites",
    auth=WRITE,
    response={201: SuiteOut},
    summary="Upload a suite",
    description=(
        "multipart/form-data: `tasks` (JSON Lines, one task per line), optionally `files` (a zip of the input files "
        "the tasks name) and `name` (default: the task file's name). A file with mistakes is refused (422) with "
        "each one naming its line and field, and nothing is kept."
    ),
)
def upload_suite(
    request: HttpRequest,
    slug: str,
    tasks: File[UploadedFile],
    files: File[UploadedFile | None] = None,
    name: Form[str] = "",
) -> Status[Suite]:
    user = caller(request)
    workspace = workspace_membership_or_404(slug=slug, user=user).workspace
    suite = suite_upload(
        workspace=workspace,
        user=user,
        name=name or (tasks.name or "").rsplit(".", 1)[0],
        data=tasks.read(settings.EVALUATION_SUITE_MAX_BYTES + 1),
        zip_data=files.read() if files is not None else None,
    )
    return Status(201, suite)


@workspace_router.delete(
    "/{slug}/suites/{suite_id}",
    auth=WRITE,
    response={204: None, 409: Problem},
    summary="Delete a suite",
    description=(
        "With its tasks, its evaluations and their results, and its stored files; runs its evaluations made stay. "
        "For whoever uploaded it, and owners and admins (403 for the other members). While one of its "
        "evaluations is running: 409, saying so."
    ),
)
def delete_suite(request: HttpRequest, slug: str, suite_id: int) -> Status[None]:
    user = caller(request)
    workspace = workspace_membership_or_404(slug=slug, user=user).workspace
    suite = Suite.objects.filter(pk=suite_id, workspace=workspace).first()
    if suite is None:
        raise Http404("No such suite in this workspace; GET …/suites lists them.")
    with refusals_as_conflicts():
        suite_delete(suite=suite, user=user)
    return Status(204, None)


def _evaluation_out(evaluation: Evaluation) -> EvaluationOut:
    done, total = evaluation_progress(evaluation)
    return EvaluationOut(
        id=evaluation.pk,
        workspace=evaluation.workspace.slug,
        suite_id=evaluation.suite_id,
        suite_name=evaluation.suite.name,
        modes=evaluation.modes,
        status=evaluation.status,
        tasks_done=done,
        tasks_total=total,
        started_by=evaluation.started_by.get_username() if evaluation.started_by else None,
        created_at=evaluation.created_at,
        finished_at=evaluation.finished_at,
    )


def _evaluation_for_member_or_404(request: HttpRequest, evaluation_id: int) -> Evaluation:
    evaluation = Evaluation.objects.select_related("workspace", "suite", "started_by").filter(pk=evaluation_id).first()
    if evaluation is None or membership_get(workspace=evaluation.workspace_id, user=caller(request)) is None:
        raise Http404("No such evaluation, or not yours to see.")
    return evaluation


@workspace_router.post(
    "/{slug}/evaluations",
    auth=WRITE,
    response={201: EvaluationOut},
    summary="Start an evaluation",
    description=(
        "Runs a suite against one to four models in sandbox mode (each task a run in your name, counted in the "
        "budgets), plain mode (one chat completion without tools) or both; at most the workspace's concurrency "
        "of its tasks at once."
    ),
)
def create_evaluation(request: HttpRequest, slug: str, payload: EvaluationIn) -> Status[EvaluationOut]:
    user = caller(request)
    workspace = workspace_membership_or_404(slug=slug, user=user).workspace
    suite = Suite.objects.filter(pk=payload.suite_id, workspace=workspace).first()
    if suite is None:
        raise Http404("No such suite in this workspace; GET …/suites lists them.")
    by_id = ModelEndpoint.objects.filter(workspace=workspace).in_bulk(
        [pk for pk in payload.model_endpoint_ids if pk is not None]
    )
    if any(pk is not None and pk not in by_id for pk in payload.model_endpoint_ids):
        raise Http404("No such model in this workspace; GET …/models lists them.")
    evaluation = evaluation_start(
        workspace=workspace,
        user=user,
        suite=suite,
        endpoints=[None if pk is None else by_id[pk] for pk in payload.model_endpoint_ids],
        modes=payload.modes,
    )
    return Status(201, _evaluation_out(_evaluation_for_member_or_404(request, evaluation.pk)))


@router.get("/{evaluation_id}", response=EvaluationOut, summary="One evaluation: its state and progress")
def get_evaluation(request: HttpRequest, evaluation_id: int) -> EvaluationOut:
    return _evaluation_out(_evaluation_for_member_or_404(request, evaluation_id))


@router.get(
    "/{evaluation_id}/results",
    response=ResultsOut,
    summary="An evaluation's results",
    description="Per model and mode: accuracy with its 95% Wilson interval, mean tokens and time; per model the "
    "sandbox minus plain difference; and each task's answer and score.",
)
def get_results(request: HttpRequest, evaluation_id: int) -> ResultsOut:
    evaluation = _evaluation_for_member_or_404(request, evaluation_id)
    models = []
    for model in evaluation_results(evaluation):
        modes = []
        for result in model.modes:
            low, high = result.interval
            modes.append(
                ModeResultOut(
                    mode=result.mode,
                    tasks_counted=result.counted,
                    correct=result.correct,
                    accuracy=result.accuracy,
                    ci95_low=low if result.counted else None,
                    ci95_high=high if result.counted else None,
                    mean_tokens=result.mean_tokens,
                    mean_seconds=result.mean_seconds,
                    tasks_to_come=result.to_come,
                )
            )
        models.append(ModelResultOut(model=model.model_name, modes=modes, sandbox_minus_plain=model.difference))
    return ResultsOut(
        evaluation=_evaluation_out(evaluation),
        models=models,
        tasks=[
            TaskResultOut(
                task_id=item.task.task_id,
                model=item.model_name,
                mode=item.mode,
                status=item.status,
                correct=item.correct,
                answer=item.answer,
                answer_from=item.answer_source,
                read=item.read,
                why=item.why,
                tokens=item.tokens,
                seconds=item.seconds,
                run_id=item.run_id,
            )
            for item in evaluation_items(evaluation)
        ],
    )


@router.post(
    "/{evaluation_id}/cancel",
    auth=WRITE,
    response={202: EvaluationOut, 409: Problem},
    summary="Cancel an evaluation as a whole",
    description="Nothing more starts; tasks waiting or going are cancelled (their runs asked to stop); what was "
    "scored stays. For whoever started it, and owners and admins.",
)
def cancel_evaluation(request: HttpRequest, evaluation_id: int) -> Status[EvaluationOut]:
    evaluation = _evaluation_for_member_or_404(request, evaluation_id)
    if not evaluation_cancel(evaluation=evaluation, user=caller(request)):
        raise HttpError(409, f"Evaluation {evaluation.pk} has already ended ({evaluation.status}).")
    return Status(202, _evaluation_out(_evaluation_for_member_or_404(request, evaluation.pk)))
