"""Turning the files a run left in /testbed/output into Artifacts.

Files are stored through Django's storage API (local disk or S3), with a kind
and content type sniffed from their content; the runs layer has them previewed
next (previews.py), once the agent's sandbox is released.

A file's sidecars (`poster.png.alt.txt`, `clip.mp4.vtt`: sidecars.py) become fields
of its Artifact instead of files of their own, when they pass their checks.

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

from creations.artifacts import sidecars
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
    ordered = sorted(files, key=lambda f: f.path)
    paths = {copied.path.strip("/") for copied in ordered}
    targets = {copied.path: sidecars.sidecar_target(copied.path.strip("/"), paths) for copied in ordered}
    left = _store_all(run, [copied for copied in ordered if targets[copied.path] is None], ingested, storage_allowance)
    read = [copied for copied in ordered if targets[copied.path] is not None]
    _store_all(run, _apply_sidecars(run, read, targets, ingested), ingested, left)
    ingested.artifacts.sort(key=lambda artifact: artifact.path)
    return ingested


def _store_all(run: Run, files: list[CopiedFile], ingested: Ingested, left: int | None) -> int | None:
    """Store each file while it fits in `left` bytes (None: no limit); what is left after them."""
    for copied in files:
        if left is not None and copied.size > left:
            ingested.rejected.append((copied.path, _over_quota_reason(copied.size, left)))
            continue
        artifact = _store_one(run, copied)
        if artifact is not None:
            ingested.artifacts.append(artifact)
            if left is not None:
                left -= artifact.size
    return left


def _apply_sidecars(
    run: Run, files: list[CopiedFile], targets: dict[str, str | None], ingested: Ingested
) -> list[CopiedFile]:
    """Each sidecar's text onto its file's Artifact; the sidecars that could not be used, to be stored
    as files of their own."""
    stored = {artifact.path: artifact for artifact in ingested.artifacts}
    unused = []
    for copied in files:
        target = targets[copied.path] or ""
        artifact = stored.get(target) or Artifact.objects.filter(run=run, path=target).first()  # a retried finish
        is_captions = copied.path.endswith(sidecars.CAPTIONS_SUFFIX)
        read = sidecars.captions if is_captions else sidecars.alt_text
        text = read(copied.local_path, artifact.kind) if artifact is not None else None
        if artifact is None or text is None:
            log.info("Run %s: %s is kept as a file: not a usable sidecar of %s", run.pk, copied.path, target)
            unused.append(copied)
            continue
        field = "captions_vtt" if is_captions else "alt_text"
        setattr(artifact, field, text)
        artifact.save(update_fields=[field])
    return unused


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
