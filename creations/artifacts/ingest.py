"""Turning the files a run left in /testbed/output into Artifacts.

Files are stored through Django's storage API (local disk or S3), with a kind
and content type sniffed from their content; the runs layer has them previewed
next (previews.py), once the agent's sandbox is released.

A run may store only what its workspace's storage quota has left: the runs
layer says how much (`storage_allowance`, in bytes), and a file that would
pass it is left out and named, with the reason, for the run's page.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.files import File
from django.db import IntegrityError, transaction
from django.template.defaultfilters import filesizeformat

from creations.artifacts.sniff import sniff_file
from creations.models import Artifact, Run
from sandboxes.runtime import CopiedFile

log = logging.getLogger(__name__)

MAX_PATH_CHARS = 1024


@dataclass
class Ingested:
    artifacts: list[Artifact] = field(default_factory=list)  # in path order
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (path, why it was not stored)


def ingest_outputs(*, run: Run, files: Iterable[CopiedFile], storage_allowance: int | None = None) -> Ingested:
    """Store each copied file as an Artifact of `run`, in path order, while their sizes
    fit in `storage_allowance` bytes (None: no limit); a file that does not fit is
    rejected, and a smaller one after it may still be stored."""
    ingested = Ingested()
    left = storage_allowance
    for copied in sorted(files, key=lambda f: f.path):
        if left is not None and copied.size > left:
            ingested.rejected.append((copied.path, _over_quota_reason(copied.size, left)))
            continue
        artifact = _store_one(run, copied)
        if artifact is not None:
            ingested.artifacts.append(artifact)
            if left is not None:
                left -= artifact.size
    return ingested


def _over_quota_reason(size: int, left: int) -> str:
    room = f"only {_bytes_text(left)} is left" if left > 0 else "nothing is left"
    return (
        f"Not stored: this {_bytes_text(size)} file would pass the workspace's storage quota ({room}). "
        "Deleting creations the workspace no longer needs frees space."
    )


def _bytes_text(size: int) -> str:
    return str(filesizeformat(size)).replace("\xa0", " ")  # plain text: it is stored in an event, read as JSON too


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
            # A linear read of the local copy, before it goes to storage (S3 included) as is.
            artifact.sha256 = hashlib.file_digest(handle, "sha256").hexdigest()
            handle.seek(0)
            artifact.file.save(path.rsplit("/", 1)[-1], File(handle), save=False)
            artifact.save()
    except IntegrityError:  # already ingested (a retried finish): keep the first copy
        log.info("Run %s: artifact %s already stored", run.pk, path)
        return None
    return artifact

