"""Submitting, cancelling, running again and forking: who may, and what is written."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from creations.models import Creation, InputFile, Run, RunStatus, Visibility
from creations.runs.services import creation_fork, creation_submit, run_cancel, run_rerun
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint
from workspaces.services import workspace_create

pytestmark = pytest.mark.django_db


def _submit(team: Team, user: Any = None, **kwargs: Any) -> Run:
    kwargs.setdefault("brief", "a poster for a jazz night")
    return creation_submit(workspace=team.workspace, author=user or team.member, **kwargs)


def test_submitting_writes_a_queued_run_and_enqueues_it_after_commit(
    team: Team, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    enqueued: list[int] = []
    monkeypatch.setattr("creations.runs.queue.send_wake_up", enqueued.append)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = _submit(team, files=[SimpleUploadedFile("../../etc/data.csv", b"a,b\n1,2\n")], title=" Jazz ")
        assert enqueued == []  # not before commit
    for callback in callbacks:
        callback()
    assert enqueued == [run.pk]
    assert run.status == RunStatus.QUEUED
    assert run.creation.title == "Jazz"
    assert run.creation.author == team.member
    (input_file,) = InputFile.objects.filter(creation=run.creation)
    assert (input_file.name, input_file.size) == ("data.csv", 8)
    assert input_file.file.read() == b"a,b\n1,2\n"


@pytest.mark.parametrize("who", ["viewer", "outsider"])
def test_only_roles_that_create_may_submit(team: Team, who: str) -> None:
    with pytest.raises(PermissionDenied):
        _submit(team, getattr(team, who))
    assert not Creation.objects.exists()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"brief": "   "}, "brief"),
        ({"brief": "x" * 30_000}, "brief"),
        ({"visibility": "everyone"}, "visibility"),
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 10_000}, "max_steps"),
        ({"max_seconds": 10**9}, "max_seconds"),
        ({"files": [SimpleUploadedFile("a.txt", b"1"), SimpleUploadedFile("a.txt", b"2")]}, "files"),
        ({"files": [SimpleUploadedFile("...", b"1")]}, "files"),
    ],
)
def test_bad_submissions_get_a_clear_error_and_write_nothing(team: Team, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as error:
        _submit(team, **kwargs)
    assert field in error.value.message_dict
    assert not Creation.objects.exists()


def test_a_model_from_another_workspace_is_refused(team: Team) -> None:
    other = workspace_create(name="Elsewhere", owner=team.outsider)
    endpoint = ModelEndpoint.objects.create(workspace=other, name="x", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValidationError) as error:
        _submit(team, model_endpoint=endpoint)
    assert "model_endpoint" in error.value.message_dict


def test_cancelling_a_queued_run_ends_it_at_once(team: Team) -> None:
    run = make_run(team, started_by=team.member)
    assert run_cancel(run=run, user=team.member)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.cancel_requested_at is not None
    assert run.reason == "Cancelled by bob before it started."
    assert not run_cancel(run=run, user=team.member)  # already ended


def test_the_reason_names_the_canceller_by_full_name_when_known(team: Team) -> None:
    team.member.first_name, team.member.last_name = "Bob", "Marley"
    team.member.save()
    run = make_run(team, started_by=team.member)
    run_cancel(run=run, user=team.member)
    run.refresh_from_db()
    assert (run.reason, run.cancelled_by) == ("Cancelled by Bob Marley before it started.", team.member)


def test_cancelling_a_running_run_asks_its_worker(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    assert run_cancel(run=run, user=team.owner)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.cancel_requested_at is not None


def test_a_viewer_cannot_cancel(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    with pytest.raises(PermissionDenied):
        run_cancel(run=run, user=team.viewer)


def test_a_member_cancels_only_the_runs_they_started(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)  # started by the owner
    with pytest.raises(PermissionDenied, match="runs you started"):
        run_cancel(run=run, user=team.member)
    run.refresh_from_db()
    assert run.cancel_requested_at is None


def test_owners_and_admins_cancel_any_run_even_of_a_private_creation(team: Team) -> None:
    from tests.support.fixtures.accounts import make_user
    from workspaces.models import Role
    from workspaces.services import membership_add

    admin = make_user("ada")
    membership_add(workspace=team.workspace, user=admin, role=Role.ADMIN)
    private = make_run(team, status=RunStatus.RUNNING, visibility=Visibility.PRIVATE, started_by=team.member)
    private.creation.author = team.member
    private.creation.save()
    assert run_cancel(run=private, user=admin)
    private.refresh_from_db()
    assert private.cancelled_by == admin


def test_every_run_records_who_started_it(team: Team) -> None:
    first = _submit(team)
    assert first.started_by == team.member
    again = run_rerun(creation=first.creation, user=team.owner)
    assert again.started_by == team.owner
    fork = creation_fork(creation=first.creation, user=team.owner, brief="another take")
    assert fork.started_by == team.owner
    client = Client()
    client.force_login(team.member)
    page = client.get(f"/runs/{again.pk}/").content.decode()
    assert '<dd data-role="started-by">alice</dd>' in page


def test_run_again_makes_a_new_queued_run_of_the_same_creation(team: Team) -> None:
    first = make_run(team, status=RunStatus.RUNNING)
    again = run_rerun(creation=first.creation, user=team.member)
    assert again.pk != first.pk
    assert again.creation_id == first.creation_id
    assert again.status == RunStatus.QUEUED
    with pytest.raises(PermissionDenied):
        run_rerun(creation=first.creation, user=team.viewer)


def test_a_fork_keeps_the_inputs_and_points_back(team: Team) -> None:
    original = _submit(team, files=[SimpleUploadedFile("song.mid", b"MThd")], max_steps=5).creation
    run = creation_fork(creation=original, user=team.owner, brief="the same, but slower")
    fork = run.creation
    assert fork.forked_from == original
    assert fork.author == team.owner
    assert fork.brief == "the same, but slower"
    assert fork.max_steps == 5
    assert [(f.name, f.file.read()) for f in fork.inputs.all()] == [("song.mid", b"MThd")]


def test_a_public_creation_can_be_forked_into_the_forkers_own_workspace(team: Team) -> None:
    original = _submit(team, visibility=Visibility.PUBLIC).creation
    mine = workspace_create(name="Mine", owner=team.outsider)
    run = creation_fork(creation=original, user=team.outsider, brief="my version", workspace=mine)
    assert run.creation.workspace == mine
    assert run.creation.visibility == Visibility.WORKSPACE
    with pytest.raises(PermissionDenied):  # but not into the original's workspace
        creation_fork(creation=original, user=team.outsider, brief="sneaky")


@pytest.mark.parametrize(
    ("who", "status"), [("owner", 202), ("member", 202), ("viewer", 403), ("outsider", 404), ("anonymous", 302)]
)
def test_the_cancel_endpoint_answers_by_role(team: Team, who: str, status: int) -> None:
    run = make_run(team, status=RunStatus.RUNNING, started_by=team.member)
    client = Client()
    if who != "anonymous":
        client.force_login(getattr(team, who))
    response = client.post(f"/runs/{run.pk}/cancel/", HTTP_ACCEPT="application/json")
    assert response.status_code == status
    run.refresh_from_db()
    assert (run.cancel_requested_at is not None) == (status == 202)


def test_the_cancel_endpoint_refuses_get(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING)
    client = Client()
    client.force_login(team.owner)
    assert client.get(f"/runs/{run.pk}/cancel/").status_code == 405


def test_a_form_post_to_cancel_returns_to_the_run_page(team: Team) -> None:
    run = make_run(team, status=RunStatus.RUNNING, started_by=team.member)
    client = Client()
    client.force_login(team.member)
    response = client.post(f"/runs/{run.pk}/cancel/")
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.pk}/"
