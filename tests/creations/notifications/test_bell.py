"""The bell in every page's header keeps itself current: the page names the count it asks for
(the API's, answered to the signed-in browser) and how often, and carries a polite live region
and the script that asks; the count itself is the person's own."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.notifications.models import Kind, Notification
from tests.support.fixtures.accounts import PASSWORD, Team

pytestmark = pytest.mark.django_db


def _signed_in(user: Any) -> Client:
    browser = Client()
    assert browser.login(username=user.username, password=PASSWORD)
    return browser


def test_the_page_tells_the_bell_where_and_how_often_to_ask(team: Team, settings: Any) -> None:
    settings.NOTIFICATION_BELL_POLL_SECONDS = 45
    Notification.objects.create(recipient=team.member, kind=Kind.MENTION, event_key="k", title="Look")
    page = _signed_in(team.member).get(reverse("notification_settings")).content.decode()
    bell = re.search(r'<a [^>]*data-role="bell"[^>]*>', page)
    assert bell is not None
    assert 'data-unread="1"' in bell.group(0)
    assert f'data-count-url="{reverse("api-v1:count_unread_notifications")}"' in bell.group(0)
    assert 'data-poll-seconds="45"' in bell.group(0)
    assert re.search(r'<span class="visually-hidden" data-role="bell-news" aria-live="polite"></span>', page)
    assert re.search(r'<script src="[^"]*js/bell\.js" defer></script>', page)


def test_nobody_signed_in_gets_no_bell_and_no_polling(client: Client) -> None:
    page = client.get(reverse("login")).content.decode()
    assert 'data-role="bell"' not in page
    assert "bell.js" not in page


def test_the_count_the_bell_asks_for_is_the_person_s_own_unread(team: Team) -> None:
    Notification.objects.create(recipient=team.member, kind=Kind.MENTION, event_key="a", title="One")
    Notification.objects.create(recipient=team.owner, kind=Kind.MENTION, event_key="b", title="Not bob's")
    url = reverse("api-v1:count_unread_notifications")
    browser = _signed_in(team.member)
    assert browser.get(url).json() == {"unread": 1}
    browser.post(reverse("notifications_read_all"))
    assert browser.get(url).json() == {"unread": 0}
    assert Client().get(url).status_code == 401
