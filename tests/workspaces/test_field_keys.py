"""The keys that encrypt stored API keys, on PostgreSQL: `rotate_field_keys` puts every
stored key under the newest, after which the old one can go; dumpdata writes ciphertext
and a restore of it reads back; a stored key that no configured key opens makes its model
unusable, said on the Models page and in the runs that use it, never a 500."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from creations.models import Run, RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from tests.support.api import api_as
from tests.support.fixtures.accounts import Team
from tests.support.runs import submit
from workspaces.endpoints import EndpointFields, endpoint_create
from workspaces.fields import _fernet
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.services

OLD, NEW, ELSEWHERE = (Fernet.generate_key().decode() for _ in range(3))
KEY = "sk-live-team-key-7f3a9c21"
UNREADABLE = "Its stored API key cannot be decrypted"

UseKeys = Callable[..., None]


@pytest.fixture
def use_keys(settings: Any) -> Iterator[UseKeys]:
    """FIELD_ENCRYPTION_KEYS as a restarted process would read them."""

    def use(*keys: str) -> None:
        settings.FIELD_ENCRYPTION_KEYS = list(keys)
        _fernet.reset()

    yield use
    _fernet.reset()


def add_endpoint(team: Team, *, name: str = "Team GPT") -> ModelEndpoint:
    fields = EndpointFields(name=name, base_url="https://127.0.0.1:9/v1", model="scripted", api_key=KEY)
    return endpoint_create(workspace=team.workspace, actor=team.owner, fields=fields)


def stored(endpoint: ModelEndpoint) -> str:
    """The api_key column as PostgreSQL holds it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key FROM workspaces_modelendpoint WHERE id = %s", [endpoint.pk])
        row = cursor.fetchone()
    assert row is not None
    value: str = row[0]
    return value


def store(endpoint: ModelEndpoint, value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE workspaces_modelendpoint SET api_key = %s WHERE id = %s", [value, endpoint.pk])


def opens(key: str, token: str) -> str | None:
    try:
        return Fernet(key).decrypt(token.encode()).decode()
    except InvalidToken:
        return None


@pytest.mark.django_db
def test_rotating_puts_every_stored_key_under_the_newest_and_the_old_one_can_go(team: Team, use_keys: UseKeys) -> None:
    use_keys(OLD)
    endpoints = [add_endpoint(team), add_endpoint(team, name="Other")]
    ModelEndpoint.objects.create(workspace=team.workspace, name="Keyless", base_url="http://127.0.0.1:9/v1", model="m")
    before = [stored(endpoint) for endpoint in endpoints]
    assert [opens(OLD, token) for token in before] == [KEY, KEY]

    use_keys(NEW, OLD)
    out = io.StringIO()
    call_command("rotate_field_keys", stdout=out)

    assert "Re-encrypted 2 stored secret(s) under the first key." in out.getvalue()
    assert "the other keys may be removed" in out.getvalue()
    after = [stored(endpoint) for endpoint in endpoints]
    assert [opens(NEW, token) for token in after] == [KEY, KEY]
    assert [opens(OLD, token) for token in after] == [None, None]
    assert stored(ModelEndpoint.objects.get(name="Keyless")) == ""

    use_keys(NEW)  # the old key removed
    assert [endpoint.api_key for endpoint in ModelEndpoint.objects.order_by("pk")] == [KEY, KEY, ""]
    listing = signed_in(team.owner).get(reverse("workspace_endpoints", args=[team.workspace.slug]))
    assert "…9c21" in listing.content.decode()
    assert UNREADABLE not in listing.content.decode()


@pytest.mark.django_db
def test_rotating_names_what_no_key_opens_and_leaves_it_as_it_was(team: Team, use_keys: UseKeys) -> None:
    use_keys(ELSEWHERE)
    lost = add_endpoint(team, name="Lost")
    use_keys(OLD)
    kept = add_endpoint(team)
    lost_token = stored(lost)

    use_keys(NEW, OLD)
    with pytest.raises(CommandError) as refused:
        call_command("rotate_field_keys", stdout=io.StringIO())

    assert f"workspaces.ModelEndpoint {lost.pk} (api_key)" in str(refused.value)
    assert "open with none of FIELD_ENCRYPTION_KEYS" in str(refused.value)
    assert stored(lost) == lost_token
    assert opens(NEW, stored(kept)) == KEY


@pytest.mark.django_db
@pytest.mark.parametrize("dump_format", ["json", "xml"])
def test_dumpdata_writes_ciphertext_and_loading_it_back_reads_the_key(
    team: Team, use_keys: UseKeys, tmp_path: Path, dump_format: str
) -> None:
    use_keys(NEW)
    endpoint = add_endpoint(team)
    out = io.StringIO()

    call_command("dumpdata", "workspaces.ModelEndpoint", format=dump_format, stdout=out)

    dump = out.getvalue()
    assert KEY not in dump
    assert KEY[:-4] not in dump
    if dump_format == "json":
        [row] = json.loads(dump)
        assert opens(NEW, row["fields"]["api_key"]) == KEY
    fixture = tmp_path / f"endpoints.{dump_format}"
    fixture.write_text(dump)
    ModelEndpoint.objects.all().delete()
    call_command("loaddata", str(fixture), stdout=io.StringIO())
    restored = ModelEndpoint.objects.get(pk=endpoint.pk)
    assert restored.api_key == KEY
    assert opens(NEW, stored(restored)) == KEY  # stored as dumped: encrypted once, not twice


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def unreadable_by_a_removed_key(endpoint: ModelEndpoint, use_keys: UseKeys) -> None:
    use_keys(ELSEWHERE)
    store(endpoint, Fernet(OLD).encrypt(KEY.encode()).decode())


def damaged(endpoint: ModelEndpoint, use_keys: UseKeys) -> None:
    token = stored(endpoint)
    store(endpoint, token[:40] + ("A" if token[40] != "A" else "B") + token[41:])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("spoil", [unreadable_by_a_removed_key, damaged], ids=["key removed", "row damaged"])
def test_a_stored_key_no_key_opens_makes_the_model_unusable_with_a_message_and_no_500(
    team: Team, use_keys: UseKeys, monkeypatch: pytest.MonkeyPatch, spoil: Callable[..., None]
) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: None)  # run here, not on a worker

    def no_sandbox() -> None:
        raise AssertionError("no sandbox may start")

    monkeypatch.setattr("creations.runs.execution.get_provider", no_sandbox)
    use_keys(NEW)
    endpoint = add_endpoint(team)
    earlier = submit(team, endpoint)
    spoil(endpoint, use_keys)
    slug = team.workspace.slug
    owner, member = signed_in(team.owner), signed_in(team.member)
    staff = signed_in(User.objects.create_superuser("root", "root@example.com", "pw"))

    pages = {
        "models": owner.get(reverse("workspace_endpoints", args=[slug])),
        "models, as a member": member.get(reverse("workspace_endpoints", args=[slug])),
        "model edit": owner.get(reverse("endpoint_edit", args=[slug, endpoint.pk])),
        "new creation": member.get(reverse("creation_new", args=[slug])),
        "dashboard": member.get(reverse("workspace_dashboard", args=[slug])),
        "creation": member.get(earlier.creation.get_absolute_url()),
        "run": member.get(earlier.get_absolute_url()),
        "admin list": staff.get(reverse("admin:workspaces_modelendpoint_changelist")),
        "admin page": staff.get(reverse("admin:workspaces_modelendpoint_change", args=[endpoint.pk])),
        "API runs": api_as(team.member).get("/api/v1/runs"),
        "API models": api_as(team.member).get(f"/api/v1/workspaces/{slug}/models"),
    }
    assert {name: page.status_code for name, page in pages.items()} == dict.fromkeys(pages, 200)
    models_page = pages["models"].content.decode()
    assert "Cannot be decrypted: runs with this model fail until you" in models_page
    assert "enter the key again" in models_page
    assert "until an owner or admin enters the key again" in pages["models, as a member"].content.decode()
    assert "The stored key cannot be decrypted" in pages["model edit"].content.decode()

    tested = owner.post(reverse("endpoint_test", args=[slug, endpoint.pk]), follow=True)
    assert tested.status_code == 200
    assert f"Team GPT cannot be tested. {UNREADABLE}" in tested.content.decode()

    assert run_claim_next(worker="test") == earlier.pk
    run_execute(run_id=earlier.pk)
    failed = Run.objects.get(pk=earlier.pk)
    assert failed.status == RunStatus.FAILED
    assert failed.reason.startswith(f"The model endpoint “Team GPT” cannot be used. {UNREADABLE}")
    assert "enter the API key again on the workspace's Models page" in failed.reason

    # Entering the key again mends it.
    form = {"name": "Team GPT", "base_url": endpoint.base_url, "model": "scripted", "api_key": KEY}
    assert owner.post(reverse("endpoint_edit", args=[slug, endpoint.pk]), form).status_code == 302
    assert ModelEndpoint.objects.get(pk=endpoint.pk).api_key == KEY
    assert "Cannot be decrypted" not in owner.get(reverse("workspace_endpoints", args=[slug])).content.decode()


REFUSED = f"The model “Team GPT” cannot be used. {UNREADABLE}"


@pytest.mark.django_db
@pytest.mark.parametrize("spoil", [unreadable_by_a_removed_key, damaged], ids=["key removed", "row damaged"])
def test_a_model_whose_key_cannot_be_read_is_refused_at_submit_saying_to_enter_it_again(
    team: Team, use_keys: UseKeys, monkeypatch: pytest.MonkeyPatch, spoil: Callable[..., None]
) -> None:
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id=None: None)
    use_keys(NEW)
    endpoint = add_endpoint(team)
    earlier = submit(team, endpoint)
    Run.objects.filter(pk=earlier.pk).update(status=RunStatus.SUCCEEDED, finished_at=earlier.created_at)
    spoil(endpoint, use_keys)
    slug = team.workspace.slug
    runs_before = Run.objects.count()

    form = signed_in(team.member).post(
        reverse("creation_new", args=[slug]),
        {"brief": "A map of these stops", "visibility": "workspace", "model": str(endpoint.pk)},
    )
    assert form.status_code == 400
    page = form.content.decode()
    assert REFUSED in page
    assert "enter the API key again on the workspace&#x27;s Models page" in page
    assert "A map of these stops</textarea>" in page  # what was typed is kept

    api = api_as(team.member).post(
        f"/api/v1/workspaces/{slug}/runs", {"brief": "A map of these stops", "model_endpoint_id": endpoint.pk}
    )
    assert api.status_code == 422
    assert api["Content-Type"] == "application/problem+json"
    problem = api.json()
    assert problem["detail"].startswith(REFUSED)
    assert "enter the API key again on the workspace's Models page" in problem["detail"]
    assert [error["field"] for error in problem["errors"]] == ["model_endpoint"]

    member = signed_in(team.member)  # run again, refine and fork of a creation on that model: refused too
    rerun = member.post(reverse("creation_rerun", args=[earlier.creation_id]), follow=True)
    assert REFUSED in rerun.content.decode()
    refine = member.post(reverse("run_refine", args=[earlier.pk]), {"instruction": "make it red"})
    assert REFUSED in refine.content.decode()
    assert "make it red</textarea>" in refine.content.decode()
    fork = member.post(reverse("creation_fork", args=[earlier.creation_id]), {"brief": "The same, in blue"})
    assert REFUSED in fork.content.decode()
    assert "The same, in blue</textarea>" in fork.content.decode()
    assert Run.objects.count() == runs_before
