"""An endpoint added in the browser makes a real run (Celery worker, gVisor
sandbox, the scripted model over HTTP), and its key appears nowhere a person
or a log reader could see it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx2
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from creations.models import Creation, RunEvent, RunStatus
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import per_conversation, wait_for_final
from workspaces.models import ModelEndpoint

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

KEY = "sk-proj-QmV5b25kIHRoZSBzYW5kYm94-2c71"


@pytest.fixture
def keyed_model() -> Iterator[ScriptedModel]:
    steps = [
        bash("mkdir -p /testbed/output && echo hello > /testbed/output/hello.txt"),
        submit_reply("Made hello.txt."),
    ]
    with ScriptedModel(api_key=KEY, exhausted=per_conversation(steps)) as server:
        yield server


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def served(stack: AtelierServer, user: User, path: str) -> str:
    """A page as the running server sends it (streamed responses included), on the
    platform's host name (the test stack's 127.0.0.1 is its artifact origin)."""
    response = httpx2.get(
        f"http://localhost:{stack.port}{path}", headers={"Cookie": stack.cookie_for(user)}, timeout=30
    )
    assert response.status_code == 200, path
    return response.text


def everything_visible(stack: AtelierServer, team: Team, creation: Creation, endpoint: ModelEndpoint) -> dict[str, str]:
    """Every page, JSON and admin screen where the endpoint or its run shows up."""
    slug, run = team.workspace.slug, creation.runs.get()
    member, owner = signed_in(team.member), signed_in(team.owner)
    staff = signed_in(User.objects.create_superuser("root", "root@example.com", "pw"))
    pages = {
        "dashboard": member.get(reverse("workspace_dashboard", args=[slug])),
        "models": owner.get(reverse("workspace_endpoints", args=[slug])),
        "model edit": owner.get(reverse("endpoint_edit", args=[slug, endpoint.pk])),
        "new creation": member.get(reverse("creation_new", args=[slug])),
        "creation": member.get(creation.get_absolute_url()),
        "run": member.get(run.get_absolute_url()),
        "run steps": member.get(reverse("run_steps", args=[run.pk])),
        "artifacts": member.get(reverse("run_artifacts", args=[run.pk])),
        "gallery": member.get(reverse("workspace_gallery", args=[slug])),
        "admin list": staff.get(reverse("admin:workspaces_modelendpoint_changelist")),
        "admin page": staff.get(reverse("admin:workspaces_modelendpoint_change", args=[endpoint.pk])),
        "admin creation": staff.get(reverse("admin:creations_creation_change", args=[creation.pk])),
    }
    seen = {}
    for name, response in pages.items():
        assert response.status_code == 200, name
        seen[name] = response.content.decode()
    seen["trajectory"] = served(stack, team.member, reverse("run_trajectory_json", args=[run.pk]))
    seen["events"] = json.dumps([e.payload for e in RunEvent.objects.filter(run=run)])
    seen["run reason"] = run.reason
    return seen


def test_a_model_added_in_the_browser_makes_a_run_and_its_key_stays_secret(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    keyed_model: ScriptedModel,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    owner, slug = signed_in(team.owner), team.workspace.slug
    added = owner.post(
        reverse("endpoint_new", args=[slug]),
        {"name": "Team model", "base_url": keyed_model.base_url, "model": "scripted", "api_key": KEY},
    )
    assert added.status_code == 302
    endpoint = ModelEndpoint.objects.get(workspace=team.workspace)
    tested = owner.post(reverse("endpoint_test", args=[slug, endpoint.pk]), follow=True)
    assert "Works" in tested.content.decode()

    submitted = signed_in(team.member).post(
        reverse("creation_new", args=[slug]),
        {"brief": "say hello in a file", "model": str(endpoint.pk), "visibility": "workspace"},
    )
    assert submitted.status_code == 302, submitted.content.decode()[:2000]
    creation = Creation.objects.get(workspace=team.workspace)
    run = wait_for_final(creation.runs.get(), logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert run.started_by == team.member
    assert [a.path for a in run.artifacts.all()] == ["hello.txt"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in keyed_model.chat_requests())
    visible = everything_visible(run_stack, team, creation, endpoint)
    visible["this process's logs"] = caplog.text
    for name, process in run_stack.processes.items():
        visible[f"{name} log"] = process.log_path.read_text(errors="replace")
    for where, text in visible.items():
        assert KEY not in text, f"the key appears in the {where}"
        assert KEY[3:-4] not in text, f"most of the key appears in the {where}"


def test_a_wrong_key_ends_the_run_with_a_clear_reason_and_nothing_of_the_endpoints_reply(
    run_stack: AtelierServer, sandbox_image: str, team: Team, keyed_model: ScriptedModel
) -> None:
    owner, slug = signed_in(team.owner), team.workspace.slug
    wrong = "sk-proj-not-the-key-but-close-1234"
    owner.post(
        reverse("endpoint_new", args=[slug]),
        {"name": "Team model", "base_url": keyed_model.base_url, "model": "scripted", "api_key": wrong},
    )
    endpoint = ModelEndpoint.objects.get(workspace=team.workspace)
    signed_in(team.member).post(
        reverse("creation_new", args=[slug]),
        {"brief": "say hello in a file", "model": str(endpoint.pk), "visibility": "workspace"},
    )
    run = wait_for_final(Creation.objects.get(workspace=team.workspace).runs.get(), logs=run_stack.logs)

    assert run.status == RunStatus.FAILED
    assert "refused the API key (HTTP 401)" in run.reason
    page = signed_in(team.member).get(run.get_absolute_url()).content.decode()
    assert "refused the API key (HTTP 401)" in page
    for secret in (wrong, "Incorrect API key provided"):
        assert secret not in page
        assert secret not in run.reason
