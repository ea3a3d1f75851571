"""Finished runs with real artifact files, for renderer, page and browser tests.

The kind comes from the real content sniffer, as at ingestion, so a test that
names a file `report.png` but writes HTML gets an HTML artifact.
"""

import hashlib
from collections.abc import Sequence, Set
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
    previews: bool | Set[str] = False,
    status: str = RunStatus.SUCCEEDED,
) -> Run:
    """A finished run that left `outputs`; with `previews` (True, or the paths that need them), their
    previews and renderings made as at the end of a run."""
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
    artifacts = [add_artifact(run, output) for output in outputs]
    make_previews_of(run, artifacts, previews)
    return run


def make_previews_of(run: Run, artifacts: Sequence[Artifact], previews: bool | Set[str]) -> None:
    """Previews of the `artifacts` `previews` asks for (True: all), in one preview sandbox as a run's end
    makes them."""
    # A set, not any collection: a lone string would match every path it contains.
    wanted = [a for a in artifacts if previews is True or (previews is not False and a.path in previews)]
    if wanted:
        from creations.artifacts.previews import make_previews

        make_previews(wanted, run_id=run.pk)
        for artifact in wanted:
            artifact.refresh_from_db()


def add_artifact(run: Run, output: Output) -> Artifact:
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
    return artifact
