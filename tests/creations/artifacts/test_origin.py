"""The artifact origin serves artifacts, and only artifacts, with headers that contain them."""

import re
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client

from creations.artifacts.display import artifact_displays
from creations.artifacts.headers import html_csp
from creations.artifacts.origin import grant_sign
from creations.models import Artifact, Visibility
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import hostile_html, hostile_svg, png_bytes, wav_bytes
from workspaces.models import Membership

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]
PLATFORM = "http://localhost:8000"


def get(client: Client, url: str, **headers: Any) -> Any:
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return client.get(path, headers={"host": parts.netloc, **headers})


def body(response: Any) -> bytes:
    return b"".join(response) if response.streaming else response.content


def one_artifact(team: Team, path: str, data: bytes, **kwargs: Any) -> Artifact:
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[Output(path, data)], **kwargs)
    return run.artifacts.get()


def url_for(artifact: Artifact, user: User | AnonymousUser, **kwargs: Any) -> str:
    display = artifact_displays([artifact], user=user)[0]
    return display.download_url if kwargs.get("download") else display.url


def test_an_artifact_is_served_from_the_artifact_origin_with_nosniff(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    response = get(client, url_for(artifact, team.owner))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert body(response) == png_bytes()
    assert not response.cookies


def test_the_platform_origin_does_not_serve_artifact_urls(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    url = url_for(artifact, team.owner).replace("127.0.0.1:8000", "localhost:8000")
    client.force_login(team.owner)
    assert get(client, url).status_code == 404


def test_platform_pages_are_not_served_on_the_artifact_origin(team: Team, client: Client) -> None:
    client.force_login(team.owner)
    for path in ("/", f"/w/{team.workspace.slug}/", "/accounts/login/", "/admin/", "/gallery/"):
        response = client.get(path, headers={"host": "127.0.0.1:8000"})
        assert response.status_code == 404, path
        assert "sessionid" not in response.cookies
        assert "csrftoken" not in response.cookies


def test_html_runs_only_in_a_sandbox_without_network(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "page.html", hostile_html(PLATFORM))
    assert artifact.kind == "html"
    response = get(client, url_for(artifact, team.owner))
    csp = response["Content-Security-Policy"]
    directives = {d.strip().split(" ")[0]: d.strip() for d in csp.split(";")}
    assert directives["sandbox"] == "sandbox allow-scripts"  # an opaque origin: no cookies, no storage
    assert directives["connect-src"] == "connect-src 'none'"
    assert directives["frame-ancestors"] == f"frame-ancestors {PLATFORM}"
    assert "allow-same-origin" not in csp
    assert "allow-top-navigation" not in csp
    assert response["Content-Type"] == "text/html; charset=utf-8"


def test_html_named_like_an_image_is_still_served_as_sandboxed_html(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "innocent.png", hostile_html(PLATFORM))
    response = get(client, url_for(artifact, team.owner))
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert "sandbox allow-scripts" in response["Content-Security-Policy"]


def test_svg_opened_directly_cannot_run_script(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "logo.svg", hostile_svg(PLATFORM))
    assert artifact.kind == "svg"
    response = get(client, url_for(artifact, team.owner))
    csp = response["Content-Security-Policy"]
    assert response["Content-Type"] == "image/svg+xml"
    assert "default-src 'none'" in csp
    assert "script-src" not in csp
    assert csp.startswith("sandbox")


def test_unknown_files_are_downloads(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "data.bin", bytes(range(256)) * 4)
    assert artifact.kind == "other"
    response = get(client, url_for(artifact, team.owner))
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith('attachment; filename="data.bin"')


def test_the_download_link_is_an_attachment_even_for_images(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    response = get(client, url_for(artifact, team.owner, download=True))
    assert response["Content-Disposition"].startswith("attachment;")


def test_audio_supports_byte_ranges_for_seeking(team: Team, client: Client) -> None:
    data = wav_bytes(seconds=1.0)
    artifact = one_artifact(team, "tone.wav", data)
    url = url_for(artifact, team.owner)
    response = get(client, url, range="bytes=100-199")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 100-199/{len(data)}"
    assert response["Content-Length"] == "100"
    assert body(response) == data[100:200]
    tail = get(client, url, range="bytes=-10")
    assert tail.status_code == 206
    assert body(tail) == data[-10:]
    open_ended = get(client, url, range=f"bytes={len(data) - 5}-")
    assert body(open_ended) == data[-5:]


def test_a_range_past_the_end_is_refused_with_416(team: Team, client: Client) -> None:
    data = wav_bytes(seconds=0.5)
    artifact = one_artifact(team, "tone.wav", data)
    response = get(client, url_for(artifact, team.owner), range=f"bytes={len(data) + 10}-")
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{len(data)}"


def test_a_malformed_range_gets_the_whole_file(team: Team, client: Client) -> None:
    data = wav_bytes(seconds=0.5)
    artifact = one_artifact(team, "tone.wav", data)
    response = get(client, url_for(artifact, team.owner), range="bytes=oops")
    assert response.status_code == 200
    assert body(response) == data


def test_a_forged_token_is_refused(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    url = url_for(artifact, team.owner)
    token = urlsplit(url).path.split("/")[2]
    forged = url.replace(token, token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB"))
    assert get(client, forged).status_code == 404


def test_an_expired_link_is_refused(team: Team, client: Client, settings: Any) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    url = url_for(artifact, team.owner)
    settings.ARTIFACT_URL_MAX_AGE = 30
    real_time = time.time
    try:
        time.time = lambda: real_time() + 31
        assert get(client, url).status_code == 404
    finally:
        time.time = real_time


def test_a_token_cannot_be_reused_for_another_run(team: Team, client: Client) -> None:
    mine = one_artifact(team, "pic.png", png_bytes())
    other = one_artifact(team, "secret.png", png_bytes(color="#000"))
    url = url_for(mine, team.owner).replace("/pic.png", "/secret.png")
    assert get(client, url).status_code == 404
    assert other.run_id != mine.run_id


def test_a_private_artifact_is_unreachable_for_a_member_who_is_not_the_author(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes(), visibility=Visibility.PRIVATE)
    assert get(client, url_for(artifact, team.owner)).status_code == 200
    # Even a correctly signed link for someone else (say, copied from the author) does not work.
    token = grant_sign(run_id=artifact.run_id, user=team.member)
    assert get(client, f"http://127.0.0.1:8000/r/{token}/pic.png").status_code == 404


def test_a_link_stops_working_when_its_holder_leaves_the_workspace(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    url = url_for(artifact, team.member)
    assert get(client, url).status_code == 200
    Membership.objects.filter(workspace=team.workspace, user=team.member).delete()
    assert get(client, url).status_code == 404


def test_an_outsider_signed_link_to_a_workspace_artifact_is_refused(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    token = grant_sign(run_id=artifact.run_id, user=team.outsider)
    assert get(client, f"http://127.0.0.1:8000/r/{token}/pic.png").status_code == 404


def test_public_artifacts_are_served_to_anonymous_viewers(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes(), visibility=Visibility.PUBLIC)
    assert get(client, url_for(artifact, AnonymousUser())).status_code == 200


def test_a_missing_preview_is_a_404_not_a_500(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "data.bin", b"\x00\x01")
    url = url_for(artifact, team.owner) + "?v=preview"
    assert get(client, url).status_code == 404
    assert get(client, url_for(artifact, team.owner) + "?v=nonsense").status_code == 404


def test_the_artifact_origin_refuses_writes(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    parts = urlsplit(url_for(artifact, team.owner))
    response = client.post(parts.path, headers={"host": parts.netloc})
    assert response.status_code in (403, 405)


def served_csp(client: Client, url: str) -> str:
    response = get(client, url)
    # Closing ends the request: a streamed response left open would keep the artifact
    # URLconf active in this thread for whatever test comes next.
    response.close()
    return str(response["Content-Security-Policy"])


@pytest.fixture
def development_origins(settings: Any) -> None:
    """`make run`: the platform at localhost:8000 (and 127.0.0.1:8000), artifacts at localhost:8001."""
    settings.DEBUG = True
    settings.SITE_URL, settings.ARTIFACT_ORIGIN = "http://localhost:8000", "http://localhost:8001"


@pytest.mark.usefixtures("development_origins")
def test_in_development_the_port_tells_the_artifact_origin_from_the_platform(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "pic.png", png_bytes())
    url = url_for(artifact, team.owner)
    assert url.startswith("http://localhost:8001/r/")
    assert get(client, url).status_code == 200
    client.force_login(team.owner)
    for platform in ("localhost:8000", "127.0.0.1:8000"):
        assert get(client, url.replace("localhost:8001", platform)).status_code == 404, platform
        assert client.get("/accounts/login/", headers={"host": platform}).status_code == 200, platform
    on_artifact_port = client.get(f"/w/{team.workspace.slug}/", headers={"host": "localhost:8001"})
    assert on_artifact_port.status_code == 404
    assert not on_artifact_port.cookies


@pytest.mark.usefixtures("development_origins")
def test_in_development_any_loopback_name_of_the_platform_may_frame_html(team: Team, client: Client) -> None:
    artifact = one_artifact(team, "page.html", hostile_html(PLATFORM))
    csp = served_csp(client, url_for(artifact, team.owner))
    directives = {d.strip().split(" ")[0]: d.strip().split(" ")[1:] for d in csp.split(";")}
    # [::1] is left out: a CSP source cannot name an IPv6 literal, and Chromium logs an error for one.
    assert sorted(directives["frame-ancestors"]) == ["http://127.0.0.1:8000", PLATFORM]


# A CSP host-source: scheme "://" host of dotted labels [":" port] (CSP Level 3, 2.3.1).
CSP_HOST_SOURCE = re.compile(r"[a-z][a-z0-9+.-]*://[a-z0-9-]+(\.[a-z0-9-]+)*(:[0-9]+)?")


@pytest.mark.parametrize(
    ("debug", "site_url", "expected"),
    [
        (True, "http://localhost:8000", "http://localhost:8000 http://127.0.0.1:8000"),
        (True, "http://[::1]:8000", "http://localhost:8000 http://127.0.0.1:8000"),
        (True, "http://127.0.0.1", "http://localhost http://127.0.0.1"),
        (False, "https://atelier.example.org", "https://atelier.example.org"),
        (False, "http://[2001:db8::5]:8000", "'none'"),  # not nameable: framed by nobody, never by anyone
    ],
)
def test_every_frame_ancestor_is_a_source_a_browser_accepts(
    settings: Any, debug: bool, site_url: str, expected: str
) -> None:
    settings.DEBUG, settings.SITE_URL = debug, site_url
    ancestors = next(d.split()[1:] for d in html_csp().split(";") if d.split()[0] == "frame-ancestors")
    assert " ".join(ancestors) == expected
    assert all(CSP_HOST_SOURCE.fullmatch(source) or source == "'none'" for source in ancestors), ancestors


def test_html_may_load_nothing_from_another_host(team: Team, client: Client) -> None:
    page = b'<img src="https://example.com/x?leak=secret"><link rel="stylesheet" href="https://example.com/s.css">'
    artifact = one_artifact(team, "page.html", b"<!doctype html><title>map</title>" + page)
    csp = served_csp(client, url_for(artifact, team.owner))
    directives = {d.strip().split(" ")[0]: d.strip().split(" ")[1:] for d in csp.split(";")}
    assert directives["default-src"] == ["'none'"]  # covers every fetch directive not listed
    local = {"'self'", "data:", "blob:", "'none'", "'unsafe-inline'", "'unsafe-eval'"}
    fetch_directives = [name for name in directives if name.endswith("-src")]
    assert {"img-src", "media-src", "font-src", "style-src", "script-src", "connect-src"} <= set(fetch_directives)
    for name in fetch_directives:
        assert set(directives[name]) <= local, f"{name} lets the page reach another host: {directives[name]}"


def test_hosts_the_operator_lists_serve_a_pages_images_styles_fonts_and_scripts_only(
    team: Team, client: Client, settings: Any
) -> None:
    settings.ARTIFACT_PAGE_HOSTS = ["https://tile.openstreetmap.org", "https://fonts.example.net"]
    artifact = one_artifact(team, "map.html", b"<!doctype html><title>map</title><div id=map></div>")
    csp = served_csp(client, url_for(artifact, team.owner))
    directives = {d.strip().split(" ")[0]: d.strip().split(" ")[1:] for d in csp.split(";")}
    for name in ("img-src", "style-src", "font-src", "script-src"):
        assert {"https://tile.openstreetmap.org", "https://fonts.example.net"} <= set(directives[name]), name
    # Nothing a page could send its data to with a request of its own making.
    assert directives["connect-src"] == ["'none'"]
    assert "https://tile.openstreetmap.org" not in directives["media-src"] + directives["frame-src"]
