"""Artifacts reused as input files of a new creation: which a person may take, and their
stored bytes handed to the run service as uploads.

An artifact may be taken by whoever may see its creation (creations.access, the rule
fork follows), into any workspace where they may start runs (the service's own check).
One they may not see gets the same answer as one that does not exist. The copy then
meets every rule a file from the person's disk meets (creations.runs.inputs).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.core.files.storage import Storage
from django.core.files.uploadedfile import UploadedFile

from creations.access import creation_visible
from creations.artifacts.streaming import open_stream
from creations.models import Artifact
from creations.runs.inputs import allowed_extensions, clean_input_name, numbered_input_name
from workspaces.models import Membership

AnyUser = User | AnonymousUser


def artifacts_visible_to(*, user: AnyUser, ids: Iterable[int]) -> dict[int, Artifact]:
    """Those of the artifacts `ids` the person may see, by id: missing and hidden ones alike left out."""
    wanted = set(ids)
    if not wanted:
        return {}
    artifacts = list(Artifact.objects.select_related("run__creation").filter(pk__in=wanted))
    memberships: dict[int, Membership] = {}
    if user.is_authenticated:
        workspace_ids = {artifact.run.creation.workspace_id for artifact in artifacts}
        memberships = {m.workspace_id: m for m in Membership.objects.filter(user=user, workspace_id__in=workspace_ids)}
    return {
        artifact.pk: artifact
        for artifact in artifacts
        if creation_visible(
            creation=artifact.run.creation, user=user, membership=memberships.get(artifact.run.creation.workspace_id)
        )
    }


def artifact_usable_as_input(artifact: Artifact) -> bool:
    """Whether the upload rules would take this artifact on its own (type and size), so pages
    offer to reuse only what can be reused."""
    extension = artifact.name.rsplit(".", 1)[-1].lower() if "." in artifact.name else ""
    return extension in allowed_extensions() and artifact.size <= settings.UPLOAD_MAX_FILE_BYTES


def missing_artifacts_message(missing: Sequence[int]) -> str:
    ids = ", ".join(str(pk) for pk in missing)
    return (
        f"No artifact {ids} that you may see: it was deleted, or its creation is not shared with you. "
        "Leave it out, or ask its author to share the creation."
    )


def _name_or_blank(raw: str | None) -> str:
    try:
        return clean_input_name(raw or "")
    except ValidationError:  # a bad upload name is the upload rules' to report, with the others
        return ""


def artifact_uploads(*, user: AnyUser, ids: Sequence[int], beside: Sequence[UploadedFile] = ()) -> list[UploadedFile]:
    """The artifacts `ids` as uploads for the run service, named after their files. A name an
    upload in `beside` or an earlier artifact already has gets a number ("map (2).html"): an
    artifact's name is not the person's to change, so refusing it would leave them stuck.
    Raises ValidationError (on `artifact_ids`) for an id listed twice or one the person may not see."""
    if not ids:
        return []
    if len(set(ids)) != len(ids):
        raise ValidationError({"artifact_ids": "An artifact id is listed twice."})
    visible = artifacts_visible_to(user=user, ids=ids)
    missing = [pk for pk in ids if pk not in visible]
    if missing:
        raise ValidationError({"artifact_ids": missing_artifacts_message(missing)})
    taken = {_name_or_blank(upload.name) for upload in beside}
    uploads = []
    for pk in ids:
        artifact = visible[pk]
        name = numbered_input_name(clean_input_name(artifact.name), taken)
        taken.add(name)
        stream: Any = StoredFileStream(artifact.file.storage, str(artifact.file.name))  # the stubs say IO[str]
        uploads.append(UploadedFile(file=stream, name=name, content_type=artifact.content_type, size=artifact.size))
    return uploads


class StoredFileStream(io.RawIOBase):
    """A stored file read once, front to back, in the reader's chunks: from S3 the body of one
    GET as it arrives (creations.artifacts.streaming), so a copy never holds a whole file in
    memory or on local disk. Opened at the first read, so a file the upload rules refuse is
    never fetched, and let go at its end."""

    def __init__(self, storage: Storage, name: str) -> None:
        super().__init__()
        self._storage = storage
        self._name = name
        self._handle: Any = None
        self._finished = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._finished:
            return 0
        if self._handle is None:
            self._handle = open_stream(self._storage, self._name)
        data = self._handle.read(len(buffer))
        if not data:
            self._finished = True
            self._release()
            return 0
        buffer[: len(data)] = data
        return len(data)

    def _release(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            handle.close()

    def close(self) -> None:
        self._release()
        super().close()
