"""Talking to a running agent: a member's message waits here until the agent's next model request takes it."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from creations.access import can_view_creation
from creations.models import ACTIVE_STATUSES, Run, RunMessage
from workspaces.permissions import may_start_runs
from workspaces.selectors import membership_get


def run_message_send(*, run: Run, user: User | AnonymousUser, text: str) -> RunMessage:
    """Queue `text` for the agent of an active run. Who may: those who may start runs in
    the workspace and can see the creation (viewers watch, members talk)."""
    membership = membership_get(workspace=run.creation.workspace_id, user=user)
    if not can_view_creation(creation=run.creation, user=user):
        raise PermissionDenied("You cannot see this run.")
    if not may_start_runs(membership):
        raise PermissionDenied("Only owners, admins and members of this workspace can talk to its agents.")
    assert isinstance(user, User)
    text = (text or "").strip()
    if not text:
        raise ValidationError({"text": "Write a message for the agent."})
    if len(text) > settings.RUN_MESSAGE_MAX_CHARS:
        limit = settings.RUN_MESSAGE_MAX_CHARS
        raise ValidationError({"text": f"The message is too long (at most {limit} characters)."})
    with transaction.atomic():
        locked = Run.objects.select_for_update().only("pk", "status", "version").get(pk=run.pk)
        if locked.status not in ACTIVE_STATUSES:
            raise ValidationError(
                f"v{locked.version} has ended, so nobody would read this. Refine it to ask for a change."
            )
        pending = RunMessage.objects.filter(run_id=run.pk, delivered_at__isnull=True).count()
        if pending >= settings.RUN_MESSAGES_MAX_PENDING:
            raise ValidationError(
                f"{pending} messages are already waiting for the agent's next step; send more once it has read them."
            )
        name = (user.get_full_name() or user.get_username())[:150]
        return RunMessage.objects.create(run_id=run.pk, author=user, author_name=name, text=text)


def run_messages_take(*, run_id: int) -> list[RunMessage]:
    """The messages not yet given to the agent, oldest first, marked given (each exactly once)."""
    undelivered = RunMessage.objects.filter(run_id=run_id, delivered_at__isnull=True)
    # Asked before every model request and nearly always empty: one statement, where taking
    # them (locked, marked, committed) costs three round trips.
    if not undelivered.exists():
        return []
    with transaction.atomic():
        waiting = list(
            RunMessage.objects.select_for_update(skip_locked=True)
            .filter(run_id=run_id, delivered_at__isnull=True)
            .order_by("created_at", "pk")
        )
        if waiting:
            RunMessage.objects.filter(pk__in=[m.pk for m in waiting]).update(delivered_at=timezone.now())
    return waiting
