"""The Models page: owners and admins add, edit, test, switch off and delete
OpenAI-compatible endpoints in the browser; the key is write-only, the
address rules hold, and every mistake is a message on its field."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from creations.models import Creation
from devstack.model_script import submit
from devstack.scripted_model import ScriptedModel
from tests.support.factories import CreationFactory
from tests.support.fixtures.accounts import Team
from tests.support.trickling_server import trickling_server
from workspaces.models import ModelEndpoint, Role
from workspaces.services import membership_add

pytestmark = pytest.mark.django_db

KEY = "sk-live-team-key-7f3a9c21"
# Addresses are IP literals or localhost: checking them resolves nothing beyond this machine.


@pytest.fixture
def keyed_model() -> Iterator[ScriptedModel]:
    with ScriptedModel(api_key=KEY, exhausted=submit()) as server:
        yield server


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_data(server: ScriptedModel | None = None, /, **overrides: Any) -> dict[str, Any]:
    data = {
        "name": "Team GPT",
        "base_url": server.base_url if server else "https://127.0.0.1:9/v1",
        "model": "scripted",
        "api_key": KEY,
        "extra_body": '{"top_p": 0.9}',
        "temperature": "0.2",
        "max_tokens": "",
    }
    data.update(overrides)
    return data


def add_endpoint(client: Client, team: Team, **data: Any) -> Any:
    return client.post(reverse("endpoint_new", args=[team.workspace.slug]), data)


def test_an_owner_adds_a_model_and_the_key_is_never_shown_again(team: Team, keyed_model: ScriptedModel) -> None:
    owner = signed_in(team.owner)

    response = add_endpoint(owner, team, **form_data(keyed_model))

    assert response.status_code == 302
    endpoint = ModelEndpoint.objects.get(workspace=team.workspace)
    assert (endpoint.name, endpoint.model, endpoint.api_key) == ("Team GPT", "scripted", KEY)
    assert endpoint.extra_body == {"top_p": 0.9}
    assert endpoint.temperature == 0.2
    listing = owner.get(reverse("workspace_endpoints", args=[team.workspace.slug])).content.decode()
    assert "Team GPT" in listing
    assert "…9c21" in listing
    edit = owner.get(reverse("endpoint_edit", args=[team.workspace.slug, endpoint.pk])).content.decode()
    assert "ending in <code>9c21</code>" in edit
    for page in (listing, edit):
        assert KEY not in page
        assert KEY[:-4] not in page


def test_the_new_model_is_in_the_picker_and_switching_it_off_takes_it_out(team: Team) -> None:
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data())
    endpoint = ModelEndpoint.objects.get(workspace=team.workspace)
    new_page = reverse("creation_new", args=[team.workspace.slug])

    assert "Team GPT (scripted)" in signed_in(team.member).get(new_page).content.decode()
    owner.post(reverse("endpoint_enabled", args=[team.workspace.slug, endpoint.pk]), {"enabled": "0"})
    assert "Team GPT (scripted)" not in signed_in(team.member).get(new_page).content.decode()
    owner.post(reverse("endpoint_enabled", args=[team.workspace.slug, endpoint.pk]), {"enabled": "1"})
    assert "Team GPT (scripted)" in signed_in(team.member).get(new_page).content.decode()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("base_url", "ftp://127.0.0.1/v1", "http:// or https://"),
        ("base_url", "127.0.0.1/v1", "http:// or https://"),
        ("base_url", "https://user:secret@127.0.0.1/v1", "Leave credentials out"),
        ("base_url", "http://169.254.169.254/latest", "metadata"),
        ("base_url", "http://[fd00:ec2::254]/v1", "metadata"),
        ("base_url", "http://168.63.129.16/v1", "metadata"),
        ("base_url", "https://127.0.0.1:http/v1", "port"),
        ("extra_body", '{"top_p": 0.9', "not valid JSON"),
        ("extra_body", "[1, 2]", "JSON object"),
        ("extra_body", '{"messages": []}', "sets messages itself"),
        ("temperature", "3", "less than or equal to 2"),
        ("name", "", "required"),
    ],
)
def test_bad_input_is_named_on_its_field_and_nothing_typed_is_lost(
    team: Team, field: str, value: str, message: str
) -> None:
    data = form_data(**{field: value})

    response = add_endpoint(signed_in(team.owner), team, **data)

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    page = response.content.decode()
    for kept in ("name", "base_url", "model"):
        if kept != field and data[kept]:
            assert f'value="{data[kept]}"' in page
    assert KEY not in page  # the key is never sent back, even after a mistake
    assert "Enter the key again" in page
    assert not ModelEndpoint.objects.exists()


def test_loopback_is_refused_when_private_addresses_are_not_allowed(
    team: Team, keyed_model: ScriptedModel, settings: Any
) -> None:
    settings.MODEL_ENDPOINT_ALLOW_PRIVATE = False
    for url in (keyed_model.base_url, f"http://localhost:{keyed_model.port}/v1", "http://10.20.30.40/v1"):
        response = add_endpoint(signed_in(team.owner), team, **form_data(base_url=url))
        assert response.status_code == 400, url
        assert "private or loopback" in " ".join(response.context["form"].errors["base_url"])
    assert keyed_model.requests == []


def test_a_duplicate_name_is_refused_on_the_name(team: Team) -> None:
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data())

    response = add_endpoint(owner, team, **form_data())

    assert response.status_code == 400
    assert "already has a model called “Team GPT”" in " ".join(response.context["form"].errors["name"])


def test_a_new_base_url_needs_the_key_again(team: Team) -> None:
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data())
    endpoint = ModelEndpoint.objects.get()
    edit = reverse("endpoint_edit", args=[team.workspace.slug, endpoint.pk])

    moved = owner.post(edit, form_data(base_url="https://localhost:9/v1", api_key=""))
    assert moved.status_code == 400
    assert "enter the API key again" in " ".join(moved.context["form"].errors["api_key"])
    endpoint.refresh_from_db()
    assert endpoint.base_url == "https://127.0.0.1:9/v1"

    same_host = owner.post(edit, form_data(name="Team GPT 2", api_key=""))  # the key stays when the URL does
    assert same_host.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.name, endpoint.api_key) == ("Team GPT 2", KEY)

    rekeyed = owner.post(edit, form_data(base_url="https://localhost:9/v1", api_key="sk-new-key-for-elsewhere"))
    assert rekeyed.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.base_url, endpoint.api_key, endpoint.api_key_hint) == (
        "https://localhost:9/v1",
        "sk-new-key-for-elsewhere",
        "here",
    )


@pytest.mark.parametrize(
    ("case", "verdict", "shown"),
    [
        ("works", "works", "Works"),
        ("wrong key", "wrong_key", "refused the API key (HTTP 401)"),
        ("unknown model", "unknown_model", "does not know the model “gpt-nope”"),
        ("no tools", "no_tools", "not when given tools"),
    ],
)
def test_test_connection_gives_a_verdict_and_keeps_it(
    team: Team, keyed_model: ScriptedModel, case: str, verdict: str, shown: str
) -> None:
    overrides = {"wrong key": {"api_key": "sk-this-is-not-the-key"}, "unknown model": {"model": "gpt-nope"}}
    keyed_model.tools_supported = case != "no tools"
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data(keyed_model, **overrides.get(case, {})))
    endpoint = ModelEndpoint.objects.get()

    response = owner.post(reverse("endpoint_test", args=[team.workspace.slug, endpoint.pk]), follow=True)

    page = response.content.decode()
    assert shown in page
    endpoint.refresh_from_db()
    assert endpoint.check_verdict == verdict
    assert f"verdict-{verdict}" in page
    for raw in ("Incorrect API key provided", "does not exist", "registry.ollama.ai"):
        assert raw not in page  # the endpoint's own words never reach the page


def test_members_and_viewers_see_the_models_but_cannot_change_them(team: Team) -> None:
    add_endpoint(signed_in(team.owner), team, **form_data())
    endpoint = ModelEndpoint.objects.get()
    slug = team.workspace.slug

    for person in (team.member, team.viewer):
        client = signed_in(person)
        listing = client.get(reverse("workspace_endpoints", args=[slug]))
        assert listing.status_code == 200
        assert "Team GPT" in listing.content.decode()
        assert "Test connection" not in listing.content.decode()
        assert client.get(reverse("endpoint_new", args=[slug])).status_code == 403
        assert client.post(reverse("endpoint_new", args=[slug]), form_data(name="Mine")).status_code == 403
        assert client.get(reverse("endpoint_edit", args=[slug, endpoint.pk])).status_code == 403
        for action in ("endpoint_test", "endpoint_enabled", "endpoint_delete"):
            assert client.post(reverse(action, args=[slug, endpoint.pk]), {"enabled": "0"}).status_code == 403
    assert signed_in(team.outsider).get(reverse("workspace_endpoints", args=[slug])).status_code == 404
    endpoint.refresh_from_db()
    assert endpoint.is_enabled
    assert ModelEndpoint.objects.count() == 1


def test_an_admin_manages_models(team: Team) -> None:
    admin = User.objects.create_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)

    assert add_endpoint(signed_in(admin), team, **form_data()).status_code == 302


def test_deleting_an_unused_model_removes_it(team: Team) -> None:
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data())
    endpoint = ModelEndpoint.objects.get()

    owner.post(reverse("endpoint_delete", args=[team.workspace.slug, endpoint.pk]))

    assert not ModelEndpoint.objects.exists()


def test_deleting_a_used_model_erases_its_key_and_its_creations_keep_its_name(team: Team) -> None:
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data())
    endpoint = ModelEndpoint.objects.get()
    creation = CreationFactory.create(workspace=team.workspace, author=team.member, model_endpoint=endpoint)

    owner.post(reverse("endpoint_delete", args=[team.workspace.slug, endpoint.pk]))

    endpoint.refresh_from_db()
    assert endpoint.retired_at is not None
    assert endpoint.api_key == ""
    assert not endpoint.is_enabled
    listing = owner.get(reverse("workspace_endpoints", args=[team.workspace.slug])).content.decode()
    assert 'data-endpoint="Team GPT"' not in listing
    assert "Team GPT" in signed_in(team.member).get(creation.get_absolute_url()).content.decode()
    rerun = signed_in(team.member).post(reverse("creation_rerun", args=[creation.pk]), follow=True)
    assert "was deleted; fork with another model" in rerun.content.decode()
    assert Creation.objects.get(pk=creation.pk).runs.count() == 0
    # Its name is free again for a new endpoint.
    assert add_endpoint(owner, team, **form_data()).status_code == 302


def test_staff_see_the_hint_but_never_the_key_in_the_admin(team: Team) -> None:
    add_endpoint(signed_in(team.owner), team, **form_data())
    endpoint = ModelEndpoint.objects.get()
    staff = User.objects.create_superuser("root", "root@example.com", "pw")
    client = signed_in(staff)

    pages = [
        client.get(reverse("admin:workspaces_modelendpoint_changelist")),
        client.get(reverse("admin:workspaces_modelendpoint_change", args=[endpoint.pk])),
    ]

    for page in pages:
        assert page.status_code == 200
        assert KEY not in page.content.decode()
        assert "9c21" in page.content.decode()
    assert client.get(reverse("admin:workspaces_modelendpoint_add")).status_code == 403


@pytest.mark.alone  # measures the deadline by this machine's clock: a starved process would overrun it
def test_a_trickling_endpoint_cannot_hold_test_connection_past_its_deadline(team: Team, settings: Any) -> None:
    settings.MODEL_ENDPOINT_CHECK_TIMEOUT = 2.0  # per read: a byte every 0.5 s never trips it
    settings.MODEL_ENDPOINT_CHECK_DEADLINE = 3.0
    owner = signed_in(team.owner)
    with trickling_server(part="body", every=0.5, for_seconds=20) as url:
        add_endpoint(owner, team, **form_data(base_url=url))
        endpoint = ModelEndpoint.objects.get()
        started = time.monotonic()
        response = owner.post(reverse("endpoint_test", args=[team.workspace.slug, endpoint.pk]), follow=True)
        took = time.monotonic() - started

    assert took < 3.0 + 2
    endpoint.refresh_from_db()
    assert endpoint.check_verdict == "timeout"
    assert "did not finish answering within 3 s" in response.content.decode()


def test_test_connection_is_limited_per_workspace(team: Team, keyed_model: ScriptedModel, settings: Any) -> None:
    settings.MODEL_ENDPOINT_CHECKS_PER_MINUTE = 2
    admin = User.objects.create_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)
    owner = signed_in(team.owner)
    add_endpoint(owner, team, **form_data(keyed_model))
    endpoint = ModelEndpoint.objects.get()
    test_url = reverse("endpoint_test", args=[team.workspace.slug, endpoint.pk])
    for _ in range(2):
        assert "Works:" in owner.post(test_url, follow=True).content.decode()

    refused = signed_in(admin).post(test_url, follow=True)  # another manager: the limit is the workspace's

    page = refused.content.decode()
    assert refused.status_code == 200
    assert "Test connection was used 2 times in this workspace in the last minute" in page
    assert len(keyed_model.chat_requests()) == 2  # the endpoint was not called a third time
