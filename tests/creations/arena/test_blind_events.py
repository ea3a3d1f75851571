"""A blind comparison's runs name no model in their events either, to whoever has not voted in it:
a run that could not start says why in its final status event ("The model endpoint “…” is
disabled"), and a provider's error names the model it was asked for. The events page of the API,
its live stream (Server-Sent Events), the run's websocket, the run page's steps, the export, the
full text of one field, the versions list, the notifications and the webhooks' payloads each tell
these without the name; once the person has voted, each names it (webhooks, read by no one in
particular, never do)."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.urls import reverse

from config.routing import websocket_urlpatterns
from creations.arena.models import Comparison, Contestant
from creations.events.store import store_events
from creations.models import Run, RunEvent, RunStatus
from creations.notifications.models import Notification
from creations.notifications.services import follow_set
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from creations.runs.services import creation_fork
from creations.runs.state import run_finish
from creations.webhooks.models import WebhookDelivery
from creations.webhooks.services import webhook_create
from tests.support.api import api_as
from tests.support.arena import a_comparison, team_models
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in
from tests.support.sharing import body
from workspaces.models import ModelEndpoint

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse")]

DISABLED = "The model endpoint “{}” is disabled in this workspace."


def _named(text: str, model: ModelEndpoint) -> bool:
    return model.name in text or model.model in text


def _refused(comparison: Comparison, models: list[ModelEndpoint]) -> None:
    """Each contestant's run is claimed by a worker and cannot start: its endpoint is disabled."""
    ModelEndpoint.objects.filter(pk__in=[m.pk for m in models]).update(is_enabled=False)
    for _ in models:
        run_id = run_claim_next(worker="test")
        assert run_id is not None
        run_execute(run_id=run_id)
    assert set(comparison.contestants.values_list("run__status", flat=True)) == {RunStatus.FAILED}


@pytest.fixture
def refused(team: Team, django_capture_on_commit_callbacks: Any) -> tuple[Comparison, Contestant, ModelEndpoint]:
    """A blind comparison whose runs could not start, a webhook told of it, and its contestant A with A's model."""
    models = team_models(team.workspace, 2)
    webhook_create(workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/hook", events=["run.failed"])
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    with django_capture_on_commit_callbacks(execute=True):
        _refused(comparison, models)
    return comparison, comparison.contestants.get(position=0), models[0]


@pytest.fixture
def provider_error(team: Team) -> tuple[Comparison, Contestant, ModelEndpoint]:
    """A blind comparison whose contestant A's provider refused it, naming the model, in an error event."""
    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    for contestant in comparison.contestants.select_related("model_endpoint"):
        Run.objects.filter(pk=contestant.run_id).update(status=RunStatus.RUNNING)
        said = f"Error code: 404 - The model `{contestant.model_endpoint.model}` does not exist"
        store_events(contestant.run_id, [("step_started", {"step": 1, "remaining": 9})])
        store_events(contestant.run_id, [("error", {"step": 1, "message": said})])
        run_finish(run_id=contestant.run_id, status=RunStatus.FAILED, reason=f"The model stopped answering: {said}")
    return comparison, comparison.contestants.get(position=0), models[0]


def _vote(client: Client, comparison: Comparison) -> None:
    assert client.post(reverse("comparison_vote", args=[comparison.pk]), {"winner": "A"}).status_code == 302


def _final_reason(events: list[dict[str, Any]]) -> str:
    (final,) = [e for e in events if e["kind"] == "status" and e["payload"]["final"]]
    return str(final["payload"]["reason"])


def _api_events(team_user: Any, run_id: int) -> list[dict[str, Any]]:
    response = api_as(team_user).get(f"/api/v1/runs/{run_id}/events")
    assert response.status_code == 200
    return list(response.json()["events"])


def _sse_events(team_user: Any, run_id: int) -> list[dict[str, Any]]:
    """The run's events as its Server-Sent Events stream tells them (the run is over: the stream ends)."""
    response = api_as(team_user).get(f"/api/v1/runs/{run_id}/events/stream")
    assert response.status_code == 200
    body = b"".join(response).decode()
    return [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith('data: {"seq"')]


def _socket_events(user: Any, run_id: int) -> list[dict[str, Any]]:
    """The run's events as its websocket (the routes the server has) tells them, until it closes."""

    async def read() -> list[dict[str, Any]]:
        socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run_id}/")
        socket.scope["client"] = ("127.0.0.1", 50000)
        socket.scope["user"] = user
        connected, _ = await socket.connect(timeout=10)
        assert connected
        events: list[dict[str, Any]] = []
        while True:
            message = await socket.receive_output(timeout=10)
            if message["type"] == "websocket.close":
                return events
            events.append(json.loads(message["text"]))

    return async_to_sync(read)()


# The stream and the socket read in threads of their own: the rows must be committed.
@pytest.mark.django_db(transaction=True)
def test_the_reason_a_run_could_not_start_is_told_in_its_events_only_after_your_vote(
    team: Team, refused: Any, client: Client
) -> None:
    comparison, contestant, model = refused
    run_id = contestant.run_id
    told = DISABLED.format(model.name)
    assert Run.objects.get(pk=run_id).reason == told  # the endpoint's name, as the worker wrote it
    hidden = DISABLED.format("(hidden)")
    readers = {"events": _api_events, "stream": _sse_events, "socket": _socket_events}
    for name, read in readers.items():
        events = read(team.member, run_id)
        assert not _named(json.dumps(events, ensure_ascii=False), model), name
        assert _final_reason(events) == hidden, name

    _vote(signed_in(client, team.member), comparison)
    for name, read in readers.items():
        assert _final_reason(read(team.member, run_id)) == told, name
        # Who has not voted is still told nothing.
        assert _final_reason(read(team.owner, run_id)) == hidden, name


@pytest.mark.django_db(transaction=True)
def test_a_providers_error_naming_the_model_is_told_only_after_your_vote(
    team: Team, provider_error: Any, client: Client
) -> None:
    comparison, contestant, model = provider_error
    run_id = contestant.run_id
    member = signed_in(client, team.member)
    error_seq = RunEvent.objects.get(run_id=run_id, kind="error").seq

    def told(user: Any, browser: Client) -> dict[str, str]:
        export: Any = browser.get(reverse("run_trajectory_json", args=[run_id]))
        return {
            "events": json.dumps(_api_events(user, run_id), ensure_ascii=False),
            "stream": json.dumps(_sse_events(user, run_id), ensure_ascii=False),
            "socket": json.dumps(_socket_events(user, run_id), ensure_ascii=False),
            "run page": html.unescape(browser.get(reverse("run_detail", args=[run_id])).content.decode()),
            "creation page": html.unescape(browser.get(contestant.creation.get_absolute_url()).content.decode()),
            "export": b"".join(export).decode(),
            "the whole message": browser.get(
                reverse("run_event_overflow", args=[run_id, error_seq, "message"])
            ).content.decode(),
            "versions": api_as(user).get(f"/api/v1/runs/{run_id}/versions").content.decode(),
        }

    before = told(team.member, member)
    assert {name: _named(text, model) for name, text in before.items()} == dict.fromkeys(before, False)
    assert "The model `(hidden)` does not exist" in before["run page"]
    assert before["the whole message"] == "Error code: 404 - The model `(hidden)` does not exist"

    _vote(member, comparison)
    after = told(team.member, member)
    assert {name: model.model in text for name, text in after.items()} == dict.fromkeys(after, True)
    owner = told(team.owner, signed_in(Client(), team.owner))
    assert {name: _named(text, model) for name, text in owner.items()} == dict.fromkeys(owner, False)


def test_webhooks_are_never_told_a_blind_contestants_model(refused: Any) -> None:
    model = refused[2]
    payloads = list(WebhookDelivery.objects.values_list("payload", flat=True))
    assert len(payloads) == 2
    assert not any(_named(json.dumps(p, ensure_ascii=False), model) for p in payloads)
    assert DISABLED.format("(hidden)") in {p["data"]["run"]["reason"] for p in payloads}


def test_webhooks_are_told_an_open_comparisons_model(team: Team, django_capture_on_commit_callbacks: Any) -> None:
    models = team_models(team.workspace, 2)
    webhook_create(workspace=team.workspace, user=team.owner, url="http://127.0.0.1:9/hook", events=["run.failed"])
    comparison = a_comparison(team.workspace, team.owner, models, blind=False)
    with django_capture_on_commit_callbacks(execute=True):
        _refused(comparison, models)
    reasons = {p["data"]["run"]["reason"] for p in WebhookDelivery.objects.values_list("payload", flat=True)}
    assert reasons == {DISABLED.format(m.name) for m in models}


def test_a_runs_notification_names_the_model_only_to_who_has_voted(
    team: Team, refused: Any, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    comparison, contestant, model = refused
    # Who asked for the comparison heard of its runs before anyone could vote.
    bodies = set(Notification.objects.filter(recipient=team.owner).values_list("body", flat=True))
    assert bodies == {DISABLED.format("(hidden)")}

    _vote(signed_in(client, team.member), comparison)
    ModelEndpoint.objects.filter(pk=model.pk).update(is_enabled=True)  # a fork keeps an enabled model only
    fork = creation_fork(creation=contestant.creation, user=team.member, brief="The same, in red")
    assert fork.creation.model_endpoint_id == model.pk
    ModelEndpoint.objects.filter(pk=model.pk).update(is_enabled=False)
    follow_set(creation=fork.creation, user=team.owner, following=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert run_claim_next(worker="test") == fork.pk
        run_execute(run_id=fork.pk)
    told = dict(Notification.objects.filter(run=fork).values_list("recipient__username", "body"))
    assert told == {team.member.username: DISABLED.format(model.name), team.owner.username: DISABLED.format("(hidden)")}


def test_a_providers_long_error_kept_in_a_file_is_told_without_the_model_and_bounded_until_your_vote(
    team: Team, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from creations.web.views import runs as run_views

    models = team_models(team.workspace, 2)
    comparison = a_comparison(team.workspace, team.owner, models, blind=True)
    contestant = comparison.contestants.get(position=0)
    said = "x" * 50_000 + f" The model `{models[0].model}` does not exist. " + "y" * 50_000
    for each in comparison.contestants.all():
        Run.objects.filter(pk=each.run_id).update(status=RunStatus.RUNNING)
        store_events(each.run_id, [("step_started", {"step": 1, "remaining": 9})])
        store_events(each.run_id, [("error", {"step": 1, "message": said})])
        run_finish(run_id=each.run_id, status=RunStatus.FAILED, reason="The model stopped answering.")
    error = RunEvent.objects.get(run_id=contestant.run_id, kind="error")
    assert "message" in error.payload["overflow"], "too long for the event: kept in a file"
    url = reverse("run_event_overflow", args=[contestant.run_id, error.seq, "message"])
    member = signed_in(client, team.member)

    assert member.get(url).content.decode() == said.replace(models[0].model, "(hidden)")
    monkeypatch.setattr(run_views, "HIDDEN_NAMES_READ_MAX_BYTES", 60_000)
    cut = member.get(url).content.decode()
    assert cut.startswith("x" * 50_000 + " The model `(hidden)` does not exist. ")
    assert "y" * 50_000 not in cut
    assert cut.endswith("Vote in its comparison to read it all.")

    _vote(member, comparison)
    assert body(member.get(url)).decode() == said
