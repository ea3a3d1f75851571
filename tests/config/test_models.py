"""Invariants the database itself holds."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from creations.models import Artifact, Creation, Run, RunEvent, RunStatus
from tests.support.fixtures.accounts import Team
from workspaces.models import Membership, ModelEndpoint, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(team: Team) -> Run:
    creation = Creation.objects.create(workspace=team.workspace, author=team.owner, brief="A poster")
    return Run.objects.create(creation=creation)


def test_the_database_rejects_a_duplicate_event_seq(run: Run) -> None:
    RunEvent.objects.create(run=run, seq=1, kind="step_started")
    with pytest.raises(IntegrityError), transaction.atomic():
        RunEvent.objects.create(run=run, seq=1, kind="assistant_message")


def test_the_database_rejects_event_seq_zero(run: Run) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        RunEvent.objects.create(run=run, seq=0, kind="step_started")


def test_a_final_status_needs_a_finish_time(run: Run) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED, finished_at=timezone.now())


def test_an_active_run_cannot_have_a_finish_time(run: Run) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Run.objects.filter(pk=run.pk).update(finished_at=timezone.now())


def test_an_unknown_status_is_rejected(run: Run) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Run.objects.filter(pk=run.pk).update(status="exploded")


def test_a_user_is_a_member_of_a_workspace_once(team: Team) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(workspace=team.workspace, user=team.member, role=Role.ADMIN)


def test_an_empty_brief_is_rejected(team: Team) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Creation.objects.create(workspace=team.workspace, author=team.owner, brief="")


def test_two_artifacts_of_a_run_cannot_share_a_path(run: Run) -> None:
    Artifact.objects.create(run=run, path="map.html", size=1, content_type="text/html", file="a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Artifact.objects.create(run=run, path="map.html", size=2, content_type="text/html", file="b")


def test_the_api_key_is_stored_encrypted_and_read_back_plain(team: Team) -> None:
    endpoint = ModelEndpoint.objects.create(
        workspace=team.workspace, name="vLLM", base_url="http://127.0.0.1:9/v1", model="qwen", api_key="sk-secret-123"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key FROM workspaces_modelendpoint WHERE id = %s", [endpoint.pk])
        raw = cursor.fetchone()[0]
    assert "sk-secret-123" not in raw
    assert ModelEndpoint.objects.get(pk=endpoint.pk).api_key == "sk-secret-123"
