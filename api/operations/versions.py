"""A creation's versions, addressed by any of its runs: list them, ask for the next one
(a refine, with an Idempotency-Key), and choose the one the creation shows.

Who may do what is the run services' own answer (creations.runs.services), after
the same visibility check as every run operation (creations.access).
"""

from typing import cast

from django.http import HttpRequest, HttpResponse
from ninja import Header, Router, Status

from api.auth import WRITE, caller
from api.idempotency import create_once
from api.operations.runs import RUN_QUERYSET, count_submission, runs_for
from api.problems import Problem, refusals_as_conflicts
from api.schemas.runs import RefineIn, RunOut, RunStatusName
from api.schemas.versions import VersionOut, VersionsOut
from creations.access import run_for_viewer_or_404
from creations.arena.selectors import model_names
from creations.events.redaction import text_without_names
from creations.models import Creation, Run
from creations.runs.services import creation_restore_version, run_refine
from creations.runs.versions import unchanged_refreshes

router = Router(tags=["versions"])


def versions_out(request: HttpRequest, run: Run) -> VersionsOut:
    """The versions of `run`'s creation, as its caller may be told them (`run` from `runs_for`: its
    reasons do not name the model while a blind comparison hides it from them, as on the run itself)."""
    creation = run.creation
    hidden = model_names(creation) if getattr(run, "model_hidden", True) else ()
    runs = list(Run.objects.filter(creation_id=creation.pk).select_related("started_by").order_by("-version"))
    numbers = {run.pk: run.version for run in runs}
    shown_id = Creation.objects.values_list("shown_run_id", flat=True).get(pk=creation.pk)
    unchanged = unchanged_refreshes(runs)
    return VersionsOut(
        creation_id=creation.pk,
        title=creation.title,
        brief=creation.brief,
        shown_run_id=shown_id,
        versions=[
            VersionOut(
                id=run.pk,
                version=run.version,
                parent_id=run.parent_id,
                parent_version=numbers.get(run.parent_id) if run.parent_id is not None else None,
                asked_by=run.started_by.username if run.started_by is not None else None,
                instruction=run.instruction,
                summary=run.summary,
                status=cast(RunStatusName, run.status),
                reason=text_without_names(run.reason, hidden),
                is_final=run.is_final,
                shown=run.pk == shown_id,
                unchanged=run.pk in unchanged,
                created_at=run.created_at,
                started_at=run.started_at,
                finished_at=run.finished_at,
                steps=run.steps,
                prompt_tokens=run.prompt_tokens,
                completion_tokens=run.completion_tokens,
                sandbox_seconds=round(run.sandbox_seconds, 1),
                output_bytes=run.output_bytes,
                web_url=request.build_absolute_uri(run.get_absolute_url()),
            )
            for run in runs
        ],
    )


@router.get("/{run_id}/versions", response=VersionsOut, summary="The versions of a run's creation, newest first")
def list_versions(request: HttpRequest, run_id: int) -> VersionsOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=runs_for(user)).run
    return versions_out(request, run)


@router.post(
    "/{run_id}/refine",
    auth=WRITE,
    response={200: RunOut, 201: RunOut, 409: Problem},
    summary="Ask for the next version",
    description=(
        "Queues the creation's next version, continuing from this run: its sandbox starts with the files this "
        "run left, and the agent is told the brief, the earlier versions' summaries and your instruction. "
        "Refining a version that is not the latest branches from it. 409 while this run is still going. "
        "Send an `Idempotency-Key` header (a fresh UUID) to retry safely: the same key and body answer 200 "
        "with the version already asked for."
    ),
)
def refine_run(
    request: HttpRequest,
    response: HttpResponse,
    run_id: int,
    payload: RefineIn,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key"),
) -> Status[Run]:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET).run

    def refine() -> Run:
        count_submission(request)
        with refusals_as_conflicts(applies=lambda: not run.is_final):
            return run_refine(run=run, user=user, instruction=payload.instruction)

    # The run refined is part of the request: the same key sent to refine another run is refused.
    request_body = {"refine_run_id": run.pk, **payload.model_dump()}
    created = create_once(
        user=user, workspace=run.creation.workspace, key=idempotency_key, payload=request_body, create=refine
    )
    refined = runs_for(user).get(pk=created.run.pk)
    if created.replayed:
        response["Idempotent-Replayed"] = "true"
        return Status(200, refined)
    return Status(201, refined)


@router.post(
    "/{run_id}/restore",
    auth=WRITE,
    response={200: VersionsOut, 409: Problem},
    summary="Show this version",
    description=(
        "Makes this run's version the one its creation shows (in the gallery, and on the creation's page); "
        "nothing is deleted. 409 while the run is still going. Answers the versions, as GET …/versions does."
    ),
)
def restore_version(request: HttpRequest, run_id: int) -> VersionsOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=runs_for(user)).run
    with refusals_as_conflicts(applies=lambda: not run.is_final):
        creation_restore_version(creation=run.creation, run=run, user=user)
    return versions_out(request, run)
