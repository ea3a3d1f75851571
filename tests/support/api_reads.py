"""A workspace that can be made bigger, for measuring what the API's reads cost.

`ReadWorld.grow(count)` adds `count` more of every row some read lists or joins:
workspaces the member belongs to, members, models, runs of other people's creations
(forks, each beside a private one of the owner's), versions of one creation asked for by different
people, its artifacts (real files, changed from one version to the next, every
other change's comparison made), events and usage records. What each read
is asked about (the subject run, its newer version, one artifact) stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.files.base import ContentFile

from creations.compare.planning import plan_for
from creations.compare.results import Detail, PixelDiff
from creations.compare.store import detail_put
from creations.models import Artifact, Creation, Run, RunEvent, Visibility
from tests.support.artifacts import Output, add_artifact
from tests.support.factories import (
    MembershipFactory,
    ModelEndpointFactory,
    RunFactory,
    UsageRecordFactory,
    UserFactory,
    WorkspaceFactory,
)
from tests.support.fixtures.accounts import Team
from workspaces.models import Role

# A PNG signature is all the API looks at in a preview (it never decodes one).
PREVIEW_PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def _png(label: str) -> bytes:
    return PREVIEW_PNG + label.encode()


@dataclass
class ReadWorld:
    team: Team
    subject: Run  # v1 of a creation whose versions, artifacts and events grow
    newer: Run  # its v2, compared with it
    artifact: Artifact  # one of the subject's files, with a preview
    grown: int = field(default=0)

    @classmethod
    def make(cls, team: Team) -> ReadWorld:
        endpoint = ModelEndpointFactory.create(workspace=team.workspace)
        subject = RunFactory.create(
            finished=True,
            creation__workspace=team.workspace,
            creation__author=team.owner,
            creation__model_endpoint=endpoint,
        )
        newer = RunFactory.create(finished=True, creation=subject.creation, parent=subject, started_by=team.member)
        artifact = add_artifact(subject, Output("poster.png", _png("poster")))
        artifact.preview.save("poster-preview.png", ContentFile(_png("preview")))
        return cls(team=team, subject=subject, newer=newer, artifact=artifact)

    def grow(self, count: int) -> None:
        for _ in range(count):
            self.grown += 1
            self._grow_one(self.grown)

    def _grow_one(self, n: int) -> None:
        team, workspace = self.team, self.team.workspace
        other_workspace = WorkspaceFactory.create()
        MembershipFactory.create(workspace=other_workspace, user=team.member, role=Role.VIEWER)
        UsageRecordFactory.create(workspace=other_workspace, person=team.member, prompt_tokens=n)

        person = UserFactory.create()
        MembershipFactory.create(workspace=workspace, user=person, role=Role.MEMBER)
        endpoint = ModelEndpointFactory.create(workspace=workspace)
        for author, visibility in ((person, Visibility.WORKSPACE), (team.owner, Visibility.PRIVATE)):
            run = RunFactory.create(
                finished=True,
                creation__workspace=workspace,
                creation__author=author,
                creation__visibility=visibility,
                creation__model_endpoint=endpoint,
                creation__forked_from=self.subject.creation,
                prompt_tokens=100 * n,
            )
            UsageRecordFactory.create(run=run, model_name=endpoint.name)

        version = RunFactory.create(
            finished=True, creation=self.subject.creation, parent=self.newer, started_by=person, instruction=f"try {n}"
        )
        UsageRecordFactory.create(run=version)
        Creation.objects.filter(pk=self.subject.creation_id).update(shown_run=version)

        before, after = (
            add_artifact(run, Output(f"frames/frame-{n:03}.png", _png(f"{label} {n}")))
            for run, label in ((self.subject, "before"), (self.newer, "after"))
        )
        if n % 2:  # every other changed frame's comparison made, with an overlay picture
            pixels = PixelDiff(width_a=8, height_a=8, width_b=8, height_b=8, changed_pixels=n, total_pixels=64)
            detail_put(
                sha_a=before.sha256,
                sha_b=after.sha256,
                plan=plan_for(before, after).plan,
                detail=Detail(pixels=pixels),
                overlay=PREVIEW_PNG,
            )
        start = Run.objects.get(pk=self.subject.pk).last_seq
        RunEvent.objects.bulk_create(
            RunEvent(run=self.subject, seq=start + i, kind="step_started", payload={"step": start + i, "remaining": 0})
            for i in (1, 2)
        )
        Run.objects.filter(pk=self.subject.pk).update(last_seq=start + 2)
