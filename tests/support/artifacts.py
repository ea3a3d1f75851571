"""Finished runs with real artifact files, for renderer, page and browser tests.

The kind comes from the real content sniffer, as at ingestion, so a test that
names a file `report.png` but writes HTML gets an HTML artifact.
"""

import hashlib
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.files.base import ContentFile

from creations.artifacts.sniff import sniff_bytes
from creations.models import Artifact, Run, RunStatus, Visibility
from tests.support.factories import RunEventFactory, RunFactory
from workspaces.models import Workspace


@dataclass
class Output:
    path: str
    data: bytes


def finished_run(
    *,
    workspace: Workspace,
    author: User,
    outputs: list[Output],
    brief: str = "Make something nice",
    title: str = "",
    visibility: str = Visibility.WORKSPACE,
    previews: bool = False,
    status: str = RunStatus.SUCCEEDED,
) -> Run:
    run = RunFactory.create(
        finished=True,
        status=status,
        creation__workspace=workspace,
        creation__author=author,
        creation__brief=brief,
        creation__title=title,
        creation__visibility=visibility,
    )
    RunEventFactory.create(run=run, seq=1)
    for output in outputs:
        add_artifact(run, output, previews=previews)
    return run


def add_artifact(run: Run, output: Output, *, previews: bool = False) -> Artifact:
    sniffed = sniff_bytes(output.data[: 64 * 1024], name=output.path)
    artifact = Artifact(
        run=run,
        path=output.path,
        kind=sniffed.kind,
        size=len(output.data),
        content_type=sniffed.content_type,
        sha256=hashlib.sha256(output.data).hexdigest(),
    )
    artifact.file.save(output.path.rsplit("/", 1)[-1], ContentFile(output.data), save=False)
    artifact.save()
    if previews:
        from creations.artifacts.previews import make_previews

        make_previews([artifact], run_id=run.pk)
        artifact.refresh_from_db()
    return artifact
