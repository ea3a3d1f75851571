"""Turning the files a run left in /testbed/output into Artifacts.

Files are stored through Django's storage API (local disk or S3), with a kind
and content type sniffed from their content, then previewed in a sandbox with
no network (previews.py); a preview that fails is logged and never fails the run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.core.files import File
from django.db import IntegrityError, transaction

from creations.artifacts.previews import make_previews
from creations.artifacts.sniff import sniff_file
from creations.models import Artifact, Run
from sandboxes.runtime import CopiedFile

log = logging.getLogger(__name__)

MAX_PATH_CHARS = 1024


def ingest_outputs(*, run: Run, files: Iterable[CopiedFile]) -> list[Artifact]:
    """Store each copied file as an Artifact of `run`; returns them in path order."""
    artifacts: list[Artifact] = []
    for copied in sorted(files, key=lambda f: f.path):
        artifact = _store_one(run, copied)
        if artifact is not None:
            artifacts.append(artifact)
    make_previews(artifacts, run_id=run.pk)
    return artifacts


def _store_one(run: Run, copied: CopiedFile) -> Artifact | None:
    path = copied.path.strip("/")
    if not path or len(path) > MAX_PATH_CHARS:
        log.warning("Run %s: skipping output file with an unusable path %r", run.pk, copied.path[:200])
        return None
    sniffed = sniff_file(copied.local_path, name=path)
    artifact = Artifact(
        run=run,
        workspace_id=run.creation.workspace_id,
        path=path,
        kind=sniffed.kind,
        size=copied.size,
        content_type=sniffed.content_type,
    )
    try:
        with copied.local_path.open("rb") as handle, transaction.atomic():
            artifact.file.save(path.rsplit("/", 1)[-1], File(handle), save=False)
            artifact.save()
    except IntegrityError:  # already ingested (a retried finish): keep the first copy
        log.info("Run %s: artifact %s already stored", run.pk, path)
        return None
    return artifact


def artifact_summary(artifact: Artifact) -> dict[str, Any]:
    """What the `artifacts` event tells the page about each file."""
    return {
        "id": artifact.pk,
        "path": artifact.path,
        "kind": artifact.kind,
        "size": artifact.size,
        "content_type": artifact.content_type,
    }
