"""Sign-ups and submissions are limited per person and per address per
minute, counted in a real Redis; past a limit the page says so with 429 and
keeps what was typed. With the counter's Redis away, nobody is locked out.

django-ratelimit counts in fixed windows of a minute; the tests hold its clock
still, so a window never ends half-way through a test (and move it on to show
that the next minute starts afresh)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import django_ratelimit.core
import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation
from tests.support import free_port
from tests.support.fixtures.accounts import PASSWORD, Team

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rate_limit_clock")]


def counting_in(settings: Any, redis_url: str) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {"BACKEND": settings.CACHES["ratelimit"]["BACKEND"], "LOCATION": redis_url},
    }


def submit(client: Client, team: Team, brief: str) -> Any:
    data = {"brief": brief, "visibility": "workspace", "model": ""}
    return client.post(reverse("creation_new", args=[team.workspace.slug]), data)


def signed_in(user: Any, address: str = "192.0.2.10") -> Client:
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    return client


def test_a_person_past_the_submission_limit_is_told_to_wait_and_keeps_the_brief(
    team: Team, settings: Any, own_redis: str
) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 2
    member = signed_in(team.member)

    answers = [submit(member, team, f"poster number {n}") for n in range(3)]

    assert [a.status_code for a in answers] == [302, 302, 429]
    page = answers[2].content.decode()
    assert "Wait a minute and start this one again" in page
    assert "poster number 2</textarea>" in page
    assert Creation.objects.count() == 2
    # Another person is counted on their own.
    assert submit(signed_in(team.owner, "192.0.2.11"), team, "a map").status_code == 302


def test_the_next_minute_starts_afresh(
    team: Team, settings: Any, own_redis: str, rate_limit_clock: SimpleNamespace
) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 1
    member = signed_in(team.member)
    assert [submit(member, team, f"brief {n}").status_code for n in range(2)] == [302, 429]

    rate_limit_clock.now += 60

    assert submit(member, team, "brief 2").status_code == 302


def test_one_address_is_limited_across_people(team: Team, settings: Any, own_redis: str) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 100
    settings.RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE = 3
    member, owner = signed_in(team.member), signed_in(team.owner)

    statuses = [submit(client, team, f"brief {n}").status_code for n, client in enumerate([member, owner] * 2)]

    assert statuses == [302, 302, 302, 429]


def test_sign_ups_from_one_address_are_limited(db: None, settings: Any, own_redis: str) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_SIGNUPS_PER_MINUTE = 2
    client = Client(REMOTE_ADDR="192.0.2.20")

    def sign_up(name: str) -> Any:
        data = {"username": name, "email": f"{name}@example.com", "password1": PASSWORD, "password2": PASSWORD}
        client.cookies.clear()  # each as a new visitor
        return client.post(reverse("signup"), data)

    answers = [sign_up(name) for name in ("ann", "ben", "cat")]

    assert [a.status_code for a in answers] == [302, 302, 429]
    page = answers[2].content.decode()
    assert "Too many sign-ups from your network" in page
    assert 'value="cat"' in page


def test_with_the_counter_away_requests_go_through(team: Team, settings: Any, caplog: Any) -> None:
    counting_in(settings, f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 1

    statuses = [submit(signed_in(team.member), team, f"brief {n}").status_code for n in range(3)]

    assert statuses == [302, 302, 302]
    assert "Rate limits not checked" in caplog.text


# --- Logging in and password resets: per account named and per address ---


def log_in(client: Client, username: str, password: str) -> Any:
    return client.post(reverse("login"), {"username": username, "password": password})


def test_password_guesses_at_one_account_stop_at_the_limit_from_any_address(
    team: Team, settings: Any, own_redis: str
) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR = 3
    guesses = [log_in(Client(REMOTE_ADDR=f"192.0.2.{n}"), "alice", f"guess {n}") for n in range(3)]
    assert [g.status_code for g in guesses] == [200, 200, 200]  # wrong passwords, said so on the form

    # Past the limit even the right password is not looked at: guessing goes no faster.
    refused = log_in(Client(REMOTE_ADDR="198.51.100.1"), "alice", PASSWORD)

    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many attempts to log in to this account" in page
    assert 'value="alice"' in page
    assert "_auth_user_id" not in refused.wsgi_request.session
    # Another account is counted on its own.
    assert log_in(Client(REMOTE_ADDR="198.51.100.1"), "bob", PASSWORD).status_code == 302


def test_password_guesses_from_one_address_stop_at_the_limit_across_accounts(
    team: Team, settings: Any, own_redis: str
) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_LOGINS_PER_ADDRESS_PER_MINUTE = 3
    client = Client(REMOTE_ADDR="192.0.2.30")

    statuses = [log_in(client, name, "a guess").status_code for name in ("alice", "bob", "vera", "mallory")]

    assert statuses == [200, 200, 200, 429]
    assert log_in(Client(REMOTE_ADDR="192.0.2.31"), "mallory", PASSWORD).status_code == 302


def test_the_login_limit_is_per_hour_for_an_account(
    team: Team, settings: Any, own_redis: str, rate_limit_clock: SimpleNamespace
) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_LOGINS_PER_ACCOUNT_PER_HOUR = 1
    # The first second of this account's hour (django-ratelimit staggers each key's windows).
    rate_limit_clock.now = django_ratelimit.core._get_window("account:alice", 3600) - 3600 + 1
    assert log_in(Client(), "alice", "a guess").status_code == 200
    rate_limit_clock.now += 60
    assert log_in(Client(), "alice", PASSWORD).status_code == 429  # a minute later: still held
    rate_limit_clock.now += 3600
    assert log_in(Client(), "alice", PASSWORD).status_code == 302


def ask_reset(client: Client, email: str) -> Any:
    return client.post(reverse("password_reset"), {"email": email})


def test_password_resets_for_one_email_are_limited_whoever_asks(team: Team, settings: Any, own_redis: str) -> None:
    from django.core import mail

    counting_in(settings, own_redis)
    settings.RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR = 2

    answers = [ask_reset(Client(REMOTE_ADDR=f"192.0.2.{n}"), "ALICE@example.com") for n in range(3)]

    assert [a.status_code for a in answers] == [302, 302, 429]
    assert len(mail.outbox) == 2  # the inbox got two links, not one per request
    page = answers[2].content.decode()
    assert "Too many password resets asked for this address" in page
    assert 'value="ALICE@example.com"' in page
    # An email nobody has is counted the same way, so the limit tells nothing about who has an account.
    unknown = [ask_reset(Client(REMOTE_ADDR=f"192.0.2.{n}"), "nobody@example.com").status_code for n in range(3)]
    assert unknown == [302, 302, 429]


def test_password_resets_from_one_address_are_limited_across_emails(team: Team, settings: Any, own_redis: str) -> None:
    counting_in(settings, own_redis)
    settings.RATE_LIMIT_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR = 2
    client = Client(REMOTE_ADDR="192.0.2.40")

    statuses = [ask_reset(client, f"{name}@example.com").status_code for name in ("alice", "bob", "vera")]

    assert statuses == [302, 302, 429]


def test_sign_ups_with_an_email_in_use_mail_its_owner_no_more_often_than_password_resets(
    team: Team, settings: Any, own_redis: str
) -> None:
    from django.core import mail

    counting_in(settings, own_redis)
    settings.RATE_LIMIT_PASSWORD_RESETS_PER_ACCOUNT_PER_HOUR = 2
    data = {"email": "alice@example.com", "password1": PASSWORD, "password2": PASSWORD}

    pages = [
        Client(REMOTE_ADDR=f"192.0.2.{n}").post(reverse("signup"), {**data, "username": f"nina{n}"}) for n in range(4)
    ]

    assert all("Check your inbox" in page.content.decode() for page in pages)  # the same answer each time
    assert len(mail.outbox) == 2
