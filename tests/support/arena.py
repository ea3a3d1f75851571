"""Comparisons for tests: a team's models, a comparison of them made through the service, and
its runs finished with files, as a worker would leave them."""

from __future__ import annotations

from django.contrib.auth.models import User

from creations.arena.models import Comparison
from creations.arena.services import comparison_submit
from creations.models import RunStatus
from creations.runs.state import run_finish
from tests.support.artifacts import Output, add_artifact
from tests.support.factories import ModelEndpointFactory
from tests.support.media_samples import png_bytes
from workspaces.models import ModelEndpoint, Workspace

# Names no page would show by chance: found in a page means the page named the model.
MODEL_NAMES = ("Quillfeather-7", "Brassmoth-2", "Tallowfin-3", "Emberwick-5", "Saltmarrow-1")


def team_models(workspace: Workspace, count: int = 2) -> list[ModelEndpoint]:
    return [
        ModelEndpointFactory.create(workspace=workspace, name=name, model=f"{name.lower()}-instruct")
        for name in MODEL_NAMES[:count]
    ]


def a_comparison(
    workspace: Workspace, author: User, models: list[ModelEndpoint], *, blind: bool = False, brief: str = ""
) -> Comparison:
    return comparison_submit(
        workspace=workspace, author=author, brief=brief or "A poster for the spring fair", endpoints=models, blind=blind
    )


def finish_contestants(comparison: Comparison, *, outputs: list[Output] | None = None) -> None:
    """Each contestant's run succeeds, leaving `outputs` (a picture by default)."""
    for contestant in comparison.contestants.select_related("run"):
        for output in outputs if outputs is not None else [Output("poster.png", png_bytes(64, 40))]:
            add_artifact(contestant.run, output)
        run_finish(run_id=contestant.run_id, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
