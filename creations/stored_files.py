"""Files in storage go when their rows go: deleting a creation, a run or a whole workspace
(cascades included) deletes the inputs, artifacts, previews, renditions, renderings and
event overflow files, PDF pages and version snapshots it held, once the transaction commits (a rollback keeps them)."""

from __future__ import annotations

import logging
from typing import Any

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.fields.files import FieldFile
from django.db.models.signals import post_delete

from creations.models import Artifact, ArtifactPage, InputFile, Run, RunSnapshot

log = logging.getLogger(__name__)


def _delete_later(*files: FieldFile | None) -> None:
    targets = [(f.storage, str(f.name)) for f in files if f]
    if not targets:
        return

    def delete() -> None:
        for storage, name in targets:
            try:
                storage.delete(name)
            except Exception:  # a file already gone, or storage away: the row is gone either way
                log.warning("could not delete stored file %s", name, exc_info=True)

    transaction.on_commit(delete)


def _artifact_deleted(sender: Any, instance: Artifact, **kwargs: Any) -> None:
    _delete_later(instance.file, instance.preview, instance.rendition, instance.rendered)


def _page_deleted(sender: Any, instance: ArtifactPage, **kwargs: Any) -> None:
    _delete_later(instance.image)


def _input_deleted(sender: Any, instance: InputFile, **kwargs: Any) -> None:
    _delete_later(instance.file)


def _snapshot_deleted(sender: Any, instance: RunSnapshot, **kwargs: Any) -> None:
    _delete_later(instance.file)


def _run_deleted(sender: Any, instance: Run, **kwargs: Any) -> None:
    folder = f"run-events/{instance.pk}"

    def delete() -> None:
        try:
            _, names = default_storage.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return
        for name in names:
            default_storage.delete(f"{folder}/{name}")

    transaction.on_commit(delete)


def connect() -> None:
    post_delete.connect(_artifact_deleted, sender=Artifact, dispatch_uid="artifact-files")
    post_delete.connect(_page_deleted, sender=ArtifactPage, dispatch_uid="artifact-page-files")
    post_delete.connect(_input_deleted, sender=InputFile, dispatch_uid="input-files")
    post_delete.connect(_run_deleted, sender=Run, dispatch_uid="run-event-files")
    post_delete.connect(_snapshot_deleted, sender=RunSnapshot, dispatch_uid="run-snapshot-files")
