"""Media stored in S3 is handed out as a redirect to a short-lived URL of the store (a real
S3-compatible server, SeaweedFS): after the same access check, with the headers the artifact
origin would send, refused by the store once expired; pages, SVG and text never leave the
origin, and a page may load what it is redirected to (and nothing else of the store)."""

from __future__ import annotations

import calendar
import io
import time
import zipfile
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from creations.artifacts.headers import html_csp
from creations.artifacts.origin import grant_sign
from creations.models import Artifact
from devstack.s3 import S3Server
from tests.creations.artifacts.test_origin import body, get, one_artifact, url_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import hostile_html, hostile_svg, mp4_bytes, pdf_bytes, png_bytes, wav_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]
PLATFORM = "http://localhost:8000"


def a_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        # A fixed time: the bytes are part of the test's id, which every xdist worker must collect alike.
        archive.writestr(zipfile.ZipInfo("inside.txt", date_time=(2026, 1, 1, 0, 0, 0)), "zipped")
    return buffer.getvalue()


def redirect_target(client: Client, url: str, **headers: Any) -> str:
    response = get(client, url, **headers)
    assert response.status_code == 302, response.status_code
    assert response["Cache-Control"] == "no-store"
    return str(response["Location"])


def directives(csp: str) -> dict[str, list[str]]:
    return {d.strip().split(" ")[0]: d.strip().split(" ")[1:] for d in csp.split(";") if d.strip()}


@pytest.mark.parametrize(
    ("path", "data", "download"),
    [
        ("clip.mp4", b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 64, False),
        ("tone.wav", wav_bytes(seconds=0.2), False),
        ("pic.png", png_bytes(), False),
        ("pic.png", png_bytes(), True),
        ("doc.pdf", pdf_bytes(), False),
        ("bundle.zip", a_zip(), False),
        ("data.bin", bytes(range(256)) * 4, False),
    ],
    ids=["clip.mp4", "tone.wav", "pic.png", "pic.png-download", "doc.pdf", "bundle.zip", "data.bin"],
)
def test_media_comes_from_the_store_with_the_headers_the_origin_would_send(
    team: Team, client: Client, s3_storage: S3Server, settings: Any, path: str, data: bytes, download: bool
) -> None:
    artifact = one_artifact(team, path, data)
    url = url_for(artifact, team.member, download=download)
    settings.S3_PRESIGNED_REDIRECTS = False
    served_here = get(client, url)
    assert served_here.status_code == 200
    settings.S3_PRESIGNED_REDIRECTS = True

    location = redirect_target(client, url)
    assert location.startswith(s3_storage.endpoint_url + "/")
    from_store = httpx.get(location)
    assert from_store.status_code == 200
    assert from_store.content == data
    assert from_store.headers["Content-Type"] == served_here["Content-Type"]
    assert from_store.headers["Content-Disposition"] == served_here["Content-Disposition"]
    if download or path in ("bundle.zip", "data.bin"):
        assert from_store.headers["Content-Disposition"].startswith(f'attachment; filename="{path}"')


def test_a_redirected_video_seeks_with_ranges_at_the_store(team: Team, client: Client, s3_storage: S3Server) -> None:
    data = mp4_bytes(seconds=2)
    location = redirect_target(client, url_for(one_artifact(team, "clip.mp4", data), team.owner))
    part = httpx.get(location, headers={"Range": "bytes=100-1123"})
    assert part.status_code == 206
    assert part.content == data[100:1124]
    assert part.headers["Content-Range"] == f"bytes 100-1123/{len(data)}"


def test_access_is_checked_before_any_redirect(team: Team, client: Client, s3_storage: S3Server) -> None:
    artifact = one_artifact(team, "clip.mp4", mp4_bytes(seconds=1))
    token = grant_sign(run_id=artifact.run_id, user=team.outsider)
    refused = get(client, f"http://127.0.0.1:8000/r/{token}/clip.mp4")
    assert refused.status_code == 404
    assert "Location" not in refused
    assert get(client, url_for(artifact, AnonymousUser())).status_code == 404  # not a public creation


def test_a_store_url_is_refused_by_the_store_once_expired(
    team: Team, client: Client, s3_storage: S3Server, settings: Any
) -> None:
    settings.S3_PRESIGNED_SECONDS = 1
    url = url_for(one_artifact(team, "pic.png", png_bytes()), team.owner)
    location = redirect_target(client, url)
    query = parse_qs(urlsplit(location).query)
    assert query["X-Amz-Expires"] == ["1"]
    signed_at = calendar.timegm(time.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ"))
    while time.time() < signed_at + 3:  # past its second, with room for the clocks' rounding
        time.sleep(0.2)
    expired = httpx.get(location)
    assert expired.status_code == 403
    assert b"expired" in expired.content
    # The page's link (the artifact origin's) still works: it signs a fresh one (given a minute, so
    # a busy machine's second between signing and fetching cannot expire it too).
    settings.S3_PRESIGNED_SECONDS = 60
    assert httpx.get(redirect_target(client, url)).content == png_bytes()


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("page.html", hostile_html(PLATFORM)),
        ("logo.svg", hostile_svg(PLATFORM)),
        ("notes.md", b"# Notes\n\n<script>alert(1)</script>\n"),
        ("main.py", b"print('hello')\n"),
    ],
)
def test_pages_svg_and_text_are_never_redirected(
    team: Team, client: Client, s3_storage: S3Server, path: str, data: bytes
) -> None:
    artifact = one_artifact(team, path, data)
    for url in (url_for(artifact, team.owner), url_for(artifact, team.owner, download=True)):
        response = get(client, url)
        assert response.status_code == 200
        assert body(response) == data
        assert response["Content-Security-Policy"].startswith("sandbox")
        assert response["X-Content-Type-Options"] == "nosniff"


def test_with_redirects_off_every_byte_comes_from_the_origin(
    team: Team, client: Client, s3_storage: S3Server, settings: Any
) -> None:
    settings.S3_PRESIGNED_REDIRECTS = False
    data = mp4_bytes(seconds=1)
    response = get(client, url_for(one_artifact(team, "clip.mp4", data), team.owner))
    assert response.status_code == 200
    assert body(response) == data


def test_pages_may_load_the_redirected_media_and_no_other_bucket(
    team: Team, client: Client, s3_storage: S3Server
) -> None:
    artifact = one_artifact(team, "clip.mp4", mp4_bytes(seconds=1))
    location = redirect_target(client, url_for(artifact, team.owner))
    store = f"{s3_storage.endpoint_url}/atelier-tests/{s3_storage.location}/"
    assert location.startswith(store)

    # An HTML artifact's own <img>/<video> of its sibling files are redirected too.
    html = directives(html_csp())
    for directive in ("img-src", "media-src", "font-src"):
        assert html[directive] == ["'self'", "data:", "blob:", store], directive
    assert html["connect-src"] == ["'none'"]
    assert html["default-src"] == ["'none'"]

    client.force_login(team.owner)
    page = client.get(reverse("creation_detail", args=[artifact.run.creation_id]))
    platform = directives(page["Content-Security-Policy"])
    assert store in platform["img-src"]
    assert store in platform["media-src"]
    assert store not in platform["frame-src"]  # pages are never framed from the store


def test_an_html_page_loads_its_pictures_through_redirects_it_is_allowed(
    team: Team, client: Client, s3_storage: S3Server
) -> None:
    """What the page's relative <img src="pic.png"> asks the artifact origin for."""
    run = finished_run(
        workspace=team.workspace,
        author=team.owner,
        outputs=[Output("index.html", b'<!doctype html><img src="pic.png">'), Output("pic.png", png_bytes())],
    )
    page_url = url_for(run.artifacts.get(path="index.html"), team.owner)
    page = get(client, page_url)
    allowed = directives(page["Content-Security-Policy"])["img-src"]
    location = redirect_target(client, page_url.rsplit("/", 1)[0] + "/pic.png")
    assert any(location.startswith(source) for source in allowed if source.startswith("http"))
    assert httpx.get(location).content == png_bytes()


def test_a_store_without_signed_urls_is_never_redirected_to(
    team: Team, client: Client, s3_storage: S3Server, settings: Any
) -> None:
    default = settings.STORAGES["default"]
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**default, "OPTIONS": {**default["OPTIONS"], "querystring_auth": False}},
    }
    data = png_bytes()
    response = get(client, url_for(one_artifact(team, "pic.png", data), team.owner))
    assert response.status_code == 200
    assert body(response) == data


def test_signed_urls_name_the_public_endpoint_when_one_is_set(
    team: Team, client: Client, s3_storage: S3Server, settings: Any
) -> None:
    """The store as browsers reach it (here: the same server under its other loopback name)."""
    public = s3_storage.endpoint_url.replace("127.0.0.1", "localhost")
    settings.S3_PUBLIC_ENDPOINT_URL = public
    artifact: Artifact = one_artifact(team, "pic.png", png_bytes())
    location = redirect_target(client, url_for(artifact, team.owner))
    assert location.startswith(public + "/")
    assert httpx.get(location).content == png_bytes()
