"""Small builders for run tests."""

from __future__ import annotations

from typing import Any

from creations.models import Creation, Run, RunStatus, Visibility
from tests.fixtures_accounts import Team


def make_run(
    team: Team, *, status: str = RunStatus.QUEUED, visibility: str = Visibility.WORKSPACE, **fields: Any
) -> Run:
    creation = Creation.objects.create(
        workspace=team.workspace, author=team.owner, brief="a calm piano piece", visibility=visibility
    )
    return Run.objects.create(creation=creation, status=status, **fields)
