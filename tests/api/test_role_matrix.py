"""What each role gets from every API operation, with a personal access token
(the browser's matrix: tests/config/test_role_matrix.py).

The operations come from the API's own OpenAPI schema, so a new operation with no
row below fails `test_every_operation_has_a_row` until someone writes down who may
call it. Each row says what each role gets, on the role matrix's world (a workspace
with one creation that is public, workspace-visible or private, written by another
member: tests.support.role_world): a status code, whether a list names the world's
creation or workspace, and, for a write, whether the change took place. Write
operations are also tried with a read-only token: refused (403) whoever holds it,
before anything is looked up, and nothing changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from api.models import StagedInput, TokenScope
from api.v1 import api
from creations.arena.models import Comparison, Vote
from creations.comments.models import Comment
from creations.evaluations.models import Evaluation, Suite
from creations.models import Creation, Run
from creations.notifications.models import Follow, Notification, NotificationSetting
from creations.schedules.models import Schedule
from creations.sharing.models import ShareLink
from creations.webhooks.models import Webhook, WebhookDelivery
from tests.support.api import ApiClient
from tests.support.role_world import (
    ANONYMOUS,
    COMMENT_TEXT,
    CREATORS,
    MANAGERS,
    MEMBER,
    MEMBERS,
    OWNER,
    ROLES,
    SHARE_LABEL,
    SPARE_SUITE,
    TITLE,
    VISIBILITIES,
    WORKSPACE,
    World,
    sees,
    spare_suite,
    token_of,
    world_for_case,
)

GET, POST, PATCH, PUT, DELETE = "get", "post", "patch", "put", "delete"
WEBHOOK_URL = "https://93.184.215.14/role-matrix-hook"  # how lists of webhooks show the world's (role_world)


@dataclass(frozen=True)
class Answer:
    status: int
    listed: bool | None = None  # a list names the row's mark (None: not a list)
    changed: bool = False

    def __str__(self) -> str:
        listing = {True: " listing it", False: " not listing it", None: ""}[self.listed]
        return f"{self.status}{listing}{' changed' if self.changed else ''}"


UNAUTHORIZED, NOT_FOUND, FORBIDDEN = Answer(401), Answer(404), Answer(403)
Rule = Callable[[str, str], Answer]  # (role, visibility) → answer
Effect = Callable[[World], bool]


def members_only(answer: Answer) -> Rule:
    """A workspace's operation: outsiders are told it does not exist."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        return answer if who in MEMBERS else NOT_FOUND

    return rule


def listing_for_members(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS)


def creators_only(answer: Answer) -> Rule:
    """A write in a workspace: viewers are refused, outsiders told it does not exist."""
    return members_only_or(answer, otherwise=FORBIDDEN)


def members_only_or(answer: Answer, *, otherwise: Answer) -> Rule:
    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if who not in MEMBERS:
            return NOT_FOUND
        return answer if who in CREATORS else otherwise

    return rule


def usage_listing(who: str, visibility: str) -> Answer:
    """Viewers see the totals only: no creation is named to them; the others see the costliest
    creations, each named only to those who may see it."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS:
        return NOT_FOUND
    return Answer(200, listed=who in CREATORS and sees(who, visibility))


def run_listing(who: str, visibility: str) -> Answer:
    """Runs of one's own workspaces that one may see; a public run elsewhere is not listed."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS and sees(who, visibility))


def run_page(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200) if sees(who, visibility) else NOT_FOUND


def artifact_preview(who: str, visibility: str) -> Answer:
    """The world's artifact has no preview made: those who see it are told so (404) as well."""
    return UNAUTHORIZED if who == ANONYMOUS else NOT_FOUND


def start_from_run(who: str, visibility: str) -> Answer:
    """Run again or fork: for those who see the run and may start runs in its workspace."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(201, changed=True) if who in CREATORS else FORBIDDEN


def cancel_run(who: str, visibility: str) -> Answer:
    """Owners and admins may cancel any run of their workspace, a private creation's too (this one has
    ended: they are told so, 409); members only the runs they started (this one is the author's)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who in MANAGERS:
        return Answer(409)
    return FORBIDDEN if sees(who, visibility) else NOT_FOUND


def start_with_the_artifact(who: str, visibility: str) -> Answer:
    """A run in the world's workspace with its artifact as input: for those who may start runs
    there and see the artifact; to the others who may, the artifact is as good as missing (422)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS:
        return NOT_FOUND
    if who not in CREATORS:
        return FORBIDDEN
    return Answer(201, changed=True) if sees(who, visibility) else Answer(422)


def talk_to_run(who: str, visibility: str) -> Answer:
    """Those who see the run and may start runs in its workspace may talk to its agent; this run
    has ended, so they are told so (409). Viewers watch only."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(409) if who in CREATORS else FORBIDDEN


def restore_version(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who in CREATORS else FORBIDDEN


def rename_creation(who: str, visibility: str) -> Answer:
    """A new title: for those who see the creation and may work on it; viewers are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who in CREATORS else FORBIDDEN


def share_creation(who: str, visibility: str) -> Answer:
    """A share link: for those who see the creation and may share in its workspace."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(201, changed=True) if who in CREATORS else FORBIDDEN


def share_links_of_run(who: str, visibility: str) -> Answer:
    """Those who see the creation get its links they may see: owners and admins every one (the
    world's, by its author), the others their own."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MANAGERS) if sees(who, visibility) else NOT_FOUND


def share_links_of_workspace(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MANAGERS) if who in MEMBERS else NOT_FOUND


def revoke_share_link(who: str, visibility: str) -> Answer:
    """The author's link: owners and admins may revoke it (a private creation's too); the other members
    who see the creation are refused; to anyone else it does not exist."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who in MANAGERS:
        return Answer(200, changed=True)
    return FORBIDDEN if who in MEMBERS and sees(who, visibility) else NOT_FOUND


def managers_only(answer: Answer) -> Rule:
    """A workspace's webhooks: owners and admins; the others who belong to it are refused, outsiders
    told it does not exist."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if who not in MEMBERS:
            return NOT_FOUND
        return answer if who in MANAGERS else FORBIDDEN

    return rule


def read_schedule(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200) if sees(who, visibility) and who in MEMBERS else NOT_FOUND


def change_schedule(answer: Answer) -> Rule:
    """Setting or clearing a schedule starts runs in one's name: for those who see the creation and
    may start runs in its workspace."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if not sees(who, visibility):
            return NOT_FOUND
        return answer if who in CREATORS else FORBIDDEN

    return rule


def comments_of_run(who: str, visibility: str) -> Answer:
    """The workspace's members who see the creation read its comments; an outsider of a public one gets none."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS) if sees(who, visibility) else NOT_FOUND


def comment_on_run(who: str, visibility: str) -> Answer:
    """Those who see the creation and may start runs in its workspace comment; viewers (their workspace
    does not allow it) and outsiders of a public creation are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(201, changed=True) if who in CREATORS else FORBIDDEN


def _reads_comments(who: str, visibility: str) -> bool:
    return who in MEMBERS and sees(who, visibility)


def edit_comment(who: str, visibility: str) -> Answer:
    """The member's comment: they edit it; the others who read it are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not _reads_comments(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who == MEMBER else FORBIDDEN


def delete_comment(who: str, visibility: str) -> Answer:
    """The member's comment: they, the owners and the admins delete it; a viewer is refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not _reads_comments(who, visibility):
        return NOT_FOUND
    return Answer(204, changed=True) if who in MANAGERS | {MEMBER} else FORBIDDEN


def own_notifications(answer_for_owner: Answer, otherwise: Answer) -> Rule:
    """The world's notification is the owner's: they list it and mark it read; to the others it does not exist."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        return answer_for_owner if who == OWNER else otherwise

    return rule


def follow_creation(answer: Answer) -> Rule:
    """Following a creation: for the workspace's members who see it (viewers too: they only listen);
    an outsider who sees a public creation is refused, saying who may."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if not sees(who, visibility):
            return NOT_FOUND
        return answer if who in MEMBERS else FORBIDDEN

    return rule


def _followed_by_everyone(world: World) -> None:
    for person in world.people.values():
        Follow.objects.get_or_create(user=person, creation=world.creation)


def _followed(world: World) -> bool:
    return Follow.objects.filter(creation=world.creation).exists()


def _unfollowed(world: World) -> bool:
    return Follow.objects.filter(creation=world.creation).count() < len(world.people)


def _with_a_schedule(world: World) -> None:
    _with_the_workspaces_model(world)
    Schedule.objects.create(
        creation=world.creation,
        cadence="daily",
        cron="0 6 * * *",
        instruction="update the figures",
        set_by=world.run.creation.author,
        set_at=world.run.created_at,
        next_run_at=world.run.created_at,
    )


def _more_webhooks(world: World) -> bool:
    return Webhook.objects.count() > 1


def _webhook_off(world: World) -> bool:
    return Webhook.objects.filter(is_active=False).exists()


def _webhook_gone(world: World) -> bool:
    return not Webhook.objects.exists()


def _test_sent(world: World) -> bool:
    return WebhookDelivery.objects.filter(event="ping").exists()


def _scheduled(world: World) -> bool:
    return Schedule.objects.filter(creation=world.creation).exists()


def _schedule_cleared(world: World) -> bool:
    return not Schedule.objects.exists()


def comparison(for_creators: Answer, for_viewers: Answer) -> Rule:
    """The world's comparison (its contestant A is the world's creation): for the workspace's members
    who see the creation, a public one's outsiders excepted; those who may start runs vote."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if who not in MEMBERS or not sees(who, visibility):
            return NOT_FOUND
        return for_creators if who in CREATORS else for_viewers

    return rule


def _contestant_models(world: World) -> dict[str, Any]:
    return {
        "brief": "a poster",
        "model_endpoint_ids": [c.model_endpoint_id for c in world.comparison.contestants.all()],
    }


def cancel_comparison(who: str, visibility: str) -> Answer:
    """Owners and admins may cancel any comparison, members the ones they made (this one is the
    author's); every contestant of the world's has ended, so those who may are told so (409)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS or not sees(who, visibility):
        return NOT_FOUND
    return Answer(409) if who in MANAGERS else FORBIDDEN


def _more_comparisons(world: World) -> bool:
    return Comparison.objects.exclude(pk=world.comparison.pk).exists()


def _voted(world: World) -> bool:
    return Vote.objects.filter(comparison=world.comparison).exists()


def signed_in(answer: Answer) -> Rule:
    return lambda who, visibility: UNAUTHORIZED if who == ANONYMOUS else answer


def _more_comments(world: World) -> bool:
    return Comment.objects.exclude(pk=world.comment.pk).exists()


def _edited(world: World) -> bool:
    return Comment.objects.filter(pk=world.comment.pk, edited_at__isnull=False).exists()


def _comment_gone(world: World) -> bool:
    return not Comment.objects.filter(pk=world.comment.pk).exists()


def _notification_read(world: World) -> bool:
    return Notification.objects.filter(pk=world.notification.pk, read_at__isnull=False).exists()


def _settings_saved(world: World) -> bool:
    return NotificationSetting.objects.exists()


def _more_share_links(world: World) -> bool:
    return ShareLink.objects.count() > 1


def _revoked(world: World) -> bool:
    return ShareLink.objects.filter(pk=world.share_link.pk, revoked_at__isnull=False).exists()


def _more_runs(world: World) -> bool:
    return Run.objects.exclude(pk__in=[c.run_id for c in world.comparison.contestants.all()]).exists()


def _refined(world: World) -> bool:
    return Run.objects.filter(parent=world.run, version=2).exists()


def _with_the_workspaces_model(world: World) -> None:
    """Refined with a model of the workspace: the demo model refines only what it has recordings of."""
    Creation.objects.filter(pk=world.creation.pk).update(model_endpoint=world.endpoint)


def _nothing_shown(world: World) -> None:
    Creation.objects.filter(pk=world.creation.pk).update(shown_run=None)


def _shown(world: World) -> bool:
    return Creation.objects.filter(pk=world.creation.pk, shown_run=world.run).exists()


def _renamed(world: World) -> bool:
    return Creation.objects.filter(pk=world.creation.pk, title="The renamed poster").exists()


def _staged(world: World) -> bool:
    return StagedInput.objects.exists()


@dataclass(frozen=True)
class Row:
    method: str
    path: str  # as the schema names it
    expect: Rule
    body: Any = None  # a JSON body, or a callable that makes it from the world
    multipart: bool = False
    writes: bool = False  # needs a token with the write scope
    changed: Effect | None = None
    per_creation: bool = False  # the answer depends on the creation's visibility
    mark: Callable[[World], str] = field(default=lambda world: world.workspace.slug)
    # Read on threads of their own (a stream's database reads), which see only committed rows.
    needs_commits: bool = False
    label: str = ""  # tells two rows of one operation apart
    # The world made ready for this operation before it is called.
    prepare: Callable[[World], None] | None = None

    @property
    def id(self) -> str:
        label = f" ({self.label})" if self.label else ""
        return f"{self.method.upper()} {self.path}{label}"


ROWS = [
    Row(GET, "/api/v1/workspaces", listing_for_members),
    Row(GET, "/api/v1/workspaces/{slug}", members_only(Answer(200))),
    Row(GET, "/api/v1/workspaces/{slug}/models", members_only(Answer(200))),
    Row(GET, "/api/v1/workspaces/{slug}/usage", usage_listing, per_creation=True, mark=lambda world: TITLE),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/inputs",
        creators_only(Answer(201, changed=True)),
        body={"files": "stops.csv"},
        multipart=True,
        writes=True,
        changed=_staged,
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/runs",
        creators_only(Answer(201, changed=True)),
        body={"brief": "a poster"},
        writes=True,
        changed=_more_runs,
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/runs",
        start_with_the_artifact,
        body=lambda world: {"brief": "the poster, in blue", "artifact_ids": [world.artifact.pk]},
        writes=True,
        changed=_more_runs,
        per_creation=True,
        label="with an artifact",
    ),
    Row(GET, "/api/v1/runs", run_listing, per_creation=True, mark=lambda world: TITLE),
    Row(GET, "/api/v1/runs/{run_id}", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/events", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/events/stream", run_page, per_creation=True, needs_commits=True),
    Row(GET, "/api/v1/runs/{run_id}/artifacts", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/artifacts/zip", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/compare/{other_run_id}", run_page, per_creation=True),
    Row(GET, "/api/v1/artifacts/{artifact_id}/download", run_page, per_creation=True),
    Row(GET, "/api/v1/artifacts/{artifact_id}/preview", artifact_preview, per_creation=True),
    Row(POST, "/api/v1/runs/{run_id}/cancel", cancel_run, writes=True, per_creation=True),
    Row(POST, "/api/v1/runs/{run_id}/rerun", start_from_run, writes=True, per_creation=True, changed=_more_runs),
    Row(
        POST,
        "/api/v1/runs/{run_id}/fork",
        start_from_run,
        body={"brief": "the same, in blue"},
        writes=True,
        per_creation=True,
        changed=_more_runs,
    ),
    Row(
        POST,
        "/api/v1/runs/{run_id}/refine",
        start_from_run,
        body={"instruction": "make the title bigger"},
        writes=True,
        per_creation=True,
        changed=_refined,
        prepare=_with_the_workspaces_model,
    ),
    Row(GET, "/api/v1/runs/{run_id}/versions", run_page, per_creation=True),
    Row(
        POST,
        "/api/v1/runs/{run_id}/restore",
        restore_version,
        writes=True,
        per_creation=True,
        changed=_shown,
        prepare=_nothing_shown,
    ),
    Row(
        POST,
        "/api/v1/runs/{run_id}/rename",
        rename_creation,
        body={"title": "The renamed poster"},
        writes=True,
        per_creation=True,
        changed=_renamed,
    ),
    Row(POST, "/api/v1/runs/{run_id}/messages", talk_to_run, body={"text": "sign it"}, writes=True, per_creation=True),
    Row(
        POST,
        "/api/v1/runs/{run_id}/share-links",
        share_creation,
        body={"label": "for the press"},
        writes=True,
        per_creation=True,
        changed=_more_share_links,
    ),
    Row(GET, "/api/v1/runs/{run_id}/share-links", share_links_of_run, per_creation=True, mark=lambda w: SHARE_LABEL),
    Row(GET, "/api/v1/workspaces/{slug}/share-links", share_links_of_workspace, mark=lambda w: SHARE_LABEL),
    Row(
        POST,
        "/api/v1/share-links/{share_link_id}/revoke",
        revoke_share_link,
        writes=True,
        per_creation=True,
        changed=_revoked,
    ),
    Row(GET, "/api/v1/workspaces/{slug}/webhooks", managers_only(Answer(200, listed=True)), mark=lambda w: WEBHOOK_URL),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/webhooks",
        managers_only(Answer(201, changed=True)),
        body={"url": WEBHOOK_URL, "events": ["run.succeeded", "version.made"]},
        writes=True,
        changed=_more_webhooks,
    ),
    Row(GET, "/api/v1/webhooks/{webhook_id}", managers_only(Answer(200))),
    Row(
        PATCH,
        "/api/v1/webhooks/{webhook_id}",
        managers_only(Answer(200, changed=True)),
        body={"is_active": False},
        writes=True,
        changed=_webhook_off,
    ),
    Row(
        DELETE,
        "/api/v1/webhooks/{webhook_id}",
        managers_only(Answer(204, changed=True)),
        writes=True,
        changed=_webhook_gone,
    ),
    Row(
        POST,
        "/api/v1/webhooks/{webhook_id}/test",
        managers_only(Answer(202, changed=True)),
        writes=True,
        changed=_test_sent,
    ),
    Row(GET, "/api/v1/webhooks/{webhook_id}/deliveries", managers_only(Answer(200))),
    Row(GET, "/api/v1/runs/{run_id}/schedule", read_schedule, per_creation=True, prepare=_with_a_schedule),
    Row(
        PUT,
        "/api/v1/runs/{run_id}/schedule",
        change_schedule(Answer(200, changed=True)),
        body={"cadence": "weekly", "weekday": 0, "instruction": "update the figures"},
        writes=True,
        per_creation=True,
        changed=_scheduled,
        prepare=_with_the_workspaces_model,
    ),
    Row(
        DELETE,
        "/api/v1/runs/{run_id}/schedule",
        change_schedule(Answer(204, changed=True)),
        writes=True,
        per_creation=True,
        changed=_schedule_cleared,
        prepare=_with_a_schedule,
    ),
    Row(GET, "/api/v1/runs/{run_id}/follow", run_page, per_creation=True),
    Row(
        PUT,
        "/api/v1/runs/{run_id}/follow",
        follow_creation(Answer(200, changed=True)),
        writes=True,
        per_creation=True,
        changed=_followed,
    ),
    Row(
        DELETE,
        "/api/v1/runs/{run_id}/follow",
        follow_creation(Answer(204, changed=True)),
        writes=True,
        per_creation=True,
        changed=_unfollowed,
        prepare=_followed_by_everyone,
    ),
    # Evaluations: every member reads; those who may start runs upload suites and start evaluations;
    # the world's evaluation is the member's, so the member, owners and admins cancel it.
    Row(GET, "/api/v1/workspaces/{slug}/suites", members_only(Answer(200))),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/suites",
        creators_only(Answer(422)),  # a CSV is no task file: refused, saying which line
        body={"tasks": "suite.jsonl"},
        multipart=True,
        writes=True,
        changed=lambda world: Suite.objects.count() > 1,
    ),
    # The spare suite is the member's, with no evaluation: the member, owners and admins delete it.
    Row(
        DELETE,
        "/api/v1/workspaces/{slug}/suites/{suite_id}",
        creators_only(Answer(204, changed=True)),
        writes=True,
        changed=lambda world: not Suite.objects.filter(name=SPARE_SUITE).exists(),
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/evaluations",
        creators_only(Answer(201, changed=True)),
        body=lambda world: {
            "suite_id": world.evaluation.suite_id,
            "model_endpoint_ids": [world.endpoint.pk],
            "modes": "plain",
        },
        writes=True,
        changed=lambda world: Evaluation.objects.count() > 1,
    ),
    Row(GET, "/api/v1/evaluations/{evaluation_id}", members_only(Answer(200))),
    Row(GET, "/api/v1/evaluations/{evaluation_id}/results", members_only(Answer(200))),
    Row(
        POST,
        "/api/v1/evaluations/{evaluation_id}/cancel",
        creators_only(Answer(202, changed=True)),
        writes=True,
        changed=lambda world: Evaluation.objects.filter(pk=world.evaluation.pk, status="cancelled").exists(),
    ),
    Row(GET, "/api/v1/runs/{run_id}/comments", comments_of_run, per_creation=True, mark=lambda w: COMMENT_TEXT),
    Row(
        POST,
        "/api/v1/runs/{run_id}/comments",
        comment_on_run,
        body={"text": "Nice colours"},
        writes=True,
        per_creation=True,
        changed=_more_comments,
    ),
    Row(
        PATCH,
        "/api/v1/comments/{comment_id}",
        edit_comment,
        body={"text": "Edited words"},
        writes=True,
        per_creation=True,
        changed=_edited,
    ),
    Row(DELETE, "/api/v1/comments/{comment_id}", delete_comment, writes=True, per_creation=True, changed=_comment_gone),
    Row(
        GET,
        "/api/v1/notifications",
        own_notifications(Answer(200, listed=True), Answer(200, listed=False)),
        mark=lambda w: "mentioned you",
    ),
    Row(
        POST,
        "/api/v1/notifications/read",
        own_notifications(Answer(200, changed=True), Answer(200)),
        writes=True,
        changed=_notification_read,
    ),
    Row(
        POST,
        "/api/v1/notifications/{notification_id}/read",
        own_notifications(Answer(200, changed=True), NOT_FOUND),
        writes=True,
        changed=_notification_read,
    ),
    Row(
        GET,
        "/api/v1/notifications/unread-count",
        own_notifications(Answer(200, listed=True), Answer(200, listed=False)),
        mark=lambda w: '"unread": 1',
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/comparisons",
        creators_only(Answer(201, changed=True)),
        body=_contestant_models,
        writes=True,
        changed=_more_comparisons,
    ),
    Row(GET, "/api/v1/comparisons/{comparison_id}", comparison(Answer(200), Answer(200)), per_creation=True),
    Row(
        POST,
        "/api/v1/comparisons/{comparison_id}/votes",
        comparison(Answer(201, changed=True), FORBIDDEN),
        body={"winner": "A"},
        writes=True,
        per_creation=True,
        changed=_voted,
    ),
    Row(POST, "/api/v1/comparisons/{comparison_id}/cancel", cancel_comparison, writes=True, per_creation=True),
    Row(GET, "/api/v1/workspaces/{slug}/leaderboard", members_only(Answer(200))),
    Row(GET, "/api/v1/notifications/settings", signed_in(Answer(200))),
    Row(
        PUT,
        "/api/v1/notifications/settings",
        signed_in(Answer(200, changed=True)),
        body=[{"kind": "run_succeeded", "in_page": False, "email": False}],
        writes=True,
        changed=_settings_saved,
    ),
]


# --- addressing the world's objects ---------------------------------------------------------

ARGUMENTS: dict[tuple[str, str] | str, Callable[[World], Any]] = {
    ("runs", "run_id"): lambda w: w.run.pk,
    ("artifacts", "artifact_id"): lambda w: w.artifact.pk,
    ("compare", "other_run_id"): lambda w: w.run.pk,  # the world's one run, with itself: nothing changed
    ("share-links", "share_link_id"): lambda w: w.share_link.pk,
    ("webhooks", "webhook_id"): lambda w: w.webhook.pk,
    ("comments", "comment_id"): lambda w: w.comment.pk,
    ("notifications", "notification_id"): lambda w: w.notification.pk,
    ("evaluations", "evaluation_id"): lambda w: w.evaluation.pk,
    ("suites", "suite_id"): lambda w: spare_suite(w.workspace, w.people[MEMBER]).pk,
    ("comparisons", "comparison_id"): lambda w: w.comparison.pk,
    "slug": lambda w: w.workspace.slug,
}


def _url(row: Row, world: World) -> str:
    def value(match: re.Match[str]) -> str:
        segment, name = match.group(1), match.group(2)
        argument = ARGUMENTS.get((segment, name)) or ARGUMENTS.get(name)
        if argument is None:
            pytest.fail(f"{row.path}: no value for {{{name}}} (after {segment!r}/); add it to ARGUMENTS.")
        return f"{segment}/{argument(world)}"

    return re.sub(r"([^/{}]*)/\{(\w+)\}", value, row.path)


def _schema_operations() -> set[tuple[str, str]]:
    paths = api.get_openapi_schema()["paths"]
    return {(method, path) for path, operations in paths.items() for method in operations}


def test_every_operation_has_a_row() -> None:
    operations = _schema_operations()
    rows = {(row.method, row.path) for row in ROWS}
    missing = sorted(f"{m.upper()} {p}" for m, p in operations - rows)
    assert not missing, f"no row says who may call these operations; add one each: {missing}"
    stale = sorted(f"{m.upper()} {p}" for m, p in rows - operations)
    assert not stale, f"rows name operations the API no longer has: {stale}"


@dataclass(frozen=True)
class Case:
    row: Row
    who: str
    visibility: str
    read_token: bool = False

    @property
    def expected(self) -> Answer:
        if self.read_token:  # decided by the token before anything is looked up: it tells nothing
            return FORBIDDEN
        return self.row.expect(self.who, self.visibility)

    @property
    def id(self) -> str:
        on = f"-{self.visibility}" if self.row.per_creation else ""
        token = "-read-token" if self.read_token else ""
        return f"{self.row.id}-{self.who}{on}{token}"


def matrix_cases(*, needs_commits: bool) -> list[Any]:
    cases = []
    for row in ROWS:
        if row.needs_commits != needs_commits:
            continue
        for visibility in VISIBILITIES if row.per_creation else (WORKSPACE,):
            for who in ROLES:
                cases.append(Case(row, who, visibility))
                if row.writes and who != ANONYMOUS:
                    cases.append(Case(row, who, visibility, read_token=True))
    return [pytest.param(case, id=case.id) for case in cases]


def _client(world: World, who: str, *, read_token: bool) -> ApiClient:
    if who not in world.people:
        return ApiClient(None)
    return ApiClient(token_of(world, who, TokenScope.READ if read_token else TokenScope.WRITE))


@pytest.mark.django_db
@pytest.mark.parametrize("case", matrix_cases(needs_commits=False))
def test_api_role_matrix(case: Case, kept_world: World, kept_world_media: Path, settings: Any) -> None:
    settings.MEDIA_ROOT = kept_world_media
    check_case(case, world_for_case(kept_world, case.visibility), settings)


def check_case(case: Case, world: World, settings: Any) -> None:
    """The row's request as the case's person, and what they got against what the row expects."""
    settings.API_RATE_LIMIT_PER_MINUTE = 10_000
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 10_000
    if case.row.prepare is not None:
        case.row.prepare(world)
    client = _client(world, case.who, read_token=case.read_token)
    url = _url(case.row, world)
    if case.row.method == GET:
        response = client.get(url)
    elif case.row.method in (PUT, PATCH, DELETE):
        sent = case.row.body(world) if callable(case.row.body) else case.row.body
        response = client.send(case.row.method, url, sent)
    elif case.row.method == DELETE:
        response = client.delete(url)
    elif case.row.method in (PATCH, PUT):
        response = client.send(case.row.method, url, case.row.body)
    elif case.row.multipart:
        assert isinstance(case.row.body, dict)
        files = {name: SimpleUploadedFile(value, b"a,b\n1,2\n") for name, value in case.row.body.items()}
        response = client.post(url, files, multipart=True)
    else:
        sent = case.row.body(world) if callable(case.row.body) else case.row.body
        response = client.post(url, sent or {})
    body = b"".join(response) if response.streaming else response.content
    expected = case.expected
    got = Answer(
        response.status_code,
        listed=case.row.mark(world).encode() in body if expected.listed is not None else None,
        changed=case.row.changed(world) if case.row.changed else False,
    )
    assert got == expected, f"{case.id}: expected {expected}, got {got}: {body[:300]!r}"
