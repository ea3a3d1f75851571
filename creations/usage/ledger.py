"""The usage ledger's one writer: a record per run, written when the run ends (and one per model
call that is no run: `usage_record_completion`).

Called inside the transaction that gives the run its final status, which
only one caller can win (a conditional UPDATE), so each run is recorded
exactly once, whether it ended normally, was cancelled, or was reaped after
its worker died; the one-to-one column refuses a second record regardless.
"""

from __future__ import annotations

from creations.models import Run, RunStatus, UsageRecord, UsageSource
from creations.usage.counters import run_usage
from sandboxes.agent import DEMO_MODEL_NAME
from workspaces.models import ModelEndpoint


def usage_record_write(*, run_id: int) -> UsageRecord:
    run = Run.objects.select_related("creation", "creation__model_endpoint").get(pk=run_id)
    creation = run.creation
    endpoint = creation.model_endpoint
    usage = run_usage(run)
    return UsageRecord.objects.create(
        run=run,
        workspace_id=creation.workspace_id,
        creation=creation,
        creation_title=(creation.title or creation.brief)[:200],
        person_id=run.started_by_id,
        model_endpoint=endpoint,
        model_name=endpoint.model if endpoint else DEMO_MODEL_NAME,
        status=run.status,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        sandbox_seconds=usage.sandbox_seconds,
        bytes_stored=usage.output_bytes,
        recorded_at=run.finished_at or run.created_at,
    )


def usage_record_completion(
    *,
    workspace_id: int,
    person_id: int | None,
    model_endpoint: ModelEndpoint | None,
    title: str,
    succeeded: bool,
    prompt_tokens: int,
    completion_tokens: int,
) -> UsageRecord:
    """A model call that is no run (an evaluation's plain-mode task: one chat completion without a
    sandbox): its tokens count in the month's budget and on the usage page like a run's, under
    `title` (it never had a creation to name it)."""
    return UsageRecord.objects.create(
        workspace_id=workspace_id,
        source=UsageSource.EVALUATION,
        creation_title=title[:200],
        person_id=person_id,
        model_endpoint=model_endpoint,
        model_name=model_endpoint.model if model_endpoint else DEMO_MODEL_NAME,
        status=RunStatus.SUCCEEDED if succeeded else RunStatus.FAILED,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )
