"""What each role gets from every URL the platform serves (the live stream: test_role_matrix_websocket.py).

The URLs come from the URLconf itself (tests.support.urlconf), so a new view with
no row below fails `test_every_url_has_a_row_in_the_matrix` until someone writes
down who may use it. Each row says, per HTTP method, what each role gets, on a
workspace with one creation that is public, workspace-visible or private.

Read a row's cell as what the person notices: a page (200), the login page (302
to login), "not found" (404: the platform hides what you may not see), "forbidden"
(403), "method not allowed" (405), or a redirect to a named page. For a write,
`done` means the change took place and `refused` that the page explains why it
did not; either way the row's `changed` check confirms it in the database.

The world each case starts from, and how URL arguments address its objects, are in
tests.support.role_world; the outcomes and the per-role rules the rows use, in
tests.support.role_outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import Resolver404, resolve, reverse

from api.models import PersonalAccessToken
from creations.arena.models import Vote
from creations.comments.models import Comment
from creations.evaluations.models import Evaluation, Suite
from creations.models import Creation, Run, RunMessage
from creations.notifications.models import Follow, Notification, NotificationSetting
from creations.schedules.models import Schedule
from creations.sharing.models import ShareLink
from creations.webhooks.models import Webhook, WebhookDelivery
from sandboxes.agent import demo_follow_ups
from tests.support.fixtures.accounts import PASSWORD
from tests.support.role_outcomes import (
    FORBIDDEN,
    LISTED,
    LOGIN,
    NOT_ALLOWED,
    NOT_FOUND,
    OK,
    UNLISTED,
    Outcome,
    Rule,
    anyone,
    cancel,
    creation_page,
    delete_creation,
    done,
    members,
    public_list,
    redirect,
    refine,
    refused,
    rename_creation,
    restore_version,
    signed_in,
    start_from_creation,
    talk_to_run,
    usage_export,
    usage_list,
    workspace_list,
)
from tests.support.role_world import (
    ANONYMOUS,
    CREATORS,
    MANAGERS,
    MEMBER,
    MEMBERS,
    OUTSIDER,
    OWNER,
    ROLES,
    SPARE_SUITE,
    TITLE,
    VISIBILITIES,
    WORKSPACE,
    World,
    sees,
    sign_in_as,
    url_kwargs,
    world_for_case,
)
from tests.support.urlconf import Route, http_routes, served_urlconfs
from workspaces.models import Invitation, Membership, ModelEndpoint, Role, Workspace

pytestmark = pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")

# Includes that have no row, and why: neither serves workspace data, and both are Django's own.
NOT_IN_THE_MATRIX = {
    "admin": "Django's admin site: for staff accounts only, guarded by Django's is_staff check, not by workspace roles",
    "django.contrib.auth.urls": "Django's login, logout and password pages: open to everyone by design",
    "api.urls": "the API has a matrix of its own, with token auth, over every operation: tests/api/test_role_matrix.py",
}

GET, POST = "GET", "POST"


Effect = Callable[[World, User | None], bool]


@dataclass(frozen=True)
class Row:
    name: str
    expect: dict[str, Rule]  # by HTTP method
    data: dict[str, str] = field(default_factory=dict)  # what a POST sends
    changed: Effect | None = None  # has the write taken place? (a GET must never change anything)
    per_creation: bool = False  # the outcome depends on the creation's visibility
    target: str = "colleague"  # whose membership <membership_id> is
    label: str = ""  # tells two rows of one URL apart


def _role_of(target: str) -> Callable[[World], str | None]:
    def role(world: World) -> str | None:
        return Membership.objects.filter(pk=world.memberships[target].pk).values_list("role", flat=True).first()

    return role


def _left(world: World, actor: User | None) -> bool:
    was_member = actor in [world.people[role] for role in MEMBERS]
    return was_member and not Membership.objects.filter(workspace=world.workspace, user=actor).exists()


POST_ONLY = signed_in(NOT_ALLOWED)
TO_MEMBERS = "workspace_members"
TO_MODELS = "workspace_endpoints"
OWNERS = {OWNER}


def _own_token_revoked(who: str, visibility: str) -> Outcome:
    """The token is the owner's: only they may revoke it; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    return done(to="access_tokens") if who == OWNER else NOT_FOUND


def _share_dialog(outcome: Outcome) -> Rule:
    """A creation's share dialog: for those who see it and may share in its workspace; the others
    who see it (viewers, outsiders of a public one) are told who may."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not sees(who, visibility):
            return NOT_FOUND
        return outcome if who in CREATORS else refused(403)

    return rule


def _share_links_list(who: str, visibility: str) -> Outcome:
    """Owners and admins see every link of the workspace (the world's, by its author, names the
    creation); the other members their own."""
    if who == ANONYMOUS:
        return LOGIN
    if who == OUTSIDER:
        return NOT_FOUND
    return LISTED if who in MANAGERS else UNLISTED


def _revoke_share_link(who: str, visibility: str) -> Outcome:
    """The author's link: owners and admins may revoke it (a private creation's too); the other members
    who see the creation are refused; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    if who in MANAGERS:
        return done(to="workspace_share_links")
    return FORBIDDEN if who in MEMBERS and sees(who, visibility) else NOT_FOUND


def _schedule_page(outcome: Outcome) -> Rule:
    """A creation's schedule page: for those who see it and may start runs in its workspace; the others
    who see it are told who may. The world's creation uses the demo model, which cannot refresh on a
    schedule: a POST is refused, saying so."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not sees(who, visibility):
            return NOT_FOUND
        return outcome if who in CREATORS else refused(403)

    return rule


def _clear_schedule(who: str, visibility: str) -> Outcome:
    """The world's creation has no schedule: those who may clear one are sent back to its page."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return redirect("creation_detail") if who in CREATORS else FORBIDDEN


WEBHOOK_PAGE = members(MANAGERS, OK, otherwise=FORBIDDEN)


def _comparison(for_creators: Outcome, for_viewers: Outcome) -> Rule:
    """The world's comparison: for the workspace's members who see its contestants (a public creation
    does not open it to outsiders); those who may start runs vote, viewers watch."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if who not in MEMBERS or not sees(who, visibility):
            return NOT_FOUND
        return for_creators if who in CREATORS else for_viewers

    return rule


def _cancel_comparison(who: str, visibility: str) -> Outcome:
    if who == ANONYMOUS:
        return LOGIN
    if who not in MEMBERS or not sees(who, visibility):
        return NOT_FOUND
    return redirect("comparison_detail") if who in MANAGERS else refused(403)


def _use_artifact(who: str, visibility: str) -> Outcome:
    """To a new-creation form with the artifact attached, for whoever sees it: the creators to
    its own workspace's, the others to their personal workspace's."""
    if who == ANONYMOUS:
        return LOGIN
    return redirect("creation_new") if sees(who, visibility) else NOT_FOUND


def _follow(who: str, visibility: str) -> Outcome:
    """Every member who sees the creation may follow it; an outsider who sees a public one is told
    they may not (it is not their workspace)."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in MEMBERS else refused(302, to="creation_detail")


def _comment(who: str, visibility: str) -> Outcome:
    """Those who see the creation and may start runs in its workspace comment; viewers (the world's
    workspace does not let them) and outsiders of a public creation are told who may."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in CREATORS else refused(403)


def _conversation(who: str, visibility: str) -> bool:
    """Who reads the creation's comments: its workspace's members who see it."""
    return who in MEMBERS and sees(who, visibility)


def _edit_comment(outcome: Outcome) -> Rule:
    """The member's comment: they edit it; the other readers are told only its author may."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not _conversation(who, visibility):
            return NOT_FOUND
        return outcome if who == MEMBER else FORBIDDEN

    return rule


def _delete_comment(who: str, visibility: str) -> Outcome:
    """Its author and the owners and admins delete it; a viewer is sent back saying who may."""
    if who == ANONYMOUS:
        return LOGIN
    if not _conversation(who, visibility):
        return NOT_FOUND
    return done(to="creation_detail") if who in MANAGERS | {MEMBER} else refused(302, to="creation_detail")


def _read_notification(who: str, visibility: str) -> Outcome:
    """The owner's notification: only they may mark it read; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    return done(to="notifications") if who == OWNER else NOT_FOUND


def _read_all(who: str, visibility: str) -> Outcome:
    if who == ANONYMOUS:
        return LOGIN
    return done(to="notifications") if who == OWNER else redirect("notifications")


ROWS = [
    Row("healthz", {GET: anyone(OK)}),
    # No worker runs in this test: everyone hears the same "none alive".
    Row("healthz-workers", {GET: anyone(Outcome(503))}),
    Row(
        "access_tokens",
        {GET: signed_in(OK), POST: signed_in(done(200))},  # POST: make a token, shown on the page
        data={"name": "laptop", "scope": "read", "password": PASSWORD},
        changed=lambda w, actor: PersonalAccessToken.objects.filter(user=actor, name="laptop").exists(),
    ),
    Row(
        "access_token_revoke",
        {GET: POST_ONLY, POST: _own_token_revoked},
        changed=lambda w, actor: PersonalAccessToken.objects.filter(revoked_at__isnull=False).exists(),
    ),
    Row("home", {GET: signed_in(redirect("workspace_dashboard"))}),
    # Django's own login and password reset, rate-limited: open to everyone, as Django's pages are.
    Row("login", {GET: anyone(OK), POST: anyone(refused(200))}, data={"username": "nobody", "password": "a guess"}),
    Row(
        "password_reset",
        {GET: anyone(OK), POST: anyone(redirect("password_reset_done"))},
        data={"email": "nobody@example.com"},
    ),
    Row(
        "signup",
        {
            GET: lambda who, visibility: OK if who == ANONYMOUS else redirect("home"),
            POST: lambda who, visibility: done(to="home") if who == ANONYMOUS else refused(302, to="home"),
        },
        data={"username": "newcomer", "email": "new@example.com", "password1": PASSWORD, "password2": PASSWORD},
        changed=lambda w, actor: User.objects.filter(username="newcomer").exists(),
    ),
    Row(
        "workspace_new",
        {GET: signed_in(OK), POST: signed_in(done(to="workspace_dashboard"))},
        data={"name": "Poster Club", "slug": "posters"},
        changed=lambda w, actor: Workspace.objects.filter(slug="posters").exists(),
    ),
    Row(
        "workspace_settings",
        # Members and viewers get the page read-only: it says who may change what.
        {GET: members(MEMBERS, OK), POST: members(MANAGERS, done(to="workspace_settings"), refused(400))},
        data={"name": "Renamed"},
        changed=lambda w, actor: Workspace.objects.filter(pk=w.workspace.pk, name="Renamed").exists(),
    ),
    Row(
        "workspace_delete",
        {GET: POST_ONLY, POST: members(OWNERS, done(to="home"), refused(400))},
        data={"confirm": "studio"},
        changed=lambda w, actor: not Workspace.objects.filter(pk=w.workspace.pk).exists(),
    ),
    # Anybody may leave, the owner too: the workspace keeps its other owner.
    Row("workspace_leave", {GET: POST_ONLY, POST: members(MEMBERS, done(to="home"))}, changed=_left),
    Row(
        "workspace_members",
        {GET: members(MEMBERS, OK), POST: members(MANAGERS, done(200), refused(400))},  # POST: invite someone
        data={"role": Role.MEMBER, "email": ""},
        changed=lambda w, actor: Invitation.objects.filter(workspace=w.workspace).count() > 1,
    ),
    Row(
        "membership_role",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MEMBERS), refused(302, to=TO_MEMBERS))},
        data={"role": Role.VIEWER},
        changed=lambda w, actor: _role_of("colleague")(w) == Role.VIEWER,
        label="of-a-member",
    ),
    Row(
        "membership_role",
        {GET: POST_ONLY, POST: members(OWNERS, done(to=TO_MEMBERS), refused(302, to=TO_MEMBERS))},
        data={"role": Role.MEMBER},
        changed=lambda w, actor: _role_of("co_owner")(w) == Role.MEMBER,
        target="co_owner",
        label="of-an-owner",
    ),
    Row(
        "membership_remove",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MEMBERS), refused(302, to=TO_MEMBERS))},
        changed=lambda w, actor: _role_of("colleague")(w) is None,
        label="of-a-member",
    ),
    Row(
        "membership_remove",
        {GET: POST_ONLY, POST: members(OWNERS, done(to=TO_MEMBERS), refused(302, to=TO_MEMBERS))},
        changed=lambda w, actor: _role_of("co_owner")(w) is None,
        target="co_owner",
        label="of-an-owner",
    ),
    Row(
        "invitation_revoke",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MEMBERS), refused(302, to=TO_MEMBERS))},
        changed=lambda w, actor: Invitation.objects.filter(pk=w.invitation.pk, revoked_at__isnull=False).exists(),
    ),
    Row(
        "invitation_accept",
        # Anyone with the link sees it (signed out: to sign up or log in first); members already belong.
        {
            GET: anyone(OK),
            POST: lambda who, visibility: {ANONYMOUS: OK, OUTSIDER: done(to="workspace_dashboard")}.get(
                who, refused(410)
            ),
        },
        changed=lambda w, actor: Invitation.objects.filter(pk=w.invitation.pk, accepted_at__isnull=False).exists(),
    ),
    # Model endpoints: every member sees the list (to know what the picker offers); owners and admins
    # change them; the others are refused outright.
    Row("workspace_endpoints", {GET: members(MEMBERS, OK)}),
    Row(
        "endpoint_new",
        {GET: members(MANAGERS, OK, FORBIDDEN), POST: members(MANAGERS, done(to=TO_MODELS), FORBIDDEN)},
        data={"name": "Team model", "base_url": "http://127.0.0.1:9/v1", "model": "scripted"},
        changed=lambda w, actor: ModelEndpoint.objects.filter(workspace=w.workspace, name="Team model").exists(),
    ),
    Row(
        "endpoint_edit",
        {GET: members(MANAGERS, OK, FORBIDDEN), POST: members(MANAGERS, done(to=TO_MODELS), FORBIDDEN)},
        data={"name": "Renamed model", "base_url": "http://127.0.0.1:9/v1", "model": "scripted"},
        changed=lambda w, actor: ModelEndpoint.objects.filter(pk=w.endpoint.pk, name="Renamed model").exists(),
    ),
    Row(
        "endpoint_test",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MODELS), FORBIDDEN)},
        changed=lambda w, actor: ModelEndpoint.objects.filter(pk=w.endpoint.pk, checked_at__isnull=False).exists(),
    ),
    Row(
        "endpoint_enabled",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MODELS), FORBIDDEN)},
        data={"enabled": "0"},
        changed=lambda w, actor: ModelEndpoint.objects.filter(pk=w.endpoint.pk, is_enabled=False).exists(),
    ),
    Row(
        "endpoint_delete",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to=TO_MODELS), FORBIDDEN)},
        changed=lambda w, actor: not ModelEndpoint.objects.filter(pk=w.endpoint.pk, retired_at__isnull=True).exists(),
    ),
    Row("workspace_dashboard", {GET: workspace_list}, per_creation=True),
    Row(
        "creation_new",
        {GET: members(CREATORS, OK, FORBIDDEN), POST: members(CREATORS, done(to="run_detail"), refused(403))},
        data={"brief": "A calm piano piece", "visibility": WORKSPACE, "model": ""},
        changed=lambda w, actor: Creation.objects.filter(brief="A calm piano piece").exists(),
    ),
    Row("workspace_gallery", {GET: workspace_list}, per_creation=True),
    Row("workspace_usage", {GET: usage_list}, per_creation=True),
    Row("workspace_usage_csv", {GET: usage_export}, per_creation=True),
    Row("public_gallery", {GET: public_list}, per_creation=True),
    Row("creation_detail", {GET: creation_page}, per_creation=True),
    Row(
        "creation_rerun",
        {GET: POST_ONLY, POST: start_from_creation},
        changed=lambda w, actor: w.creation.runs.count() > 1,
        per_creation=True,
    ),
    Row(
        "creation_fork",
        {GET: POST_ONLY, POST: start_from_creation},
        data={"brief": "The same poster, in blue"},
        changed=lambda w, actor: Creation.objects.filter(forked_from=w.creation).exists(),
        per_creation=True,
    ),
    Row(
        "creation_rename",
        {GET: POST_ONLY, POST: rename_creation},
        data={"title": "The renamed poster"},
        changed=lambda w, actor: Creation.objects.filter(pk=w.creation.pk, title="The renamed poster").exists(),
        per_creation=True,
    ),
    Row(
        "creation_delete",
        {GET: POST_ONLY, POST: delete_creation},
        data={"confirm": "delete"},
        changed=lambda w, actor: not Creation.objects.filter(pk=w.creation.pk).exists(),
        per_creation=True,
    ),
    Row("run_detail", {GET: creation_page}, per_creation=True),
    Row("run_steps", {GET: creation_page}, per_creation=True),
    Row("run_artifacts", {GET: creation_page}, per_creation=True),
    Row("run_cancel", {GET: POST_ONLY, POST: cancel}, per_creation=True),
    Row(
        "run_refine",
        {GET: POST_ONLY, POST: refine},
        # The creation uses the demo model, which takes its recorded follow-ups only.
        data={"instruction": demo_follow_ups("a calm piano piece")[0]},
        changed=lambda w, actor: Run.objects.filter(parent=w.run).exists(),
        per_creation=True,
    ),
    Row(
        "run_message",
        {GET: POST_ONLY, POST: talk_to_run},
        data={"text": "Make it slower."},
        changed=lambda w, actor: RunMessage.objects.filter(run=w.run).exists(),
        per_creation=True,
    ),
    Row("creation_restore", {GET: POST_ONLY, POST: restore_version}, per_creation=True),
    Row("run_event_overflow", {GET: creation_page}, per_creation=True),
    Row("run_download_zip", {GET: creation_page}, per_creation=True),
    Row("run_trajectory_json", {GET: creation_page}, per_creation=True),
    Row("creation_compare", {GET: creation_page}, per_creation=True),
    Row("comparison_detail", {GET: _comparison(OK, OK)}, per_creation=True),
    Row(
        "comparison_vote",
        {GET: POST_ONLY, POST: _comparison(done(to="comparison_detail"), refused(403))},
        data={"winner": "A"},
        changed=lambda w, actor: Vote.objects.filter(comparison=w.comparison, voter=actor).exists(),
        per_creation=True,
    ),
    # Every contestant of the world's comparison has ended: owners and admins (who may cancel any)
    # are sent back to it, told there was nothing to cancel; its author is nobody of the roles.
    Row(
        "comparison_cancel",
        {GET: POST_ONLY, POST: _cancel_comparison},
        per_creation=True,
    ),
    Row("workspace_leaderboard", {GET: members(MEMBERS, OK)}),
    Row("artifact_detail", {GET: creation_page}, per_creation=True),
    Row("artifact_use", {GET: _use_artifact}, per_creation=True),
    # On the artifact origin, with the link the platform's pages gave this person.
    Row("artifact_serve", {GET: creation_page}, per_creation=True),
    Row("artifact_derived_serve", {GET: creation_page}, per_creation=True),  # a comparison's overlay
    # Share links: the dialog and lists on the platform; what the link shows on the artifact origin,
    # to anyone who has it, whoever they are (the world's link was made by the creation's author).
    Row(
        "creation_share",
        {GET: _share_dialog(OK), POST: _share_dialog(done(200))},  # POST: make a link, shown on the page
        data={"version": "shown"},
        changed=lambda w, actor: ShareLink.objects.filter(created_by=actor).exists(),
        per_creation=True,
    ),
    Row("workspace_share_links", {GET: _share_links_list}),
    Row(
        "share_link_revoke",
        {GET: POST_ONLY, POST: _revoke_share_link},
        changed=lambda w, actor: ShareLink.objects.filter(pk=w.share_link.pk, revoked_at__isnull=False).exists(),
        per_creation=True,
    ),
    # Comments under a creation, following it, and each person's own notifications.
    Row(
        "creation_comment",
        {GET: POST_ONLY, POST: _comment},
        data={"text": "Nice colours"},
        changed=lambda w, actor: Comment.objects.filter(text="Nice colours").exists(),
        per_creation=True,
    ),
    Row(
        "comment_edit",
        {GET: _edit_comment(OK), POST: _edit_comment(done(to="creation_detail"))},
        data={"text": "Edited words"},
        changed=lambda w, actor: Comment.objects.filter(pk=w.comment.pk, text="Edited words").exists(),
        per_creation=True,
    ),
    Row(
        "comment_delete",
        {GET: POST_ONLY, POST: _delete_comment},
        changed=lambda w, actor: not Comment.objects.filter(pk=w.comment.pk).exists(),
        per_creation=True,
    ),
    Row(
        "creation_follow",
        {GET: POST_ONLY, POST: _follow},
        data={"following": "1"},
        changed=lambda w, actor: Follow.objects.filter(user=actor, creation=w.creation).exists(),
        per_creation=True,
    ),
    Row("notifications", {GET: signed_in(OK)}),
    Row(
        "notification_read",
        {GET: POST_ONLY, POST: _read_notification},
        changed=lambda w, actor: Notification.objects.filter(pk=w.notification.pk, read_at__isnull=False).exists(),
    ),
    Row(
        "notifications_read_all",
        # The owner has the world's unread notification; the others have nothing to mark.
        {GET: POST_ONLY, POST: _read_all},
        changed=lambda w, actor: Notification.objects.filter(recipient=actor, read_at__isnull=False).exists(),
    ),
    Row(
        "notification_settings",
        {GET: signed_in(OK), POST: signed_in(done(to="notification_settings"))},
        data={"run_succeeded_in_page": "on"},
        changed=lambda w, actor: NotificationSetting.objects.filter(user=actor, kind="run_succeeded").exists(),
    ),
    Row("share_page", {GET: anyone(OK)}, per_creation=True),
    Row("share_embed", {GET: anyone(OK)}, per_creation=True),
    Row("share_file", {GET: anyone(OK)}, per_creation=True),
    # Asked without the URL to embed, which is all a row can send: told to name one (tests/creations/sharing).
    Row("share_oembed", {GET: anyone(Outcome(400))}),
    # Webhooks: the workspace's owners and admins; the other members are told who may.
    Row(
        "workspace_webhooks",
        {GET: members(MANAGERS, OK, otherwise=refused(403)), POST: members(MANAGERS, done(200), refused(403))},
        data={"url": "https://93.184.215.14/another-hook", "events": "run.failed"},
        changed=lambda w, actor: Webhook.objects.count() > 1,
    ),
    Row(
        "webhook_detail",
        {GET: WEBHOOK_PAGE, POST: members(MANAGERS, done(to="webhook_detail"), otherwise=FORBIDDEN)},
        data={"url": "https://93.184.215.14/role-matrix-hook", "events": "run.failed"},
        changed=lambda w, actor: Webhook.objects.filter(pk=w.webhook.pk, events=["run.failed"]).exists(),
    ),
    Row(
        "webhook_test",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to="webhook_detail"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: WebhookDelivery.objects.filter(event="ping").exists(),
    ),
    Row(
        "webhook_secret",
        {GET: POST_ONLY, POST: members(MANAGERS, done(200), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Webhook.objects.get(pk=w.webhook.pk).secret != "whsec_role_matrix",
    ),
    Row(
        "webhook_delete",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to="workspace_webhooks"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: not Webhook.objects.filter(pk=w.webhook.pk).exists(),
    ),
    # Schedules: setting one starts runs in one's name.
    Row(
        "creation_schedule",
        {GET: _schedule_page(OK), POST: _schedule_page(refused(400))},
        data={"cadence": "daily", "at": "06:00", "instruction": "update the figures"},
        changed=lambda w, actor: Schedule.objects.exists(),
        per_creation=True,
    ),
    Row(
        "creation_schedule_clear",
        {GET: POST_ONLY, POST: _clear_schedule},
        per_creation=True,
    ),
    # Evaluations: every member reads them; those who may start runs upload suites and start
    # evaluations (the other members are told who may); the world's evaluation is the member's, so
    # the member, owners and admins cancel it.
    Row("evaluations_list", {GET: members(MEMBERS, OK)}),
    Row(
        "suite_upload",
        # A POST with no task file: the form says what is missing.
        {GET: members(CREATORS, OK, otherwise=refused(403)), POST: members(CREATORS, refused(400), refused(403))},
        data={"name": "A suite"},
        changed=lambda w, actor: Suite.objects.filter(name="A suite").exists(),
    ),
    Row(
        "suite_samples_add",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluations_list"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Suite.objects.filter(is_sample=True).exists(),
    ),
    # The spare suite is the member's, with no evaluation: the member, owners and admins delete it.
    Row(
        "suite_delete",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluations_list"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: not Suite.objects.filter(name=SPARE_SUITE).exists(),
    ),
    Row(
        "evaluation_new",
        # The demo model is refused, saying why.
        {GET: members(CREATORS, OK, otherwise=refused(403)), POST: members(CREATORS, refused(400), refused(403))},
        data={"models": "demo", "modes": "both"},
        changed=lambda w, actor: Evaluation.objects.count() > 1,
    ),
    Row("evaluation_detail", {GET: members(MEMBERS, OK)}),
    Row(
        "evaluation_cancel",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluation_detail"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Evaluation.objects.filter(pk=w.evaluation.pk, status="cancelled").exists(),
    ),
    Row("evaluation_results_csv", {GET: members(MEMBERS, OK)}),
    Row("evaluation_answers_csv", {GET: members(MEMBERS, OK)}),
]

# Cases where the platform contradicts the rule above: each must fail until it is fixed.
KNOWN_BUGS: dict[tuple[str, str, str, str], str] = {}


# --- the tests ----------------------------------------------------------------------------


def _routes_by_name() -> dict[str, Route]:
    return {r.name: r for r in http_routes(skip_includes=frozenset(NOT_IN_THE_MATRIX))}


def test_every_url_has_a_row_in_the_matrix() -> None:
    routes = http_routes(skip_includes=frozenset(NOT_IN_THE_MATRIX))
    names = [r.name for r in routes]
    assert len(names) == len(set(names)), f"URL names used twice (reverse() would pick one): {sorted(names)}"
    rows = {row.name for row in ROWS}
    missing = sorted(f"{r.name} ({r.route})" for r in routes if r.name not in rows)
    assert not missing, f"no row in ROWS says who may use these URLs; add one each: {missing}"
    stale = sorted(rows - set(names))
    assert not stale, f"ROWS names URLs the URLconf no longer has; remove or rename them: {stale}"


@dataclass(frozen=True)
class Case:
    row: Row
    method: str
    who: str
    visibility: str

    @property
    def expected(self) -> Outcome:
        return self.row.expect[self.method](self.who, self.visibility)

    @property
    def id(self) -> str:
        label = f"({self.row.label})" if self.row.label else ""
        on = f"-{self.visibility}" if self.row.per_creation else ""
        return f"{self.row.name}{label}-{self.method}-{self.who}{on}"


def _cases() -> list[Any]:
    cases = []
    for row in ROWS:
        for method in row.expect:
            for who in ROLES:
                for visibility in VISIBILITIES if row.per_creation else (WORKSPACE,):
                    case = Case(row, method, who, visibility)
                    bug = KNOWN_BUGS.get((row.name, method, who, visibility))
                    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
                    cases.append(pytest.param(case, id=case.id, marks=marks))
    return cases


def _redirect_target(location: str) -> str:
    path = urlsplit(location).path
    try:
        return resolve(path).url_name or path
    except Resolver404:
        return path


def _body(response: Any) -> bytes:
    """The whole body: a streamed one is read to its end, so an error half-way fails the case."""
    return b"".join(response) if response.streaming else response.content


@pytest.mark.django_db
@pytest.mark.parametrize("case", _cases())
def test_role_matrix(
    case: Case, client: Client, kept_world: World, kept_world_media: Path, settings: Any, request: pytest.FixtureRequest
) -> None:
    if case.row.name in ("healthz", "healthz-workers"):  # they report on Redis: give them one that is surely up
        request.getfixturevalue("platform_on_own_redis")
    settings.MEDIA_ROOT = kept_world_media
    world = world_for_case(kept_world, case.visibility)
    actor = world.people.get(case.who)
    if actor is not None:
        sign_in_as(client, world, case.who)
    route = _routes_by_name()[case.row.name]
    kwargs = url_kwargs(route, world, actor=actor, target=case.row.target)
    url = reverse(route.name, urlconf=route.urlconf, kwargs=kwargs)
    host = served_urlconfs()[route.urlconf]
    headers = {"host": host} if host else {}
    if case.method == POST:
        response = client.post(url, case.row.data, headers=headers)
    else:
        response = client.get(url, headers=headers)
    body = _body(response)
    expected = case.expected
    got = Outcome(
        response.status_code,
        to=_redirect_target(response["Location"]) if 300 <= response.status_code < 400 else None,
        changed=case.row.changed(world, actor) if case.row.changed else False,
        listed=TITLE.encode() in body if expected.listed is not None else None,
    )
    on = f" on a {case.visibility} creation" if case.row.per_creation else ""
    assert got == expected, f"{case.who} {case.method} {url}{on}: expected {expected}, got {got}"
