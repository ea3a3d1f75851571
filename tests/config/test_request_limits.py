"""What a request too large, or too many, or not readable gets: 413 (400 for what cannot be read)
in the platform's look on the pages, as a problem document on the API; never a server error,
and never Django's debug page, whatever DEBUG says."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from api.models import StagedInput
from creations.models import Creation
from tests.support.api import api_as
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = pytest.mark.django_db

DEBUG_PAGE_MARKS = ("Traceback", "technical", "Request Method:", "DJANGO_SETTINGS_MODULE", "settings.py")
PLATFORM_LOOK = 'class="topbar"'


def _platform_page(response: Any, status: int) -> str:
    html = response.content.decode()
    assert response.status_code == status, html[:500]
    assert response["Content-Type"].startswith("text/html")
    assert PLATFORM_LOOK in html
    for mark in DEBUG_PAGE_MARKS:
        assert mark not in html
    return html.replace("\xa0", " ")  # sizes are written with a no-break space


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    problem["detail"] = problem["detail"].replace("\xa0", " ")  # sizes are written with a no-break space
    return problem


# --- the API ---------------------------------------------------------------


def test_a_json_body_over_the_memory_limit_gets_a_413_problem_not_a_500(team: Team, settings: Any) -> None:
    brief = "a poster " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 9 + 1)
    response = api_as(team.member).post(f"/api/v1/workspaces/{team.workspace.slug}/runs", {"brief": brief})

    problem = _problem(response, 413)
    assert problem["title"] == "Too large"
    assert "2.5 MB" in problem["detail"]
    assert f"{settings.RUN_BRIEF_MAX_CHARS:,} characters" in problem["detail"]
    assert not Creation.objects.exists()


def test_an_upload_over_the_request_limit_gets_a_413_problem_before_it_is_read(team: Team, settings: Any) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 64 * 1024
    big = SimpleUploadedFile("stops.csv", b"name,lat,lon\n" * 10_000)
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/inputs", {"files": [big]}, multipart=True
    )

    problem = _problem(response, 413)
    assert "64.0 KB" in problem["detail"]
    assert not StagedInput.objects.exists()


def test_more_files_at_once_than_any_request_takes_gets_a_413_problem(team: Team, settings: Any) -> None:
    many = [SimpleUploadedFile(f"n{i}.txt", b"x") for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1)]
    response = api_as(team.member).post(
        f"/api/v1/workspaces/{team.workspace.slug}/inputs", {"files": many}, multipart=True
    )

    problem = _problem(response, 413)
    assert f"at most {settings.RUN_INPUT_MAX_FILES} files" in problem["detail"]
    assert not StagedInput.objects.exists()


def test_a_malformed_upload_gets_a_400_problem_not_a_500(team: Team) -> None:
    client = api_as(team.member)
    response = client.client.post(
        f"/api/v1/workspaces/{team.workspace.slug}/inputs",
        data=b'--xyz\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nabc',
        content_type="multipart/form-data; boundary=",
        headers=client.headers,
    )

    problem = _problem(response, 400)
    assert "could not be read" in problem["detail"]


# --- the pages -------------------------------------------------------------


@pytest.fixture(params=[False, True], ids=["production", "debug"])
def debug(request: pytest.FixtureRequest, settings: Any) -> bool:
    settings.DEBUG = request.param
    return bool(request.param)


def test_too_many_fields_get_the_platforms_413_page(client: Client, debug: bool, settings: Any) -> None:
    fields = {f"field{i}": "x" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    response = client.post("/accounts/login/", fields)

    html = _platform_page(response, 413)
    assert "Nothing was kept" in html


def test_a_form_larger_than_any_form_here_gets_the_platforms_413_page(
    client: Client, debug: bool, settings: Any
) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 64 * 1024
    response = client.post("/accounts/login/", {"username": "x" * 100_000, "password": "y"})

    html = _platform_page(response, 413)
    assert "64.0 KB" in html


def test_a_wrong_host_header_gets_the_platforms_400_page_even_in_debug(client: Client, debug: bool) -> None:
    response = client.get("/accounts/login/", headers={"host": "evil.example"})

    html = _platform_page(response, 400)
    assert "DisallowedHost" not in html
    assert "evil.example" not in html


def test_a_malformed_form_gets_the_platforms_400_page(client: Client, debug: bool) -> None:
    response = client.generic(
        "POST",
        "/accounts/login/",
        data=b'--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nabc',
        content_type="multipart/form-data; boundary=",
    )

    _platform_page(response, 400)


def test_a_failing_page_gets_the_platforms_500_page(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("the starters are gone")

    monkeypatch.setattr("creations.web.views.creations.starters", broken)
    client = signed_in(Client(raise_request_exception=False), team.member)
    response = client.get(f"/w/{team.workspace.slug}/new/")

    html = _platform_page(response, 500)
    assert "Something went wrong on our side" in html
    assert "the starters are gone" not in html
    assert "Log in" not in html  # rendered without the request: no links that may not fit who is reading


def test_the_artifact_origin_keeps_djangos_bare_pages(client: Client, settings: Any) -> None:
    """Its pages link to nothing of the platform: a refusal there says so in plain text."""
    settings.REQUEST_BODY_MAX_BYTES = 1024
    host = settings.ARTIFACT_ORIGIN.split("://", 1)[1]
    response = client.post("/r/token/file.txt", {"a": "x" * 4096}, headers={"host": host})

    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")
    assert PLATFORM_LOOK not in response.content.decode()
