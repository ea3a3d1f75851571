"""The new-creation form when what was sent cannot be taken as it is: too large a request, too
many files, too long a brief, file names the platform must change. The form comes back saying
why, with what was typed; nothing is cut or renamed without the person being told."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from creations.models import Creation, Run
from tests.support.fixtures.accounts import Team
from tests.support.pages import signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]

DEBUG_PAGE_MARKS = ("Traceback", "technical", "Request Method:", "DJANGO_SETTINGS_MODULE")


def new_url(team: Team) -> str:
    return reverse("creation_new", args=[team.workspace.slug])


def _form_again(response: Any, status: int) -> str:
    page = response.content.decode()
    assert response.status_code == status, page[:500]
    assert 'id="creation-form"' in page
    for mark in DEBUG_PAGE_MARKS:
        assert mark not in page
    assert not Run.objects.exists()
    return html.unescape(page).replace("\xa0", " ")  # sizes are written with a no-break space


@pytest.fixture(params=[False, True], ids=["production", "debug"])
def debug(request: pytest.FixtureRequest, settings: Any) -> bool:
    settings.DEBUG = request.param
    return bool(request.param)


def test_files_over_the_request_limit_get_413_and_the_form_back_as_typed(
    team: Team, client: Client, settings: Any, debug: bool
) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 256 * 1024
    big = SimpleUploadedFile("scan.png", b"\x89PNG" + b"\0" * 300_000, content_type="image/png")
    response = signed_in(client, team.member).post(
        new_url(team),
        {
            "brief": "A poster for the spring fair, in green",
            "title": "Spring fair",
            "visibility": "private",
            "max_steps": "7",
            "uploads": big,
        },
    )

    page = _form_again(response, 413)
    assert "A poster for the spring fair, in green</textarea>" in page
    assert 'value="Spring fair"' in page
    assert re.search(r'value="private"[^>]* checked', page)
    assert 'value="7"' in page
    assert "Nothing was started" in page
    assert "256.0 KB" in page  # what one request may carry
    assert "choose your files again (scan.png)" in page


def test_more_files_than_any_request_takes_get_413_and_the_form_again(
    team: Team, client: Client, settings: Any, debug: bool
) -> None:
    many = [SimpleUploadedFile(f"photo{i}.png", b"\x89PNG") for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1)]
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": "A collage of these", "visibility": "workspace", "uploads": many}
    )

    page = _form_again(response, 413)
    assert f"at most {settings.RUN_INPUT_MAX_FILES} files" in page
    assert "Nothing was started" in page


def test_a_brief_larger_than_any_form_takes_gets_413_and_the_form_again(
    team: Team, client: Client, settings: Any, debug: bool
) -> None:
    brief = "a poster " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 9 + 1)
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": brief, "visibility": "workspace", "uploads": [SimpleUploadedFile("a.txt", b"a")]}
    )

    page = _form_again(response, 413)
    assert f"{settings.RUN_BRIEF_MAX_CHARS:,} characters" in page
    assert not Creation.objects.exists()


def test_a_refused_request_from_someone_signed_out_goes_to_the_login_page(
    team: Team, client: Client, settings: Any
) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 1024
    response = client.post(new_url(team), {"brief": "x" * 4096, "visibility": "workspace"})
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_a_refused_request_to_a_workspace_not_ones_own_is_not_found(team: Team, client: Client, settings: Any) -> None:
    settings.REQUEST_BODY_MAX_BYTES = 1024
    response = signed_in(client, team.outsider).post(new_url(team), {"brief": "x" * 4096, "visibility": "workspace"})
    assert response.status_code == 404


# --- a brief over its limit --------------------------------------------------


def test_a_brief_over_its_limit_comes_back_whole_with_a_message(team: Team, client: Client, settings: Any) -> None:
    limit = settings.RUN_BRIEF_MAX_CHARS
    brief = "A map of every bakery in Lyon. " * (limit // 31) + "x" * (limit % 31 + 5)
    response = signed_in(client, team.member).post(new_url(team), {"brief": brief, "visibility": "workspace"})

    page = _form_again(response, 400)
    assert f"{brief}</textarea>" in page  # every character, as typed
    assert f"The brief is {limit + 5:,} characters long, over its limit of {limit:,}: shorten it." in page


def test_the_brief_field_counts_without_cutting(team: Team, client: Client, settings: Any) -> None:
    """No `maxlength`: a browser drops silently what a paste has beyond it. The live counter's script
    reads the limit from the field."""
    page = signed_in(client, team.member).get(new_url(team)).content.decode()
    brief = re.search(r"<textarea[^>]*name=\"brief\"[^>]*>", page)
    title = re.search(r"<input[^>]*name=\"title\"[^>]*>", page)
    assert brief
    assert title
    assert "maxlength" not in brief.group(0)
    assert f'data-max-chars="{settings.RUN_BRIEF_MAX_CHARS}"' in brief.group(0)
    assert "maxlength" not in title.group(0)
    assert 'data-max-chars="200"' in title.group(0)
    assert "/static/js/char_limits.js" in page


def test_line_ends_count_as_one_character_as_the_counter_counts_them(team: Team, client: Client, settings: Any) -> None:
    # A browser sends each line end of a textarea as CR LF, and shows it, and counts it, as one.
    line = "a" * 99
    lines = settings.RUN_BRIEF_MAX_CHARS // 100
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": "\r\n".join([line] * lines), "visibility": "workspace"}
    )

    assert response.status_code == 302, html.unescape(response.content.decode())[:2000]
    assert Creation.objects.get().brief == "\n".join([line] * lines)


def test_a_title_over_its_limit_is_refused_never_cut(team: Team, client: Client) -> None:
    title = "The spring fair poster " * 10 + "for the square"  # 244 characters
    response = signed_in(client, team.member).post(
        new_url(team), {"brief": "A poster", "title": title, "visibility": "workspace"}
    )

    page = _form_again(response, 400)
    assert f'value="{title}"' in page
    assert "The title is 244 characters long, over its limit of 200: shorten it." in page


def test_the_run_service_refuses_a_long_title_instead_of_cutting_it(team: Team) -> None:
    from django.core.exceptions import ValidationError

    from creations.runs.services import creation_submit

    with pytest.raises(ValidationError) as refused:
        creation_submit(workspace=team.workspace, author=team.member, brief="A poster", title="t" * 201)
    assert "The title is 201 characters long" in str(refused.value)
    assert not Creation.objects.exists()


def test_the_api_refuses_a_brief_over_its_limit_and_keeps_one_at_it_whole(team: Team, settings: Any) -> None:
    from tests.support.api import api_as

    limit = settings.RUN_BRIEF_MAX_CHARS
    api = api_as(team.member)
    url = f"/api/v1/workspaces/{team.workspace.slug}/runs"

    refused = api.post(url, {"brief": "b" * (limit + 1)})
    assert refused.status_code == 422
    assert refused.json()["errors"] == [
        {
            "field": "brief",
            "message": f"The brief is {limit + 1:,} characters long, over its limit of {limit:,}: shorten it.",
        }
    ]
    assert not Creation.objects.exists()

    taken = api.post(url, {"brief": "é" * limit})
    assert taken.status_code == 201, taken.content
    assert Creation.objects.get().brief == "é" * limit


# --- file names the platform changes ---------------------------------------


def _submit_with(team: Team, client: Client, brief: str, *names: str) -> Any:
    uploads = [SimpleUploadedFile(name, b"name,lat,lon\n", content_type="text/csv") for name in names]
    return signed_in(client, team.member).post(
        new_url(team), {"brief": brief, "visibility": "workspace", "uploads": uploads}, follow=True
    )


def test_a_renamed_file_is_said_on_the_run_page_and_the_brief_naming_it_is_pointed_out(
    team: Team, client: Client
) -> None:
    response = _submit_with(team, client, "Map the stops in “stops: autumn?.csv” please", "stops: autumn?.csv", "b.csv")

    page = html.unescape(response.content.decode())
    run = Run.objects.get()
    assert response.redirect_chain[-1][0] == reverse("run_detail", args=[run.pk])
    assert "Renamed “stops: autumn?.csv” to “stops_ autumn_.csv”" in page
    assert "Your brief calls it “stops: autumn?.csv”: the agent is told that this is stops_ autumn_.csv." in page
    assert "b.csv" not in page.split("Renamed", 1)[1].split("</ul>", 1)[0]  # a name kept is not mentioned
    inputs = {f.name: f.original_name for f in run.creation.inputs.all()}
    assert inputs == {"stops_ autumn_.csv": "stops: autumn?.csv", "b.csv": ""}

    # The creation page keeps saying it.
    creation_page = html.unescape(client.get(reverse("creation_detail", args=[run.creation_id])).content.decode())
    assert "stops_ autumn_.csv (13 bytes, renamed from “stops: autumn?.csv”)" in creation_page.replace("\xa0", " ")
    assert "The brief calls a file “stops: autumn?.csv”: it was renamed stops_ autumn_.csv" in creation_page


def test_a_renamed_file_the_brief_does_not_name_is_still_said(team: Team, client: Client) -> None:
    page = html.unescape(_submit_with(team, client, "Map the stops", "Stops #3.csv").content.decode())

    assert "Renamed “Stops #3.csv” to “Stops _3.csv”" in page
    assert "Your brief calls it" not in page


def test_a_name_too_long_is_shortened_keeping_its_extension(team: Team, client: Client) -> None:
    long_name = "a field survey of every bakery " * 8 + ".csv"  # 252 characters
    page = html.unescape(_submit_with(team, client, "Map it", long_name).content.decode())

    (kept,) = Run.objects.get().creation.inputs.all()
    assert len(kept.name) == 200
    assert kept.name.endswith(".csv")
    assert kept.original_name == long_name
    assert f"Renamed “{long_name}” to “{kept.name}”" in page


def test_two_names_that_become_one_are_numbered_not_refused(team: Team, client: Client) -> None:
    _submit_with(team, client, "Compare them", "plan?.csv", "plan*.csv")

    names = sorted(f.name for f in Run.objects.get().creation.inputs.all())
    assert names == ["plan_ (2).csv", "plan_.csv"]


def test_the_agent_is_told_the_names_of_renamed_files(team: Team, client: Client) -> None:
    from creations.runs.inputs import renamed_inputs

    _submit_with(team, client, "Map “stops: autumn?.csv”", "stops: autumn?.csv", "b.csv")

    assert renamed_inputs(Run.objects.get().creation) == {"stops_ autumn_.csv": "stops: autumn?.csv"}


def test_an_api_upload_says_its_new_name_and_the_run_keeps_the_old_one(team: Team) -> None:
    from tests.support.api import api_as

    api = api_as(team.member)
    upload = SimpleUploadedFile("stops: autumn?.csv", b"name,lat,lon\n", content_type="text/csv")
    staged = api.post(f"/api/v1/workspaces/{team.workspace.slug}/inputs", {"files": [upload]}, multipart=True)
    assert staged.status_code == 201, staged.content
    (item,) = staged.json()
    assert (item["name"], item["renamed_from"]) == ("stops_ autumn_.csv", "stops: autumn?.csv")

    created = api.post(
        f"/api/v1/workspaces/{team.workspace.slug}/runs",
        {"brief": "Map “stops: autumn?.csv”", "input_ids": [item["id"]]},
    )
    assert created.status_code == 201, created.content
    (kept,) = Run.objects.get().creation.inputs.all()
    assert (kept.name, kept.original_name) == ("stops_ autumn_.csv", "stops: autumn?.csv")
