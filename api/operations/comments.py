"""Comments on a run's creation (or its version): list them, write one, edit and delete one.

Who may is creations.comments' answer (its access checks and services), after the same
visibility check as every run operation (creations.access)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Router, Status

from api.auth import WRITE, caller
from api.operations.runs import RUN_QUERYSET
from api.schemas.comments import CommentEditIn, CommentIn, CommentOut
from creations.access import run_for_viewer_or_404
from creations.comments.access import comment_for_reader_or_404, may_read_comments
from creations.comments.models import Comment
from creations.comments.selectors import comments_of_creation
from creations.comments.services import comment_create, comment_delete, comment_edit
from workspaces.models import Membership
from workspaces.permissions import may_delete_comment, may_edit_comment

router = Router(tags=["comments"])
comment_router = Router(tags=["comments"])


def comment_out(comment: Comment, *, membership: Membership, user: User) -> CommentOut:
    return CommentOut(
        id=comment.pk,
        creation_id=comment.creation_id,
        run_id=comment.run_id,
        version=comment.run.version if comment.run is not None else None,
        author=comment.author.get_username() if comment.author is not None else None,
        text=comment.text,
        mentions=[person.get_username() for person in comment.mentioned.all()],
        created_at=comment.created_at,
        edited_at=comment.edited_at,
        may_edit=may_edit_comment(membership, workspace=membership.workspace, author_id=comment.author_id, user=user),
        may_delete=may_delete_comment(membership, author_id=comment.author_id, user=user),
    )


@router.get(
    "/{run_id}/comments",
    response=list[CommentOut],
    summary="The comments on a run's creation",
    description=(
        "Every comment on the creation, on the whole and on each version (`run_id`), oldest first. "
        "Comments are its workspace's conversation: others get an empty list for a public creation."
    ),
)
def list_comments(request: HttpRequest, run_id: int) -> list[CommentOut]:
    user = caller(request)
    viewing = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET)
    creation, membership = viewing.run.creation, viewing.membership
    if membership is None or not may_read_comments(creation=creation, user=user, membership=membership):
        return []
    return [comment_out(comment, membership=membership, user=user) for comment in comments_of_creation(creation)]


@router.post(
    "/{run_id}/comments",
    auth=WRITE,
    response={201: CommentOut},
    summary="Comment on a run's creation",
    description=(
        "On the creation as a whole, or with `on_version` on this run's version. Members it mentions "
        "(@username) are told. Owners, admins and members comment; viewers when their workspace allows it "
        "(403 otherwise)."
    ),
)
def create_comment(request: HttpRequest, run_id: int, payload: CommentIn) -> Status[CommentOut]:
    user = caller(request)
    viewing = run_for_viewer_or_404(pk=run_id, user=user, queryset=RUN_QUERYSET)
    run = viewing.run
    comment = comment_create(
        creation=run.creation, user=user, text=payload.text, run=run if payload.on_version else None
    )
    assert viewing.membership is not None  # who may comment is a member
    return Status(201, comment_out(comment, membership=viewing.membership, user=user))


@comment_router.patch(
    "/{comment_id}",
    auth=WRITE,
    response=CommentOut,
    summary="Edit your comment",
    description=(
        "Only its author may (403 for the others who read it). Members it now mentions for the first time are told."
    ),
)
def edit_comment(request: HttpRequest, comment_id: int, payload: CommentEditIn) -> CommentOut:
    user = caller(request)
    viewing = comment_for_reader_or_404(pk=comment_id, user=user)
    comment = comment_edit(viewing=viewing, user=user, text=payload.text)
    return comment_out(comment, membership=viewing.membership, user=user)


@comment_router.delete(
    "/{comment_id}",
    auth=WRITE,
    response={204: None},
    summary="Delete a comment",
    description="Its author may, and the workspace's owners and admins (403 for the others who read it).",
)
def delete_comment(request: HttpRequest, comment_id: int) -> Status[None]:
    user = caller(request)
    comment_delete(viewing=comment_for_reader_or_404(pk=comment_id, user=user), user=user)
    return Status(204, None)
