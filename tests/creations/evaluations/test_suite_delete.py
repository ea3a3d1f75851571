"""Deleting a suite: by who uploaded it, or the workspace's owners and admins; refused with a
sentence while it is being evaluated; its stored files go with it, from the page and the API."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse

from creations.evaluations.models import Evaluation, EvaluationStatus, Suite, SuiteFile
from creations.evaluations.services import evaluation_start
from creations.evaluations.suites import SuiteInUse, suite_delete, suite_upload
from tests.creations.evaluations.conftest import PlainMessages
from tests.support.fixtures.accounts import Team, make_user
from tests.support.pages import signed_in
from workspaces.models import ModelEndpoint, Role
from workspaces.services import membership_add

pytestmark = pytest.mark.django_db

IN_USE = "“Notes” is being evaluated now: cancel that evaluation, or let it finish, then delete the suite."


def suite_with_a_file(team: Team) -> Suite:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", b"The answer is 4.")
    line = b'{"id": "t1", "prompt": "What is the answer?", "rule": "number", "expected": "4", "files": ["notes.txt"]}'
    return suite_upload(workspace=team.workspace, user=team.member, name="Notes", data=line, zip_data=buffer.getvalue())


def test_the_uploader_and_managers_delete_a_suite_and_its_files_leave_storage(
    team: Team, django_capture_on_commit_callbacks: Any
) -> None:
    suite = suite_with_a_file(team)
    stored = SuiteFile.objects.get(suite=suite).file.name
    assert stored is not None
    assert default_storage.exists(stored)
    other_member = make_user("carl")
    membership_add(workspace=team.workspace, user=other_member, role=Role.MEMBER)
    for refused in (team.viewer, other_member, team.outsider):
        with pytest.raises(PermissionDenied):
            suite_delete(suite=suite, user=refused)
    assert Suite.objects.filter(pk=suite.pk).exists()

    with django_capture_on_commit_callbacks(execute=True):
        suite_delete(suite=suite, user=team.member)

    assert not Suite.objects.filter(pk=suite.pk).exists()
    assert not SuiteFile.objects.exists()
    assert not default_storage.exists(stored)
    with django_capture_on_commit_callbacks(execute=True):
        suite_delete(suite=suite_with_a_file(team), user=team.owner)
    assert not Suite.objects.exists()


def test_a_suite_being_evaluated_is_not_deleted_until_its_evaluation_ends(
    team: Team, endpoint: ModelEndpoint, plain_messages: PlainMessages, django_capture_on_commit_callbacks: Any
) -> None:
    suite = suite_with_a_file(team)
    evaluation = evaluation_start(
        workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="plain"
    )
    with pytest.raises(SuiteInUse) as refused:
        suite_delete(suite=suite, user=team.owner)
    assert refused.value.messages == [IN_USE]
    assert SuiteFile.objects.filter(suite=suite).exists()

    Evaluation.objects.filter(pk=evaluation.pk).update(status=EvaluationStatus.FINISHED)
    with django_capture_on_commit_callbacks(execute=True):
        suite_delete(suite=suite, user=team.member)
    assert not Evaluation.objects.exists()  # its results went with it


def test_the_page_deletes_a_suite_or_says_why_not(
    client: Client, team: Team, endpoint: ModelEndpoint, plain_messages: PlainMessages
) -> None:
    listing = reverse("evaluations_list", args=[team.workspace.slug])
    suite = suite_with_a_file(team)
    assert b'data-role="suite-delete"' not in signed_in(Client(), team.viewer).get(listing).content
    page = signed_in(client, team.member).get(listing)
    delete_url = reverse("suite_delete", args=[team.workspace.slug, suite.pk])
    assert delete_url.encode() in page.content

    evaluation = evaluation_start(
        workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="plain"
    )
    refused = client.post(delete_url, follow=True)
    assert refused.redirect_chain[-1][0] == listing
    assert IN_USE in refused.content.decode()
    assert Suite.objects.filter(pk=suite.pk).exists()

    Evaluation.objects.filter(pk=evaluation.pk).update(status=EvaluationStatus.CANCELLED)
    deleted = client.post(delete_url, follow=True)
    assert "“Notes” is deleted, with its evaluations and their results." in deleted.content.decode()
    assert not Suite.objects.filter(pk=suite.pk).exists()


def test_the_api_deletes_a_suite_or_answers_409(
    client: Client, team: Team, endpoint: ModelEndpoint, plain_messages: PlainMessages
) -> None:
    suite = suite_with_a_file(team)
    evaluation = evaluation_start(
        workspace=team.workspace, user=team.member, suite=suite, endpoints=[endpoint], modes="plain"
    )
    url = f"/api/v1/workspaces/{team.workspace.slug}/suites/{suite.pk}"
    signed_in(client, team.member)
    conflict = client.delete(url)
    assert conflict.status_code == 409
    assert conflict.json()["detail"] == IN_USE

    Evaluation.objects.filter(pk=evaluation.pk).update(status=EvaluationStatus.FINISHED)
    assert client.delete(url).status_code == 204
    assert client.delete(url).status_code == 404
