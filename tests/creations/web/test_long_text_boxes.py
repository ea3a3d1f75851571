"""The refine box ("What should change?") and the "Tell the agent" box are held to their limits as the
brief is: a paste over the limit is refused saying so, with every character kept, never cut by the
browser (no `maxlength`), and counted as it is typed (static/js/char_limits.js, `data-max-chars`)."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.models import Run, RunMessage, RunStatus
from creations.runs.services import creation_submit
from creations.runs.state import run_finish
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda *args, **kwargs: None)


def _run(team: Team, status: RunStatus) -> Run:
    run = creation_submit(workspace=team.workspace, author=team.member, brief="a poster", model_endpoint=None)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    if status != RunStatus.RUNNING:
        assert run_finish(run_id=run.pk, status=status, reason="ended", summary="A poster.")
    run.refresh_from_db()
    return run


def test_an_instruction_over_its_limit_is_refused_whole_and_the_box_counts(
    team: Team, client: Client, settings: Any
) -> None:
    settings.RUN_INSTRUCTION_MAX_CHARS = 50
    run = _run(team, RunStatus.SUCCEEDED)
    client.force_login(team.member)
    page = client.get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    assert 'data-max-chars="50"' in page
    assert 'maxlength="50"' not in page
    assert "js/char_limits.js" in page

    pasted = "make the title bigger " * 3 + "END"  # 69 characters
    response = client.post(reverse("run_refine", args=[run.pk]), {"instruction": pasted})

    assert response.status_code == 400
    text = html.unescape(response.content.decode())
    assert "69 characters long, over its limit of 50" in text
    assert pasted in text  # kept whole, to shorten
    assert Run.objects.filter(creation=run.creation).count() == 1  # nothing started


def test_a_message_over_its_limit_is_refused_whole_and_the_box_counts(
    team: Team, client: Client, settings: Any
) -> None:
    settings.RUN_MESSAGE_MAX_CHARS = 20
    run = _run(team, RunStatus.RUNNING)
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert 'data-max-chars="20"' in page
    assert 'maxlength="20"' not in page
    assert "js/char_limits.js" in page

    pasted = "use the blue from the logo, END"
    response = client.post(reverse("run_message", args=[run.pk]), {"text": pasted})

    assert response.status_code == 400
    text = html.unescape(response.content.decode())
    assert f"{len(pasted)} characters long, over its limit of 20" in text
    assert pasted in text
    assert not RunMessage.objects.filter(run=run).exists()


def test_an_edited_brief_over_its_limit_is_refused_whole_and_the_box_counts(
    team: Team, client: Client, settings: Any
) -> None:
    settings.RUN_BRIEF_MAX_CHARS = 100
    run = _run(team, RunStatus.SUCCEEDED)
    client.force_login(team.member)
    page = client.get(reverse("creation_detail", args=[run.creation_id])).content.decode()
    assert 'data-max-chars="100"' in page

    pasted = "a poster for a jazz night, " * 4 + "END"  # 111 characters
    response = client.post(reverse("creation_fork", args=[run.creation_id]), {"brief": pasted})

    assert response.status_code == 400
    text = html.unescape(response.content.decode())
    assert "111 characters long, over its limit of 100" in text
    assert pasted in text
    assert Run.objects.count() == 1  # nothing started
