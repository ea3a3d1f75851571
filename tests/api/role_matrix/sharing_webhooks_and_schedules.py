"""The API role matrix's rows for share links, a workspace's webhooks and a creation's schedule."""

from __future__ import annotations

from creations.schedules.models import Schedule
from creations.sharing.models import ShareLink
from creations.webhooks.models import Webhook, WebhookDelivery
from tests.api.role_matrix.rows import (
    DELETE,
    FORBIDDEN,
    GET,
    NOT_FOUND,
    PATCH,
    POST,
    PUT,
    UNAUTHORIZED,
    Answer,
    Row,
    Rule,
    with_the_workspaces_model,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, SHARE_LABEL, World, sees

WEBHOOK_URL = "https://93.184.215.14/role-matrix-hook"  # how lists of webhooks show the world's (role_world)


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


def _with_a_schedule(world: World) -> None:
    with_the_workspaces_model(world)
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


def _more_share_links(world: World) -> bool:
    return ShareLink.objects.count() > 1


def _revoked(world: World) -> bool:
    return ShareLink.objects.filter(pk=world.share_link.pk, revoked_at__isnull=False).exists()


ROWS = [
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
        prepare=with_the_workspaces_model,
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
]
