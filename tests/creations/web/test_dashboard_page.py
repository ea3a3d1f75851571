"""The workspace dashboard, for members and outsiders."""

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run
from creations.usage.ledger import usage_record_write
from tests.support.fixtures.accounts import Team
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


def test_the_dashboard_shows_recent_runs_and_this_months_usage(team: Team, client: Client) -> None:
    run = a_run(team, brief="A calm piano piece")
    Run.objects.filter(pk=run.pk).update(prompt_tokens=1200, completion_tokens=300)
    usage_record_write(run_id=run.pk)  # what ending it writes: the dashboard reads the usage ledger
    response = signed_in(client, team.member).get(reverse("workspace_dashboard", args=[team.workspace.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "A calm piano piece" in html
    assert "Runs ended this month" in html
    assert "1.5k" in html
    assert reverse("creation_new", args=[team.workspace.slug]) in html


def test_the_dashboard_lists_whats_running(team: Team, client: Client) -> None:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A countdown video")
    Run.objects.create(creation=creation)
    html = signed_in(client, team.owner).get(reverse("workspace_dashboard", args=[team.workspace.slug])).content
    assert b"Running now" in html
    assert b"A countdown video" in html


def test_outsiders_do_not_see_a_workspace_dashboard(team: Team, client: Client) -> None:
    response = signed_in(client, team.outsider).get(reverse("workspace_dashboard", args=[team.workspace.slug]))
    assert response.status_code == 404
