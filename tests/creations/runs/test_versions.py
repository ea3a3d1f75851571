"""A creation's versions without a worker: refine, restore and messages to a running agent,
who may, what is written, what the gallery shows and what a refine's model is told."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run, RunMessage, RunStatus
from creations.runs.messages import run_message_send, run_messages_take
from creations.runs.services import creation_restore_version, creation_submit, run_refine, run_rerun
from creations.runs.state import run_finish
from creations.runs.versions import run_continuation
from creations.web.gallery import gallery_page
from sandboxes.agent import EarlierVersion, demo_follow_ups
from sandboxes.agent.prompts import earlier_messages, refine_message
from tests.support.artifacts import Output, add_artifact
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db

BRIEF = "a poster for a jazz night"


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda *args, **kwargs: None)


@pytest.fixture
def endpoint(team: Team) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        workspace=team.workspace, name="team model", base_url="http://127.0.0.1:9/v1", model="m"
    )


def _finished(run: Run, status: RunStatus = RunStatus.SUCCEEDED, summary: str = "") -> Run:
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    assert run_finish(run_id=run.pk, status=status, reason="ended", summary=summary)
    run.refresh_from_db()
    return run


def _v1(team: Team, endpoint: ModelEndpoint | None, summary: str = "A poster in red.") -> Run:
    run = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    return _finished(run, summary=summary)


def test_a_refine_is_the_next_version_continuing_from_the_one_refined(team: Team, endpoint: ModelEndpoint) -> None:
    v1 = _v1(team, endpoint)
    v2 = run_refine(run=v1, user=team.owner, instruction="  make the title bigger ")
    assert (v2.version, v2.parent, v2.instruction, v2.started_by, v2.status) == (
        2,
        v1,
        "make the title bigger",
        team.owner,
        RunStatus.QUEUED,
    )
    _finished(v2)
    v3 = run_rerun(creation=v1.creation, user=team.member)
    assert (v3.version, v3.parent, v3.instruction) == (3, None, "")
    branch = run_refine(run=v1, user=team.member, instruction="in blue")
    assert (branch.version, branch.parent) == (4, v1)


@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_only_those_who_may_start_runs_refine(team: Team, endpoint: ModelEndpoint, who: str) -> None:
    v1 = _v1(team, endpoint)
    with pytest.raises(PermissionDenied):
        run_refine(run=v1, user=getattr(team, who), instruction="bigger")
    assert Run.objects.filter(creation=v1.creation).count() == 1


@pytest.mark.parametrize(
    ("instruction", "says"), [("   ", "Say what should change"), ("x" * 5000, "too long")]
)
def test_a_refine_needs_an_instruction_of_a_sensible_length(
    team: Team, endpoint: ModelEndpoint, instruction: str, says: str
) -> None:
    v1 = _v1(team, endpoint)
    with pytest.raises(ValidationError) as refused:
        run_refine(run=v1, user=team.member, instruction=instruction)
    assert says in " ".join(refused.value.message_dict["instruction"])


def test_a_version_still_going_cannot_be_refined(team: Team, endpoint: ModelEndpoint) -> None:
    running = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    with pytest.raises(ValidationError, match="v1 is still going"):
        run_refine(run=running, user=team.member, instruction="bigger")


def test_the_demo_model_takes_only_its_recorded_follow_ups_and_says_so(team: Team) -> None:
    poster = "a poster for a tech conference from this event JSON"
    v1 = _finished(creation_submit(workspace=team.workspace, author=team.member, brief=poster))
    recorded = demo_follow_ups(poster)
    assert recorded
    with pytest.raises(ValidationError) as refused:
        run_refine(run=v1, user=team.member, instruction="add a dragon")
    sentence = " ".join(refused.value.message_dict["instruction"])
    assert recorded[0].rstrip(".") in sentence
    assert Run.objects.filter(creation=v1.creation).count() == 1  # nothing queued
    v2 = _finished(run_refine(run=v1, user=team.member, instruction=recorded[0].upper()))
    assert v2.version == 2
    with pytest.raises(ValidationError, match="already a refine"):
        run_refine(run=v2, user=team.member, instruction=recorded[0])


def test_a_success_is_shown_a_later_failure_is_not_and_restore_chooses(team: Team, endpoint: ModelEndpoint) -> None:
    v1 = _v1(team, endpoint)
    add_artifact(v1, Output("poster.png", png_bytes(8, 8)))
    v2 = _finished(run_refine(run=v1, user=team.member, instruction="bigger"))
    add_artifact(v2, Output("poster-big.png", png_bytes(16, 16)))
    v3 = _finished(run_refine(run=v2, user=team.member, instruction="broken"), status=RunStatus.FAILED)

    def gallery() -> list[str]:
        return [a.path for a in gallery_page(user=team.member, workspace=team.workspace, size=10).items]

    assert Creation.objects.get(pk=v1.creation_id).shown_run_id == v2.pk
    assert gallery() == ["poster-big.png"]  # the creation once, at its shown version
    with pytest.raises(PermissionDenied):
        creation_restore_version(creation=v1.creation, run=v1, user=team.viewer)
    creation_restore_version(creation=v1.creation, run=v1, user=team.member)
    assert gallery() == ["poster.png"]
    assert Run.objects.filter(creation=v1.creation).count() == 3  # nothing deleted
    assert v3.status == RunStatus.FAILED


def test_a_refine_carries_briefs_and_summaries_never_tool_output_and_stays_bounded(
    team: Team, endpoint: ModelEndpoint
) -> None:
    v1 = _v1(team, endpoint, summary="S" * 1_000_000)  # a runaway summary is clipped too
    parent = v1
    for number in range(2, 42):
        refined = run_refine(run=parent, user=team.member, instruction=f"change {number}")
        parent = _finished(refined, summary=f"did {number}")
    latest = run_refine(run=parent, user=team.member, instruction="make the title bigger")
    continuation = run_continuation(latest)
    assert continuation is not None
    assert continuation.from_version == 41
    messages = earlier_messages(continuation)
    sent = json.dumps([*messages, {"role": "user", "content": refine_message(continuation)}])
    assert BRIEF in sent
    assert "did 41" in sent
    assert "make the title bigger" in sent
    assert len(sent) < 40_000


def test_earlier_versions_pair_each_request_with_its_summary() -> None:
    from sandboxes.agent import Continuation

    continuation = Continuation(
        instruction="bigger", from_version=1, earlier=[EarlierVersion(request="a poster", summary="A red poster.")]
    )
    assert earlier_messages(continuation) == [
        {"role": "user", "content": "a poster"},
        {"role": "assistant", "content": "A red poster."},
    ]


# --- messages to a running agent -------------------------------------------------------


def test_a_message_waits_for_the_agent_and_is_taken_once(team: Team, endpoint: ModelEndpoint) -> None:
    run = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    run_message_send(run=run, user=team.member, text=" sign it ")
    run_message_send(run=run, user=team.owner, text="and date it")
    taken = run_messages_take(run_id=run.pk)
    assert [(m.author, m.text) for m in taken] == [(team.member, "sign it"), (team.owner, "and date it")]
    assert run_messages_take(run_id=run.pk) == []


def test_viewers_watch_and_ended_runs_hear_nothing(team: Team, endpoint: ModelEndpoint) -> None:
    run = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    with pytest.raises(PermissionDenied):
        run_message_send(run=run, user=team.viewer, text="hello")
    _finished(run)
    with pytest.raises(ValidationError, match="has ended"):
        run_message_send(run=run, user=team.member, text="hello")
    assert not RunMessage.objects.exists()


def test_messages_pile_up_only_so_far(team: Team, endpoint: ModelEndpoint, settings: Any) -> None:
    settings.RUN_MESSAGES_MAX_PENDING = 2
    run = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    run_message_send(run=run, user=team.member, text="one")
    run_message_send(run=run, user=team.member, text="two")
    with pytest.raises(ValidationError, match="already waiting"):
        run_message_send(run=run, user=team.member, text="three")


# --- the pages ------------------------------------------------------------------------------


def test_the_creation_page_lists_versions_and_refines_from_a_form(
    team: Team, endpoint: ModelEndpoint, client: Client
) -> None:
    v1 = _v1(team, endpoint)
    _finished(run_refine(run=v1, user=team.owner, instruction="make the title bigger"))
    client.force_login(team.member)
    page = client.get(reverse("creation_detail", args=[v1.creation_id])).content.decode()
    assert "v2" in page
    assert "make the title bigger" in page
    assert "What should change?" in page
    assert team.owner.username in page
    response = client.post(reverse("run_refine", args=[v1.pk]), {"instruction": "x" * 5000})
    assert response.status_code == 400
    assert "5,000 characters long, over its limit of" in response.content.decode()
    response = client.post(reverse("run_refine", args=[v1.pk]), {"instruction": "in blue"})
    v3 = Run.objects.get(creation=v1.creation, version=3)
    assert response["Location"] == v3.get_absolute_url()
    assert v3.parent == v1


def test_a_viewer_sees_versions_but_no_refine_box(team: Team, endpoint: ModelEndpoint, client: Client) -> None:
    v1 = _v1(team, endpoint)
    client.force_login(team.viewer)
    page = client.get(reverse("creation_detail", args=[v1.creation_id])).content.decode()
    assert "v1" in page
    assert "What should change?" not in page


def test_the_run_page_offers_a_message_box_while_it_runs(
    team: Team, endpoint: ModelEndpoint, client: Client
) -> None:
    run = creation_submit(workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint)
    client.force_login(team.member)
    assert "Tell the agent" in client.get(run.get_absolute_url()).content.decode()
    response = client.post(reverse("run_message", args=[run.pk]), {"text": "sign it"})
    assert response["Location"] == run.get_absolute_url()
    assert RunMessage.objects.get(run=run).text == "sign it"
    client.force_login(team.viewer)
    assert "Tell the agent" not in client.get(run.get_absolute_url()).content.decode()


def test_a_refine_carries_which_input_files_were_renamed(team: Team, endpoint: ModelEndpoint) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("stops: autumn?.csv", b"name,lat,lon\n")
    v1 = creation_submit(
        workspace=team.workspace, author=team.member, brief=BRIEF, model_endpoint=endpoint, files=[upload]
    )
    v2 = run_refine(run=_finished(v1), user=team.member, instruction="bigger pins")

    continuation = run_continuation(v2)

    assert continuation is not None
    assert continuation.renamed_inputs == {"stops_ autumn_.csv": "stops: autumn?.csv"}
