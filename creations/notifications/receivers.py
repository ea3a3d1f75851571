"""Who hears of what: the signals of runs, comments and invitations turned into notifications.

A run's news goes to whoever started it and to the creation's followers (a scheduled run's
success is its schedule's to tell: creations.schedules.announcements); a comment's to the
creation's author, whoever started the version it is about, and the followers; a mention to
the person mentioned (instead of the comment's news). Nobody hears of what they did themselves,
and only people who still see the creation hear of it. Each signal is sent inside the
transaction of its change, so these write in it (creations.runs.signals)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import wraps
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse

from creations.access import creation_visible
from creations.arena.selectors import model_names_hidden_from, names_hidden_from_anyone
from creations.comments.models import Comment
from creations.comments.signals import comment_posted
from creations.events.redaction import text_without_names
from creations.models import Creation, Run, RunStatus
from creations.notifications.models import Kind
from creations.notifications.selectors import followers_of
from creations.notifications.services import Event, notify
from creations.runs.signals import run_ended, run_waiting
from workspaces.announcements import invitation_created
from workspaces.models import Invitation, Membership

COMMENT_EXCERPT_CHARS = 500


def connect() -> None:
    run_ended.connect(_in_a_savepoint(_run_ended), dispatch_uid="notifications-run-ended", weak=False)
    run_waiting.connect(_in_a_savepoint(_run_waiting), dispatch_uid="notifications-run-waiting", weak=False)
    comment_posted.connect(_in_a_savepoint(_comment_posted), dispatch_uid="notifications-comment-posted", weak=False)
    invitation_created.connect(
        _in_a_savepoint(_invitation_created), dispatch_uid="notifications-invitation-created", weak=False
    )


def _in_a_savepoint(receiver: Callable[..., None]) -> Callable[..., None]:
    """The receiver in a savepoint of the sender's transaction: if it fails, what it wrote is undone
    and the sender's change stands (runs send robustly and log the failure)."""

    @wraps(receiver)
    def wrapped(sender: Any, **kwargs: Any) -> None:
        with transaction.atomic():
            receiver(sender, **kwargs)

    return wrapped


def name_of(user: User | None) -> str:
    if user is None:
        return "Someone"
    return user.get_full_name() or user.get_username()


def those_who_see(creation: Creation, people: Iterable[User | None], *, leaving_out: int | None = None) -> list[User]:
    """Of `people`, each once, those who are active members who may see `creation` now."""
    wanted = {person.pk: person for person in people if person is not None and person.pk != leaving_out}
    memberships = {
        member.user_id: member
        for member in Membership.objects.filter(workspace_id=creation.workspace_id, user_id__in=list(wanted))
    }
    return [
        person
        for pk, person in wanted.items()
        if person.is_active
        and pk in memberships
        and creation_visible(creation=creation, user=person, membership=memberships[pk])
    ]


def _run_with_creation(run_id: int) -> Run:
    return Run.objects.select_related("creation__model_endpoint", "started_by", "cancelled_by").get(pk=run_id)


def _notify_of_run(event: Event, creation: Creation, people: Iterable[User]) -> None:
    """`event` for each of `people`, its body (a run's reason, which may name the endpoint) not
    naming the model to those from whom a blind comparison hides it: as they would read it on the run's page."""
    if not names_hidden_from_anyone(creation):  # no blind comparison hides it: one query, not one a person
        notify(event, people)
        return
    told: dict[tuple[str, ...], list[User]] = defaultdict(list)
    for person in people:
        told[model_names_hidden_from(creation=creation, user=person)].append(person)
    for hidden, group in told.items():
        notify(replace(event, body=text_without_names(event.body, hidden)), group)


def _version_path(run: Run) -> str:
    return f"{reverse('creation_detail', args=[run.creation_id])}?run={run.pk}"


def _run_ended(sender: Any, *, run_id: int, status: str, reason: str, **kwargs: Any) -> None:
    run = _run_with_creation(run_id)
    creation = run.creation
    succeeded = status == RunStatus.SUCCEEDED
    if succeeded and run.scheduled:
        # Its schedule tells of it, and only when its files changed: an identical refresh is not news.
        return
    what = "finished" if succeeded else f"ended: {RunStatus(status).label.lower()}"
    event = Event(
        kind=Kind.RUN_SUCCEEDED if succeeded else Kind.RUN_FAILED,
        key=f"run:{run.pk}:ended",
        title=f"“{creation}” {run.label} {what}",
        body=reason,
        path=_version_path(run),
        workspace_id=creation.workspace_id,
        creation=creation,
        run=run,
        actor=run.cancelled_by if status == RunStatus.CANCELLED else None,
    )
    # Whoever cancelled it knows already.
    canceller = run.cancelled_by_id if status == RunStatus.CANCELLED else None
    _notify_of_run(
        event, creation, those_who_see(creation, [run.started_by, *followers_of(creation.pk)], leaving_out=canceller)
    )


def _run_waiting(sender: Any, *, run_id: int, reason: str, **kwargs: Any) -> None:
    run = _run_with_creation(run_id)
    creation = run.creation
    event = Event(
        kind=Kind.RUN_WAITING,
        key=f"run:{run.pk}:waiting",  # once per run, however often its reason changes
        title=f"“{creation}” {run.label} waits for a free slot",
        body=reason,
        path=run.get_absolute_url(),
        workspace_id=creation.workspace_id,
        creation=creation,
        run=run,
    )
    _notify_of_run(event, creation, those_who_see(creation, [run.started_by, *followers_of(creation.pk)]))


def _comment_posted(sender: Any, *, comment: Comment, newly_mentioned: set[int], edited: bool, **kwargs: Any) -> None:
    creation = Creation.objects.select_related("author").get(pk=comment.creation_id)
    run = Run.objects.select_related("started_by").get(pk=comment.run_id) if comment.run_id else None
    author = comment.author
    on = f"{run.label} of “{creation}”" if run is not None else f"“{creation}”"
    page = reverse("creation_detail", args=[creation.pk]) + (f"?run={run.pk}" if run is not None else "")
    excerpt = comment.text
    if len(excerpt) > COMMENT_EXCERPT_CHARS:
        excerpt = excerpt[:COMMENT_EXCERPT_CHARS] + "…"

    def event(kind: Kind, key: str, title: str) -> Event:
        return Event(
            kind=kind,
            key=key,
            title=title,
            body=excerpt,
            path=f"{page}#comment-{comment.pk}",
            workspace_id=creation.workspace_id,
            creation=creation,
            run=run,
            comment=comment,
            actor=author,
        )

    leaving_out = author.pk if author is not None else None
    mentioned = those_who_see(creation, User.objects.filter(pk__in=newly_mentioned), leaving_out=leaving_out)
    notify(event(Kind.MENTION, f"comment:{comment.pk}:mention", f"{name_of(author)} mentioned you on {on}"), mentioned)
    if edited:
        return
    interested = those_who_see(
        creation,
        [creation.author, run.started_by if run is not None else None, *followers_of(creation.pk)],
        leaving_out=leaving_out,
    )
    mentioned_ids = {person.pk for person in mentioned}
    notify(
        event(Kind.COMMENT, f"comment:{comment.pk}", f"{name_of(author)} commented on {on}"),
        [person for person in interested if person.pk not in mentioned_ids],
    )


def _invitation_created(sender: Any, *, invitation: Invitation, actor: User, **kwargs: Any) -> None:
    invited = User.objects.filter(email__iexact=invitation.email, is_active=True).exclude(pk=actor.pk)
    workspace = invitation.workspace
    event = Event(
        kind=Kind.INVITATION,
        key=f"invitation:{invitation.pk}",
        title=f"{name_of(actor)} invites you to {workspace.name} as {invitation.get_role_display().lower()}",
        body=f"The link to join was mailed to {invitation.email}; it works once, "
        f"until {invitation.expires_at:%Y-%m-%d %H:%M} UTC.",
        workspace_id=workspace.pk,
        actor=actor,
    )
    notify(event, invited)
