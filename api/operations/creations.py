"""A creation, addressed by any of its runs: rename it.

Who may is the creation services' own answer (creations.runs.services.creation_rename, which asks
workspaces.permissions.may_rename_creation), after the same visibility check as every run operation.
"""

from django.http import HttpRequest
from ninja import Router

from api.auth import WRITE, caller
from api.operations.runs import runs_for
from api.operations.versions import versions_out
from api.schemas.creations import RenameIn
from api.schemas.versions import VersionsOut
from creations.access import run_for_viewer_or_404
from creations.runs.services import creation_rename

router = Router(tags=["creations"])


@router.post(
    "/{run_id}/rename",
    auth=WRITE,
    response=VersionsOut,
    summary="Rename the run's creation",
    description=(
        "Gives the creation this run belongs to a new title: in the gallery, the lists and its pages. "
        "A fork is called “Fork of …” until renamed. Answers the versions, as GET …/versions does."
    ),
)
def rename_creation(request: HttpRequest, run_id: int, payload: RenameIn) -> VersionsOut:
    user = caller(request)
    run = run_for_viewer_or_404(pk=run_id, user=user, queryset=runs_for(user)).run
    creation_rename(creation=run.creation, user=user, title=payload.title)
    return versions_out(request, run)
