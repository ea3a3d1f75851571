"""The browser's role matrix's rows for what comes before a creation: health checks, signing up and
in, access tokens, workspaces with their settings, members and invitations, and model endpoints."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User

from api.models import PersonalAccessToken
from tests.config.role_matrix.rows import GET, POST, POST_ONLY, Row
from tests.support.fixtures.accounts import PASSWORD
from tests.support.role_outcomes import (
    FORBIDDEN,
    LOGIN,
    NOT_FOUND,
    OK,
    Outcome,
    anyone,
    done,
    members,
    redirect,
    refused,
    signed_in,
)
from tests.support.role_world import ANONYMOUS, MANAGERS, MEMBERS, OUTSIDER, OWNER, World
from workspaces.models import Invitation, Membership, ModelEndpoint, Role, Workspace


def _role_of(target: str) -> Callable[[World], str | None]:
    def role(world: World) -> str | None:
        return Membership.objects.filter(pk=world.memberships[target].pk).values_list("role", flat=True).first()

    return role


def _left(world: World, actor: User | None) -> bool:
    was_member = actor in [world.people[role] for role in MEMBERS]
    return was_member and not Membership.objects.filter(workspace=world.workspace, user=actor).exists()


TO_MEMBERS = "workspace_members"
TO_MODELS = "workspace_endpoints"
OWNERS = {OWNER}


def _own_token_revoked(who: str, visibility: str) -> Outcome:
    """The token is the owner's: only they may revoke it; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return LOGIN
    return done(to="access_tokens") if who == OWNER else NOT_FOUND


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
]
