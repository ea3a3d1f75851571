"""Input files for a run about to be created: uploaded first, then named by id."""

from django.http import HttpRequest
from ninja import File, Router, Status
from ninja.files import UploadedFile

from api.auth import WRITE, caller
from api.inputs import inputs_stage, staged_expires_at
from api.schemas.inputs import StagedInputOut
from workspaces.permissions import workspace_membership_or_404

router = Router(tags=["inputs"])


@router.post(
    "/{slug}/inputs",
    auth=WRITE,
    response={201: list[StagedInputOut]},
    summary="Upload input files",
    description=(
        "multipart/form-data with one or more `files`. The same rules as the web form apply. Name the "
        "returned ids in `input_ids` when starting a run; uploads no run takes expire."
    ),
)
def upload_inputs(request: HttpRequest, slug: str, files: File[list[UploadedFile]]) -> Status[list[StagedInputOut]]:
    user = caller(request)
    membership = workspace_membership_or_404(slug=slug, user=user)
    staged = inputs_stage(workspace=membership.workspace, user=user, files=files)
    return Status(
        201,
        [
            StagedInputOut(
                id=item.pk,
                name=item.name,
                renamed_from=item.original_name or None,
                size=item.size,
                content_type=item.content_type,
                expires_at=staged_expires_at(item),
            )
            for item in staged
        ],
    )
