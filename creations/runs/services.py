"""Writes for creations and runs: submit, cancel, run again, refine, restore, fork, delete.

Each service checks who may do it (`workspaces.permissions.may_start_runs`; cancel
and delete add rules of their own, creations.access) and that the workspace has
budget left this month (creations.usage.budgets), writes in one transaction, and
wakes a worker only after commit, so a worker never looks for a run that is not
there yet. A run whose workspace has no free slot
says so from the start (creations.runs.admission).

Every service that queues a run first checks, in its transaction and under the
workspace's row lock, that the workspace's storage takes the files it adds and
its queue has room (`_check_room`): parallel requests take turns there, so
together they pass neither bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from creations.access import can_cancel_run, can_delete_creation, can_view_creation, creation_visible
from creations.models import ACTIVE_STATUSES, TITLE_MAX_CHARS, Creation, InputFile, Run, RunStatus, Visibility
from creations.runs import queue
from creations.runs.admission import queue_room_check, run_note_waiting
from creations.runs.artifact_inputs import artifact_uploads
from creations.runs.inputs import clean_input_files
from creations.runs.limits import clean_requested_limits, fit_limits
from creations.runs.state import (
    cancelled_reason,
    creation_show_version,
    run_create_queued,
    run_finish,
    run_request_cancel,
)
from creations.runs.supervision import publish_cancel
from creations.usage.budgets import check_can_submit, storage_room_check
from sandboxes.agent import demo_follow_up_refusal
from workspaces.endpoints import KEY_UNREADABLE
from workspaces.models import ModelEndpoint, Workspace
from workspaces.permissions import RENAME_REFUSED, may_rename_creation, membership_to_start_runs
from workspaces.selectors import membership_get

AnyUser = User | AnonymousUser


# --- checks ----------------------------------------------------------------


def _clean_brief(brief: str) -> str:
    brief = (brief or "").strip()
    if not brief:
        raise ValidationError({"brief": "Write a brief: say what you would like made."})
    limit = settings.RUN_BRIEF_MAX_CHARS
    if len(brief) > limit:
        raise ValidationError(
            {"brief": f"The brief is {len(brief):,} characters long, over its limit of {limit:,}: shorten it."}
        )
    return brief


def _clean_title(title: str) -> str:
    title = (title or "").strip()
    if len(title) > TITLE_MAX_CHARS:
        raise ValidationError(
            {"title": f"The title is {len(title):,} characters long, over its limit of {TITLE_MAX_CHARS}: shorten it."}
        )
    return title


def _clean_endpoint(workspace: Workspace, endpoint: ModelEndpoint | None) -> ModelEndpoint | None:
    if endpoint is None:
        return None
    if endpoint.workspace_id != workspace.pk:
        raise ValidationError({"model_endpoint": "That model is not registered in this workspace."})
    if endpoint.retired_at is not None:
        raise ValidationError({"model_endpoint": f"The model “{endpoint.name}” was deleted; fork with another model."})
    if not endpoint.is_enabled:
        raise ValidationError({"model_endpoint": f"The model “{endpoint.name}” is switched off; pick another one."})
    if endpoint.key_unreadable:  # refused now, not queued to fail on a worker later
        raise ValidationError({"model_endpoint": f"The model “{endpoint.name}” cannot be used. {KEY_UNREADABLE}"})
    return endpoint


def _check_room(workspace: Workspace, *, adding_bytes: int = 0) -> None:
    """Refuse a new run whose files (`adding_bytes`) its workspace's storage cannot take, or
    whose workspace's queue is full. Call inside the transaction that queues the run, before
    anything of it is written: the workspace's row stays locked until it commits."""
    storage_room_check(workspace_id=workspace.pk, adding=adding_bytes)
    queue_room_check(workspace_id=workspace.pk)


# --- services ----------------------------------------------------------------


def _queue_new_run(
    creation: Creation, *, started_by: User, parent: Run | None = None, instruction: str = "", scheduled: bool = False
) -> Run:
    run = run_create_queued(
        creation=creation, started_by=started_by, parent=parent, instruction=instruction, scheduled=scheduled
    )
    run_note_waiting(run_id=run.pk)
    # The run is stored whatever the broker says: with Redis away, the person still gets their
    # run (not an error page), and the reaper wakes a worker for it once Redis is back.
    queue.send_wake_up_on_commit(run.pk, robust=True)
    return run


@transaction.atomic
def creation_submit(
    *,
    workspace: Workspace,
    author: User,
    brief: str,
    files: Sequence[UploadedFile] = (),
    artifact_ids: Sequence[int] = (),
    visibility: str = Visibility.WORKSPACE,
    model_endpoint: ModelEndpoint | None = None,
    max_steps: int | None = None,
    max_seconds: int | None = None,
    max_tokens: int | None = None,
    title: str = "",
) -> Run:
    """Validate, write Creation + InputFiles + a queued Run, and wake a worker after commit.

    `artifact_ids`: artifacts the author may see, copied in as inputs (creations.runs.artifact_inputs)."""
    membership_to_start_runs(workspace=workspace, user=author)
    check_can_submit(workspace)
    if visibility not in Visibility.values:
        raise ValidationError({"visibility": "Choose who can see it: only you, the workspace, or anyone."})
    creation = Creation(
        workspace=workspace,
        author=author,
        title=_clean_title(title),
        brief=_clean_brief(brief),
        visibility=visibility,
        model_endpoint=_clean_endpoint(workspace, model_endpoint),
        **clean_requested_limits(
            workspace=workspace, max_steps=max_steps, max_seconds=max_seconds, max_tokens=max_tokens
        ),
    )
    cleaned_files = clean_input_files([*files, *artifact_uploads(user=author, ids=artifact_ids, beside=files)])
    _check_room(workspace, adding_bytes=sum(upload.size or 0 for _, upload in cleaned_files))
    creation.save()
    for name, upload in cleaned_files:
        sent_as = upload.name or ""
        input_file = InputFile(
            creation=creation,
            name=name,
            original_name=sent_as[:255] if sent_as != name else "",
            size=upload.size or 0,
            content_type=(upload.content_type or "")[:100],
        )
        input_file.file.save(name, upload, save=False)
        input_file.save()
    return _queue_new_run(creation, started_by=author)


def run_cancel(*, run: Run, user: AnyUser) -> bool:
    """Ask a run to stop. A queued run ends at once; a started one is stopped by its
    worker (the agent at once, then its output is kept). Returns False when it had already ended.

    Who may: `creations.access.can_cancel_run`."""
    membership = membership_to_start_runs(workspace=run.creation.workspace, user=user)
    if not can_cancel_run(run=run, user=user, membership=membership):
        raise PermissionDenied("You can cancel the runs you started; owners and admins can cancel any.")
    asked = run_request_cancel(run_id=run.pk, user=user)
    if run_finish(
        run_id=run.pk,
        status=RunStatus.CANCELLED,
        reason=cancelled_reason(run_id=run.pk, started=False),
        from_statuses=[RunStatus.QUEUED],
    ):
        return True
    if asked:
        publish_cancel(run.pk)
    return asked or Run.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).exists()


def run_rerun(*, creation: Creation, user: User) -> Run:
    """Run the same creation again (same brief, inputs, model and limits)."""
    if not can_view_creation(creation=creation, user=user):
        raise PermissionDenied("You cannot see this creation.")
    membership_to_start_runs(workspace=creation.workspace, user=user)
    check_can_submit(creation.workspace)
    _clean_endpoint(creation.workspace, creation.model_endpoint)
    with transaction.atomic():
        _check_room(creation.workspace)
        return _queue_new_run(creation, started_by=user)


def _clean_instruction(instruction: str) -> str:
    instruction = (instruction or "").strip()
    if not instruction:
        raise ValidationError({"instruction": "Say what should change."})
    if len(instruction) > settings.RUN_INSTRUCTION_MAX_CHARS:
        raise ValidationError(
            {"instruction": f"That is too long (at most {settings.RUN_INSTRUCTION_MAX_CHARS} characters)."}
        )
    return instruction


def run_refine(*, run: Run, user: User, instruction: str, scheduled: bool = False) -> Run:
    """The next version of `run`'s creation, continuing from `run`: its sandbox starts with
    `run`'s /testbed, and the agent gets the conversation so far and `instruction`.
    Refining a version that is not the latest branches from it. `scheduled`: a schedule refines
    it in `user`'s name (the run says so; the checks are theirs all the same)."""
    creation = run.creation
    if not can_view_creation(creation=creation, user=user):
        raise PermissionDenied("You cannot see this creation.")
    membership_to_start_runs(workspace=creation.workspace, user=user)
    instruction = _clean_instruction(instruction)
    if not run.is_final:
        raise ValidationError(f"v{run.version} is still going: refine it once it has ended (or cancel it).")
    if creation.model_endpoint is None:
        _check_demo_can_follow(run, instruction)
    check_can_submit(creation.workspace)
    _clean_endpoint(creation.workspace, creation.model_endpoint)
    with transaction.atomic():
        _check_room(creation.workspace)
        return _queue_new_run(creation, started_by=user, parent=run, instruction=instruction, scheduled=scheduled)


def _check_demo_can_follow(run: Run, instruction: str) -> None:
    """The demo model replays recordings made on its showcase's first version: it follows a
    version made from the brief, with one of the instructions it has recorded, and nothing else."""
    refusal = demo_follow_up_refusal(run.creation.brief, instruction)
    if refusal is None and run.instruction:
        refusal = (
            f"The demo model's recorded follow-up works on the files a first version leaves, and v{run.version} "
            "is already a refine: refine a version made from the brief, or use your team's own model."
        )
    if refusal is not None:
        raise ValidationError({"instruction": refusal})


def creation_restore_version(*, creation: Creation, run: Run, user: User) -> None:
    """Make an earlier version the one the creation shows (its gallery tile); nothing is deleted."""
    if not can_view_creation(creation=creation, user=user):
        raise PermissionDenied("You cannot see this creation.")
    membership_to_start_runs(workspace=creation.workspace, user=user)
    if run.creation_id != creation.pk:
        raise ValidationError("That version belongs to another creation.")
    if not run.is_final:
        raise ValidationError(f"v{run.version} is still going: it can be shown once it has ended.")
    creation_show_version(creation_id=creation.pk, run_id=run.pk)


def fork_title(creation: Creation) -> str:
    """What a fork is called until someone renames it."""
    title = f"Fork of {creation}"
    return title if len(title) <= TITLE_MAX_CHARS else title[: TITLE_MAX_CHARS - 1] + "…"


def creation_rename(*, creation: Creation, user: User, title: str) -> None:
    """Give a creation a new title (a fork its own, say). Who may: `may_rename_creation`, for a
    creation they can see."""
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not creation_visible(creation=creation, user=user, membership=membership):
        raise PermissionDenied("You cannot see this creation.")
    if not may_rename_creation(membership):
        raise PermissionDenied(RENAME_REFUSED)
    title = _clean_title(title)
    if not title:
        raise ValidationError({"title": "Write a title: a blank one is not a name."})
    Creation.objects.filter(pk=creation.pk).update(title=title)
    creation.title = title


@transaction.atomic
def creation_fork(*, creation: Creation, user: User, brief: str, workspace: Workspace | None = None) -> Run:
    """A new creation from an existing one, with a new brief, the same inputs, and a first run.

    It lands in `workspace` (default: the original's); the model is kept only
    inside the same workspace, since endpoints belong to a workspace."""
    if not can_view_creation(creation=creation, user=user):
        raise PermissionDenied("You cannot see this creation.")
    target = workspace or creation.workspace
    membership_to_start_runs(workspace=target, user=user)
    check_can_submit(target)
    same_workspace = target.pk == creation.workspace_id
    endpoint = creation.model_endpoint if same_workspace and creation.model_endpoint_id else None
    if endpoint is not None and not endpoint.is_enabled:
        endpoint = None
    _clean_endpoint(target, endpoint)
    brief = _clean_brief(brief)
    originals = list(creation.inputs.all())
    _check_room(target, adding_bytes=sum(original.size for original in originals))
    fork = Creation.objects.create(
        workspace=target,
        author=user,
        title=fork_title(creation),
        brief=brief,
        visibility=creation.visibility if same_workspace else Visibility.WORKSPACE,
        model_endpoint=endpoint,
        **fit_limits(creation, target),
        forked_from=creation,
    )
    for original in originals:
        with original.file.open("rb") as handle:
            data = handle.read()
        copy = InputFile(creation=fork, name=original.name, size=len(data), content_type=original.content_type)
        copy.file.save(original.name, ContentFile(data), save=False)
        copy.save()
    return _queue_new_run(fork, started_by=user)


def creation_delete(*, creation: Creation, user: AnyUser) -> None:
    """Delete a creation with its inputs, runs, events and artifacts. Their files leave
    storage once this commits (creations.stored_files), so the workspace's storage in
    use drops; the usage ledger keeps what its runs spent. Refused while a run of it is
    queued or going: cancel that first.

    Who may: `creations.access.can_delete_creation`."""
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if not can_delete_creation(creation=creation, user=user, membership=membership):
        raise PermissionDenied("You can delete the creations you made; owners and admins can delete any.")
    with transaction.atomic():
        # The row lock makes a run queued at this moment either seen here (and the delete
        # refused) or refused itself: its insert waits for this lock, then finds no creation.
        locked = Creation.objects.select_for_update().filter(pk=creation.pk).first()
        if locked is None:
            return
        if locked.runs.filter(status__in=ACTIVE_STATUSES).exists():
            raise ValidationError("A run of this creation is still going: cancel it, then delete the creation.")
        locked.delete()
