"""A PDF is read on its page and its creation's page: its first pages, drawn as pictures in the preview
sandbox, are kept beside it (checked by signature and header only), listed in order and served from
the artifact origin to those who may see the creation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from creations.artifacts.previews import _accept
from creations.models import Artifact, ArtifactPage
from tests.support.artifacts import Output
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import pdf_bytes, png_bytes
from tests.support.pages import a_run, signed_in

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")]


PAGE_IMG = r'<img class="pdf-page" src="([^"]+)" width="620" height="800" alt="Page (\d) of report.pdf"'


def drawn(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def a_pdf(team: Team, name: str = "report.pdf") -> Artifact:
    return a_run(team, outputs=[Output(name, pdf_bytes(pages=3))]).artifacts.get()


def get(client: Client, url: str) -> Any:
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}", headers={"host": parts.netloc})


def test_the_pages_the_previewer_drew_are_kept_in_order_within_their_bounds(
    team: Team, tmp_path: Path, settings: Any
) -> None:
    settings.PREVIEW_PDF_PAGES, settings.PREVIEW_PDF_PAGE_PIXELS = 2, 800
    pdf = a_pdf(team)
    _accept(pdf, "page-2.png", drawn(tmp_path, "2.png", png_bytes(600, 800)))
    _accept(pdf, "page-1.png", drawn(tmp_path, "1.png", png_bytes(600, 800)))
    _accept(pdf, "page-3.png", drawn(tmp_path, "3.png", png_bytes(600, 800)))  # past the pages asked for
    _accept(pdf, "page-1.png", drawn(tmp_path, "again.png", png_bytes(600, 800)))  # drawn again: first stays
    _accept(pdf, "page-4.png", drawn(tmp_path, "big.png", png_bytes(600, 900)))  # larger than drawn
    _accept(pdf, "page-5.png", drawn(tmp_path, "fake.png", b"<svg>not a png</svg>"))

    pages = list(ArtifactPage.objects.filter(artifact=pdf).values_list("number", "width", "height"))
    assert pages == [(1, 600, 800), (2, 600, 800)]
    pdf.refresh_from_db()
    assert pdf.derived_bytes == sum(page.image.size for page in ArtifactPage.objects.filter(artifact=pdf))

    picture = a_run(team, outputs=[Output("poster.png", png_bytes())]).artifacts.get()
    _accept(picture, "page-1.png", drawn(tmp_path, "p.png", png_bytes(600, 800)))
    assert not ArtifactPage.objects.filter(artifact=picture).exists()  # only a PDF has pages


def test_the_creation_and_artifact_pages_show_each_page_served_from_the_artifact_origin(
    team: Team, tmp_path: Path, client: Client
) -> None:
    pdf = a_pdf(team)
    for number in (1, 2, 3):
        _accept(pdf, f"page-{number}.png", drawn(tmp_path, f"{number}.png", png_bytes(620, 800)))
    client = signed_in(client, team.member)

    for url in (pdf.run.creation.get_absolute_url(), reverse("artifact_detail", args=[pdf.pk])):
        html = client.get(url).content.decode()
        pages = re.findall(PAGE_IMG, html)
        assert [number for _, number in pages] == ["1", "2", "3"], url
        assert "data-pdf-toolbar" in html

    served = get(Client(), pages[1][0].replace("&amp;", "&"))
    assert served.status_code == 200
    assert served["Content-Type"] == "image/png"
    assert b"".join(served).startswith(b"\x89PNG")

    assert get(Client(), pages[1][0].replace("page-2", "page-9")).status_code == 404
    assert get(Client(), pages[1][0].replace("page-2", "page-0")).status_code == 404


def test_someone_who_lost_access_gets_no_page(team: Team, tmp_path: Path, client: Client) -> None:
    pdf = a_pdf(team)
    _accept(pdf, "page-1.png", drawn(tmp_path, "1.png", png_bytes(620, 800)))
    html = signed_in(client, team.member).get(reverse("artifact_detail", args=[pdf.pk])).content.decode()
    url = re.search(r'<img class="pdf-page" src="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    team.workspace.memberships.filter(user=team.member).delete()
    assert get(Client(), url).status_code == 404
