"""One team workspace with a person in every role and one finished creation, for tests that try
every role against every URL (tests/config/test_role_matrix.py), and the URL arguments that
address its objects.

The creation's author is another member, so a private creation is private to someone else for
every role here, owners and admins included (creations.access).
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.test import Client, override_settings

from api.models import TokenScope
from api.tokens import token_create
from creations.arena.models import Comparison, Contestant
from creations.artifacts.origin import DERIVED_PREFIX, derived_sign, grant_sign
from creations.comments.models import Comment
from creations.comments.services import comment_create
from creations.evaluations.models import Evaluation, Suite, SuiteTask
from creations.events.store import store_events
from creations.models import Artifact, Creation, Run, RunEvent, RunStatus, Visibility
from creations.notifications.models import Kind, Notification
from creations.runs.state import run_finish
from creations.sharing.models import ShareLink
from creations.sharing.services import share_link_create
from creations.webhooks.models import Webhook
from tests.support.artifacts import Output, add_artifact
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import make_user
from tests.support.media_samples import png_bytes
from tests.support.urlconf import Route
from workspaces.invitations import invitation_create
from workspaces.models import Invitation, Membership, ModelEndpoint, Role, Workspace
from workspaces.services import membership_add, workspace_create

ANONYMOUS, OUTSIDER, VIEWER, MEMBER, ADMIN, OWNER = "anonymous", "outsider", "viewer", "member", "admin", "owner"
ROLES = (ANONYMOUS, OUTSIDER, VIEWER, MEMBER, ADMIN, OWNER)
MEMBERS = {VIEWER, MEMBER, ADMIN, OWNER}
CREATORS = {MEMBER, ADMIN, OWNER}
MANAGERS = {ADMIN, OWNER}
PUBLIC, WORKSPACE, PRIVATE = Visibility.PUBLIC.value, Visibility.WORKSPACE.value, Visibility.PRIVATE.value
VISIBILITIES = (PUBLIC, WORKSPACE, PRIVATE)


@dataclass
class World:
    """A team workspace with one person per role (and three more: the creation's author, and a
    member and a second owner for the membership pages to act on), one creation with one finished
    run, its artifact and events, a share link its author made, an open invitation and a model endpoint."""

    workspace: Workspace
    people: dict[str, User]  # by role; anonymous has nobody
    memberships: dict[str, Membership]  # "colleague" (a member) and "co_owner", the targets of member pages
    creation: Creation
    run: Run
    artifact: Artifact
    text_event: RunEvent  # an event with a text field, for the page that shows a field in full
    invitation: Invitation
    token: str
    endpoint: ModelEndpoint
    share_link: ShareLink
    share_token: str  # the share link's token, as its URL carries it
    webhook: Webhook  # the workspace's one webhook, added by its owner
    comment: Comment  # the member's comment on the creation, mentioning the owner
    notification: Notification  # the owner's: the member mentioned them
    evaluation: Evaluation  # the member's evaluation of a one-task suite, still running (nothing in flight)
    # The author's comparison of two models: the world's creation is its contestant A, so who sees
    # the comparison follows the creation's visibility. Both runs have ended: members may vote.
    comparison: Comparison
    # Signed in ahead, for the module's world (world_for_a_module): each person's session key, and
    # their tokens by scope. Signing in and making a token for each of thousands of cases took a
    # quarter of their time; what a case does to them is undone with its savepoint.
    sessions: dict[str, str] = field(default_factory=dict)
    tokens: dict[tuple[str, str], str] = field(default_factory=dict)


CALL = {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": "ls"}}
RESULT = {
    "step": 1,
    "call_id": "c1",
    "name": "execute_bash",
    "output": "poster.png",
    "is_error": False,
    "duration": 0.1,
}
TITLE = "Role matrix poster"  # how list pages show the creation: found in the HTML means listed
SHARE_LABEL = "Role matrix link"  # how lists of share links show the world's link
COMMENT_TEXT = "Role matrix comment"  # how lists of comments show the world's comment


def build_world(visibility: str) -> World:
    owner = make_user("olive")
    workspace = workspace_create(name="Studio", slug="studio", owner=owner)
    people = {OWNER: owner, OUTSIDER: make_user("oscar")}
    for role, username in ((VIEWER, "vera"), (MEMBER, "mike"), (ADMIN, "ada")):
        people[role] = make_user(username)
        membership_add(workspace=workspace, user=people[role], role=role)
    author = make_user("aurora")
    membership_add(workspace=workspace, user=author, role=Role.MEMBER)
    memberships = {
        "colleague": membership_add(workspace=workspace, user=make_user("colin"), role=Role.MEMBER),
        "co_owner": membership_add(workspace=workspace, user=make_user("cora"), role=Role.OWNER),
    }
    run = RunFactory.create(
        status=RunStatus.RUNNING,
        creation__workspace=workspace,
        creation__author=author,
        creation__title=TITLE,
        creation__visibility=visibility,
    )
    stored = store_events(run.pk, [("tool_call", CALL), ("tool_result", RESULT)]) or []
    artifact = add_artifact(run, Output("poster.png", png_bytes(64, 40)))
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
    run.refresh_from_db()
    invited = invitation_create(workspace=workspace, actor=owner, role=Role.MEMBER)
    shared = share_link_create(creation=run.creation, user=author, label=SHARE_LABEL)
    comment = _comment_while_visible(run.creation, people[MEMBER], text=f"{COMMENT_TEXT}, @olive")
    comparison = _comparison_of(run, workspace=workspace, author=author)
    return World(
        workspace=workspace,
        people=people,
        memberships=memberships,
        creation=run.creation,
        run=run,
        artifact=artifact,
        text_event=stored[-1],
        invitation=invited.invitation,
        token=invited.url.rstrip("/").rsplit("/", 1)[-1],
        endpoint=ModelEndpointFactory.create(workspace=workspace),
        share_link=shared.link,
        share_token=shared.token or "",
        webhook=Webhook.objects.create(
            workspace=workspace,
            url="https://93.184.215.14/role-matrix-hook",
            events=["run.succeeded"],
            secret="whsec_role_matrix",
            created_by=owner,
        ),
        comment=comment,
        notification=Notification.objects.get(recipient=owner, kind=Kind.MENTION),
        evaluation=_evaluation(workspace, people[MEMBER]),
        comparison=comparison,
    )


SPARE_SUITE = "Role matrix spare suite"


def spare_suite(workspace: Workspace, member: User | None) -> Suite:
    """A suite of the member's that no evaluation uses, made when a URL asks for one (to delete it)."""
    return Suite.objects.create(workspace=workspace, name=SPARE_SUITE, uploaded_by=member)


def _evaluation(workspace: Workspace, member: User) -> Evaluation:
    suite = Suite.objects.create(workspace=workspace, name="Role matrix suite", uploaded_by=member, task_count=1)
    SuiteTask.objects.create(suite=suite, position=1, task_id="t1", prompt="2+2?", rule="number", expected="4")
    return Evaluation.objects.create(workspace=workspace, suite=suite, started_by=member, modes="plain")


def _comparison_of(run: Run, *, workspace: Workspace, author: User) -> Comparison:
    """A comparison with the world's run as contestant A and another finished run as B."""
    comparison = Comparison.objects.create(workspace=workspace, created_by=author, brief=run.creation.brief)
    other = RunFactory.create(
        finished=True, creation__workspace=workspace, creation__author=author, creation__brief=run.creation.brief
    )
    for position, contestant_run in enumerate((run, other)):
        Contestant.objects.create(
            comparison=comparison,
            position=position,
            creation=contestant_run.creation,
            run=contestant_run,
            model_endpoint=ModelEndpointFactory.create(workspace=workspace, name=f"Role matrix model {position}"),
        )
    return comparison


def _comment_while_visible(creation: Creation, author: User, *, text: str) -> Comment:
    """The member's comment, written while the whole workspace saw the creation (it may be private now)."""
    visibility = creation.visibility
    Creation.objects.filter(pk=creation.pk).update(visibility=Visibility.WORKSPACE)
    creation.visibility = Visibility.WORKSPACE
    comment = comment_create(creation=creation, user=author, text=text)
    Creation.objects.filter(pk=creation.pk).update(visibility=visibility)
    creation.visibility = visibility
    return comment


# A module's world as pickled once, when it was built: every case's copy is loaded from these bytes
# (a case never changes the kept world itself, only its copy).
_KEPT_PICKLED: dict[int, bytes] = {}


@contextmanager
def world_for_a_module(django_db_blocker: Any, media_root: Path) -> Iterator[World]:
    """One world for every case of a test module, in a transaction left open around them and rolled
    back after the last. Each case runs in a savepoint inside it (pytest-django's `db`), so what a case
    changes is undone before the next; building the world for each of a thousand cases took most of
    the fast tests' time. Only for tests that commit nothing (not `transaction=True`)."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with override_settings(MEDIA_ROOT=media_root):
                world = build_world(WORKSPACE)
                _sign_everyone_in(world)
                _KEPT_PICKLED[id(world)] = pickle.dumps(world)
        except BaseException:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)
            raise
    try:
        yield world
    finally:
        _KEPT_PICKLED.pop(id(world), None)
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _sign_everyone_in(world: World) -> None:
    for role, person in world.people.items():
        client = Client()
        client.force_login(person)
        world.sessions[role] = client.cookies[settings.SESSION_COOKIE_NAME].value
        for scope in TokenScope:
            world.tokens[role, scope] = token_create(user=person, name="tests", scope=scope, expires_in_days=None).raw


def sign_in_as(client: Client, world: World, role: str) -> None:
    """`client` as the role's person: their session from the module's world, else a new one."""
    session = world.sessions.get(role)
    if session is None:
        client.force_login(world.people[role])
    else:
        client.cookies[settings.SESSION_COOKIE_NAME] = session


def token_of(world: World, role: str, scope: str) -> str:
    """A personal access token of the role's person: made ahead for the module's world, else now."""
    made = world.tokens.get((role, scope))
    return made or token_create(user=world.people[role], name="tests", scope=scope, expires_in_days=None).raw


def world_for_case(kept: World, visibility: str) -> World:
    """The module's world as a case sees it: its creation of `visibility` (undone with the case's
    savepoint), and objects of its own, so nothing a case sets on them reaches the next (a pickled
    copy: deep, like copy.deepcopy, in a tenth of its time)."""
    Creation.objects.filter(pk=kept.creation.pk).update(visibility=visibility)
    pickled = _KEPT_PICKLED.get(id(kept)) or pickle.dumps(kept)
    world: World = pickle.loads(pickled)  # noqa: S301 (our own bytes, made in this process)
    for creation in (world.creation, world.run.creation):
        creation.visibility = visibility
    return world


# A URL argument's value: by (the path segment before it, its name) where one name means
# different things ("runs/<int:pk>/" is the run, "r/<str:token>/" an artifact link), else by name.
# Each gets the world, the person asking (None: signed out) and the row's target membership.
Argument = Callable[[World, User | None, str], Any]
ARGUMENTS: dict[tuple[str, str] | str, Argument] = {
    ("creations", "pk"): lambda w, actor, target: w.creation.pk,
    ("runs", "pk"): lambda w, actor, target: w.run.pk,
    ("versions", "run_pk"): lambda w, actor, target: w.run.pk,
    ("artifacts", "pk"): lambda w, actor, target: w.artifact.pk,
    ("invitations", "pk"): lambda w, actor, target: w.invitation.pk,
    ("models", "pk"): lambda w, actor, target: w.endpoint.pk,
    ("invitations", "token"): lambda w, actor, target: w.token,
    ("share-links", "pk"): lambda w, actor, target: w.share_link.pk,
    ("webhooks", "pk"): lambda w, actor, target: w.webhook.pk,
    ("comments", "pk"): lambda w, actor, target: w.comment.pk,
    ("notifications", "pk"): lambda w, actor, target: w.notification.pk,
    ("evaluations", "pk"): lambda w, actor, target: w.evaluation.pk,
    ("suites", "pk"): lambda w, actor, target: spare_suite(w.workspace, w.people[MEMBER]).pk,
    ("comparisons", "pk"): lambda w, actor, target: w.comparison.pk,
    # The share link's own address on the artifact origin, and its embed of the world's artifact.
    ("s", "token"): lambda w, actor, target: w.share_token,
    ("embed", "artifact_id"): lambda w, actor, target: w.artifact.pk,
    # One of the owner's personal access tokens, made when a URL asks for it.
    ("tokens", "pk"): lambda w, actor, target: (
        token_create(user=w.people[OWNER], name="owner's laptop", scope="read", expires_in_days=None).token.pk
    ),
    # The link the platform's pages give this person: the token names the run and its holder.
    ("r", "token"): lambda w, actor, target: grant_sign(run_id=w.run.pk, user=actor or AnonymousUser()),
    # A picture made from the run's files (a comparison's overlay), kept and linked as the compare page does.
    ("d", "token"): lambda w, actor, target: derived_sign(
        run_id=w.run.pk, user=actor or AnonymousUser(), name=_derived_picture()
    ),
    "slug": lambda w, actor, target: w.workspace.slug,
    "seq": lambda w, actor, target: w.text_event.seq,
    "field": lambda w, actor, target: "output",
    "membership_id": lambda w, actor, target: w.memberships[target].pk,
    "path": lambda w, actor, target: w.artifact.path,
}


def _derived_picture() -> str:
    return default_storage.save(f"{DERIVED_PREFIX}comparisons/role-matrix.png", ContentFile(png_bytes(16, 10)))


def url_kwargs(route: Route, world: World, *, actor: User | None, target: str) -> dict[str, Any]:
    """Values for a URL's keyword arguments; an argument ARGUMENTS does not know fails the test."""
    values: dict[str, Any] = {}
    for name in route.kwargs:
        before = re.search(rf"([^/<>]*)/<(?:\w+:)?{name}>", route.route)
        segment = before.group(1) if before else ""
        argument = ARGUMENTS.get((segment, name)) or ARGUMENTS.get(name)
        if argument is None:
            pytest.fail(f"{route.route}: no value for <{name}> (after {segment!r}/); add it to ARGUMENTS.")
        values[name] = argument(world, actor, target)
    return values


def sees(who: str, visibility: str) -> bool:
    """creations.access.creation_visible, for a creation someone else wrote."""
    return visibility == PUBLIC or (visibility == WORKSPACE and who in MEMBERS)
