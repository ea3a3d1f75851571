"""The creation page as it renders: the versions, the selected one's files and trajectory, the forms
(each as sent back when refused), the fork's origin and the workspace's conversation."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from creations.access import CreationViewing, can_delete_creation, can_view_creation
from creations.arena.selectors import contestant_note, model_hidden_from, model_names, reason_shown
from creations.artifacts.display import artifact_displays
from creations.comments.access import may_comment_on, may_read_comments
from creations.comments.selectors import comments_shown
from creations.events.trajectory import NotKept, run_trajectory
from creations.models import Creation, Run
from creations.notifications.selectors import follows
from creations.runs.inputs import input_renames
from creations.web.forms import CommentForm, DeleteCreationForm, ForkForm, RefineForm, RenameForm
from creations.web.selectors import compare_default, run_artifact_page, version_rows
from sandboxes.agent import demo_follow_ups
from workspaces.permissions import may_rename_creation


def creation_page(
    request: HttpRequest,
    viewing: CreationViewing,
    *,
    fork_form: ForkForm | None = None,
    delete_form: DeleteCreationForm | None = None,
    refine_form: RefineForm | None = None,
    comment_form: CommentForm | None = None,
    rename_form: RenameForm | None = None,
    selected_pk: int | None = None,
    status: int = 200,
) -> HttpResponse:
    """The creation page, its versions newest first (the latest selected, or `?run=`); a refused
    fork, delete, refine or comment comes back to it with its form as sent."""
    creation = viewing.creation
    runs = list(creation.runs.all())
    wanted = str(selected_pk) if selected_pk is not None else request.GET.get("run")
    selected = next((r for r in runs if str(r.pk) == wanted), runs[0] if runs else None)
    contestant = contestant_note(creation=creation, user=request.user, is_member=viewing.is_member)
    # A fork of a blind contestant has its model: hidden as the contestant's is.
    model_hidden = contestant.model_hidden if contestant else model_hidden_from(creation=creation, user=request.user)
    hidden = model_names(creation) if model_hidden else ()
    trajectory = run_trajectory(run=selected, hidden=hidden) if selected else None
    inputs = list(creation.inputs.all())
    context = {
        "creation": creation,
        "runs": runs,
        "run": selected,
        "workspace": creation.workspace if viewing.is_member else None,
        "can_create": viewing.can_create,
        "can_delete": can_delete_creation(creation=creation, user=request.user, membership=viewing.membership),
        "has_active_run": any(not r.is_final for r in runs),
        "inputs": inputs,
        "renamed_in_brief": [renamed for renamed in input_renames(creation.brief, inputs) if renamed.in_brief],
        **_artifacts_context(request, creation, selected),
        "not_kept": trajectory.rejected if trajectory else NotKept(),
        "trajectory": trajectory,
        "fork_form": fork_form or ForkForm(initial={"brief": creation.brief}),
        "delete_form": delete_form or DeleteCreationForm(),
        "refine_form": refine_form or RefineForm(),
        "can_rename": may_rename_creation(viewing.membership),
        "rename_form": rename_form or RenameForm(initial={"title": str(creation)}),
        "origin": _origin_for(request, creation),
        "latest_version": runs[0].version if runs else None,
        "version_rows": version_rows(runs),
        # What the selected version is compared with by default: the one it came from, else the one before.
        "compare_with": compare_default(runs, selected),
        "contestant": contestant,
        "model_hidden": model_hidden,
        "reason": reason_shown(run=selected, model_hidden=model_hidden) if selected else "",
        "follow_ups": demo_follow_ups(creation.brief) if creation.model_endpoint_id is None else [],
        **_conversation_context(request, viewing, comment_form),
    }
    return render(request, "creations/creation_detail.html", context, status=status)


def _conversation_context(
    request: HttpRequest, viewing: CreationViewing, comment_form: CommentForm | None
) -> dict[str, object]:
    """The workspace's comments on the creation, the form to add one, and whether the reader follows it:
    for members who see it (a public creation shows its files to others, never its conversation)."""
    creation, membership = viewing.creation, viewing.membership
    if membership is None or not may_read_comments(creation=creation, user=request.user, membership=membership):
        return {"conversation": False}
    return {
        "conversation": True,
        "comments": comments_shown(creation=creation, user=request.user, membership=membership),
        "may_comment": may_comment_on(creation=creation, user=request.user, membership=membership),
        "comment_form": comment_form or CommentForm(),
        "following": follows(creation=creation, user=request.user),
    }


def _origin_for(request: HttpRequest, creation: Creation) -> Creation | None:
    """The creation a fork was made from, when the viewer may see it (its title is not said otherwise)."""
    origin = creation.forked_from
    if origin is None or not can_view_creation(creation=origin, user=request.user):
        return None
    return origin


def _artifacts_context(request: HttpRequest, creation: Creation, run: Run | None) -> dict[str, object]:
    """A page of the selected version's files (`?page=`), documents rendered inline."""
    if run is None:
        return {"artifacts": []}
    page = run_artifact_page(run=run, number=request.GET.get("page", ""))
    return {
        "artifacts": artifact_displays(page.object_list, user=request.user, render_documents=True),
        "artifact_page": page,
        "artifact_page_url": f"{creation.get_absolute_url()}?run={run.pk}&",
    }
