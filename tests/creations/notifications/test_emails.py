"""Notification e-mails through Django's SMTP backend to a real SMTP server on loopback: one
e-mail per finished run, however often its task runs; none when switched off; their links open
the run's version and the e-mail settings; a mail server that refuses is tried again, then given up."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from celery import current_app
from django.test import Client

from creations.models import Run, RunStatus
from creations.notifications.emails import SendAgainLater, notification_email_send
from creations.notifications.models import EmailStatus, Kind, Notification
from creations.notifications.selectors import Choice
from creations.notifications.services import notification_settings_save
from creations.notifications.tasks import send_pending_emails
from creations.runs.state import run_finish
from tests.support.factories import RunFactory
from tests.support.fixtures.accounts import Team
from tests.support.smtp import Inbox, _free_port, smtp_server

pytestmark = pytest.mark.django_db
SITE = "https://atelier.example"


@pytest.fixture
def inbox(settings: Any) -> Iterator[Inbox]:
    with smtp_server() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.SITE_URL = SITE
        yield server


@pytest.fixture
def run(team: Team) -> Run:
    return RunFactory.create(
        status=RunStatus.RUNNING,
        creation__workspace=team.workspace,
        creation__author=team.member,
        creation__title="Poster",
    )


@pytest.fixture
def tasks_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broker's part played in this process: a task asked for by name runs at once."""
    monkeypatch.setattr(current_app, "send_task", lambda name, args=(), **kw: current_app.tasks[name].apply(args=args))


def links(text: str) -> list[str]:
    return re.findall(r"https?://\S+", text)


def test_one_email_per_finished_run_with_links_that_open(
    team: Team, run: Run, inbox: Inbox, client: Client, tasks_run_here: None, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
    notification = Notification.objects.get(recipient=team.member)
    assert not notification_email_send(notification.pk)  # the task again (a redelivery): no second e-mail
    send_pending_emails()

    [mail] = inbox.received
    assert inbox.recipients == [[team.member.email]]
    assert mail["Subject"] == "[Atelier] “Poster” v1 finished"
    body = mail.get_content()
    assert "The agent submitted its work." in body
    opened, settings_page = links(body)
    assert opened == f"{SITE}/creations/{run.creation_id}/?run={run.pk}"
    assert settings_page == f"{SITE}/notifications/settings/"
    notification.refresh_from_db()
    assert notification.email_status == EmailStatus.SENT

    client.force_login(team.member)
    for link in (opened, settings_page):
        page = client.get(link.removeprefix(SITE))
        assert page.status_code == 200, link
    assert b"Poster" in client.get(opened.removeprefix(SITE)).content


def test_no_email_when_switched_off(
    team: Team, run: Run, inbox: Inbox, tasks_run_here: None, django_capture_on_commit_callbacks: Any
) -> None:
    notification_settings_save(user=team.member, choices=[Choice(Kind.RUN_SUCCEEDED, in_page=True, email=False)])
    with django_capture_on_commit_callbacks(execute=True):
        run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    send_pending_emails()
    assert inbox.received == []
    assert Notification.objects.get(recipient=team.member).email_status == EmailStatus.NOT_WANTED


def test_a_refused_email_is_tried_again_then_given_up(team: Team, run: Run, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", _free_port()  # nobody listens there
    settings.NOTIFICATION_EMAIL_ATTEMPTS = 2
    run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="done")
    notification = Notification.objects.get(recipient=team.member)
    with pytest.raises(SendAgainLater):
        notification_email_send(notification.pk)
    notification.refresh_from_db()
    assert (notification.email_status, notification.email_attempts) == (EmailStatus.PENDING, 1)
    assert not notification_email_send(notification.pk)
    notification.refresh_from_db()
    assert (notification.email_status, notification.email_attempts) == (EmailStatus.FAILED, 2)
