"""Cancelling a comparison as a whole: every contestant still queued or running is cancelled as a
run is (a queued one ends at once, a running one is asked to stop), from the comparison's page by
who made it, owners and admins; the others are refused, saying why."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.arena.models import Comparison
from creations.models import Run, RunStatus
from creations.runs.state import run_finish
from tests.support.arena import a_comparison, team_models
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db


def _one_queued_one_running_one_ended(team: Team) -> tuple[Comparison, list[int]]:
    comparison = a_comparison(team.workspace, team.member, team_models(team.workspace, 3))
    runs = [c.run_id for c in comparison.contestants.order_by("position")]
    Run.objects.filter(pk=runs[1]).update(status=RunStatus.RUNNING)
    run_finish(run_id=runs[2], status=RunStatus.SUCCEEDED, reason="The agent submitted its work.")
    return comparison, runs


def _cancel(client: Client, comparison: Any) -> Any:
    return client.post(reverse("comparison_cancel", args=[comparison.pk]))


def test_who_made_it_cancels_every_contestant_still_going_from_its_page(team: Team, client: Client) -> None:
    comparison, (queued, running, ended) = _one_queued_one_running_one_ended(team)
    maker = signed_in(client, team.member)
    page = html.unescape(maker.get(comparison.get_absolute_url()).content.decode())
    assert 'data-role="cancel-comparison"' in page
    assert "Yes, cancel the comparison" in page

    response = _cancel(maker, comparison)
    assert response.status_code == 302
    assert response["Location"] == comparison.get_absolute_url()
    statuses = dict(Run.objects.filter(pk__in=[queued, running, ended]).values_list("pk", "status"))
    assert statuses[queued] == RunStatus.CANCELLED
    assert statuses[ended] == RunStatus.SUCCEEDED
    stopping = Run.objects.get(pk=running)
    assert stopping.cancel_requested_at is not None
    assert stopping.cancelled_by == team.member
    after = html.unescape(maker.get(comparison.get_absolute_url()).content.decode())
    assert "Cancelled: 2 runs asked to stop." in after


def test_owners_cancel_any_comparison_and_once_all_ended_there_is_nothing_to_cancel(team: Team, client: Client) -> None:
    comparison, (queued, running, _) = _one_queued_one_running_one_ended(team)
    owner = signed_in(client, team.owner)
    assert _cancel(owner, comparison).status_code == 302
    assert Run.objects.get(pk=queued).status == RunStatus.CANCELLED
    assert Run.objects.get(pk=running).cancelled_by == team.owner

    run_finish(run_id=running, status=RunStatus.CANCELLED, reason="Stopped by its worker.")  # as the worker does
    page = html.unescape(owner.get(comparison.get_absolute_url()).content.decode())
    assert 'data-role="cancel-comparison"' not in page
    again = owner.post(reverse("comparison_cancel", args=[comparison.pk]), follow=True)
    assert "Every contestant had already ended: there was nothing to cancel." in html.unescape(again.content.decode())


def test_another_member_and_viewers_are_refused_and_nothing_stops(team: Team, client: Client) -> None:
    comparison = a_comparison(team.workspace, team.owner, team_models(team.workspace, 2))
    for person in (team.member, team.viewer):
        who = signed_in(Client(), person)
        page = html.unescape(who.get(comparison.get_absolute_url()).content.decode())
        assert 'data-role="cancel-comparison"' not in page
        refused = _cancel(who, comparison)
        assert refused.status_code == 403
        assert "You can cancel the comparisons you made; owners and admins can cancel any." in html.unescape(
            refused.content.decode()
        )
    assert not Run.objects.exclude(status=RunStatus.QUEUED).exists()
    assert not Run.objects.filter(cancel_requested_at__isnull=False).exists()
    assert _cancel(signed_in(client, team.outsider), comparison).status_code == 404
