"""Input files uploaded through the API before their run exists: staged, then
taken by the run that names them, or expired.

The upload rules are the web form's (creations.runs.inputs); a person may keep
only so many bytes waiting, so uploads nobody uses cannot fill the storage. What
waits counts in the workspace's storage, and an upload must fit in its quota
(checked under the workspace's row lock, so parallel uploads cannot pass it together).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F, Sum
from django.db.models.signals import post_delete
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from api.models import StagedInput
from creations.runs.inputs import clean_input_files
from creations.usage.budgets import storage_room_check
from creations.usage.storage import storage_holder_register
from workspaces.models import Workspace
from workspaces.permissions import membership_to_start_runs


def inputs_stage(*, workspace: Workspace, user: User, files: Sequence[UploadedFile]) -> list[StagedInput]:
    membership_to_start_runs(workspace=workspace, user=user)
    if not files:
        raise ValidationError({"files": "Attach at least one file (multipart field `files`)."})
    cleaned = clean_input_files(files)
    adding = sum(upload.size or 0 for _, upload in cleaned)
    staged = []
    with transaction.atomic():
        storage_room_check(workspace_id=workspace.pk, adding=adding)
        waiting = StagedInput.objects.filter(uploaded_by=user).aggregate(total=Sum("size"))["total"] or 0
        if waiting + adding > settings.API_STAGED_INPUT_MAX_BYTES:
            raise ValidationError(
                {
                    "files": f"You have {filesizeformat(waiting)} of uploads waiting for a run (at most "
                    f"{filesizeformat(settings.API_STAGED_INPUT_MAX_BYTES)}): create a run with them, or wait "
                    f"until they expire ({settings.API_STAGED_INPUT_HOURS} hours after upload)."
                }
            )
        for name, upload in cleaned:
            sent_as = upload.name or ""
            item = StagedInput(
                workspace=workspace,
                uploaded_by=user,
                name=name,
                original_name=sent_as[:255] if sent_as != name else "",
                size=upload.size or 0,
                content_type=(upload.content_type or "")[:100],
            )
            item.file.save(name, upload, save=False)
            item.save()
            staged.append(item)
    return staged


def staged_expires_at(item: StagedInput) -> datetime:
    return item.created_at + timedelta(hours=settings.API_STAGED_INPUT_HOURS)


def inputs_take(*, workspace: Workspace, user: User, ids: Sequence[int]) -> list[UploadedFile]:
    """The caller's staged inputs `ids` in `workspace`, as uploads for creation_submit, and
    gone from the staging area when the caller's transaction commits. Call inside it."""
    if not ids:
        return []
    if len(set(ids)) != len(ids):
        raise ValidationError({"input_ids": "An input id is listed twice."})
    items = list(
        StagedInput.objects.select_for_update().filter(
            pk__in=ids, workspace=workspace, uploaded_by=user, created_at__gt=_expired_before()
        )
    )
    missing = sorted(set(ids) - {item.pk for item in items})
    if missing:
        raise ValidationError(
            {
                "input_ids": f"No uploaded input with id {', '.join(map(str, missing))} waits for a run in this "
                "workspace: upload it again (uploads are used once and expire)."
            }
        )
    by_id = {item.pk: item for item in items}
    uploads = []
    for pk in ids:
        item = by_id[pk]
        # Under the name it was sent with: the run service makes it safe again, the same way, and keeps the change.
        name = item.original_name or item.name
        stored = item.file.open("rb")
        uploads.append(UploadedFile(file=stored, name=name, content_type=item.content_type, size=item.size))
    StagedInput.objects.filter(pk__in=ids).delete()
    return uploads


def _expired_before() -> datetime:
    return timezone.now() - timedelta(hours=settings.API_STAGED_INPUT_HOURS)


def staged_inputs_expire() -> int:
    """Delete uploads no run took in time (their files go once this commits)."""
    deleted, _ = StagedInput.objects.filter(created_at__lte=_expired_before()).delete()
    return deleted


def _delete_file_after_commit(sender: type[StagedInput], instance: StagedInput, **kwargs: object) -> None:
    storage, name = instance.file.storage, instance.file.name
    if name:
        transaction.on_commit(lambda: storage.delete(name))


def connect() -> None:
    post_delete.connect(_delete_file_after_commit, sender=StagedInput, dispatch_uid="staged-input-files")
    # Uploads waiting for their run are kept in the workspace's storage like its inputs.
    storage_holder_register(StagedInput, workspace="workspace_id", size=F("size"))
