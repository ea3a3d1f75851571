"""`atelier share create|list|revoke`, against the platform's real API in this process: the link
printed once (and working for anyone), the lists, a revoke that turns it off at once, `--json`
as the API's own objects; and, against an API answered in memory, a create retried after a
lost answer that makes one link."""

from __future__ import annotations

import httpx
import pytest

from api.schemas.share_links import EmbedOut, ShareLinkOut
from atelier_cli.commands import share
from atelier_cli.exit_status import ExitStatus
from creations.models import Run
from creations.sharing.models import ShareLink
from tests.cli.fake_api import FakeApi
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes

pytestmark = pytest.mark.django_db
LINK_KEYS = {"id", "creation_id", "title", "workspace", "run_id", "version", "label", "token_hint", "state"} | {
    "problem",
    "created_by",
    "created_at",
    "expires_at",
    "revoked_at",
    "view_count",
    "url",
    "embeds",
}


def opened(platform_api: httpx.WSGITransport, url: str) -> int:
    """What a stranger's browser gets for `url` (the artifact origin, by its host), from the same platform."""
    with httpx.Client(transport=platform_api) as browser:
        return browser.get(url).status_code


@pytest.fixture
def run(team: Team) -> Run:
    made = finished_run(
        workspace=team.workspace, author=team.member, brief="A poster", outputs=[Output("poster.png", png_bytes())]
    )
    made.creation.title = "Fair poster"
    made.creation.save(update_fields=["title"])
    return made


def test_the_client_checks_only_fields_the_api_sends() -> None:
    assert set(share.ShareLink.model_fields) <= set(ShareLinkOut.model_fields)
    assert set(share.Embed.model_fields) <= set(EmbedOut.model_fields)


def test_create_list_and_revoke_with_json(
    atelier_on_platform: Atelier, platform_api: httpx.WSGITransport, team: Team, run: Run
) -> None:
    member = token_for(team.member)
    made = atelier_on_platform(
        "share", "create", str(run.pk), "--pin", "--expires-in-days", "7", "--label", "press", "--json", token=member
    )
    assert made.status == 0, made.err
    link = made.document()
    assert set(link) >= LINK_KEYS
    assert (link["version"], link["label"], link["state"]) == (1, "press", "active")
    assert link["embeds"][0]["path"] == "poster.png"
    assert opened(platform_api, link["url"]) == 200
    assert made.err == ""

    listed = atelier_on_platform("share", "list", str(run.pk), "--json", token=member).document()
    assert [(item["id"], item["url"], item["view_count"]) for item in listed] == [(link["id"], None, 1)]
    owner = token_for(team.owner)
    in_workspace = atelier_on_platform("share", "list", "--workspace", team.workspace.slug, "--json", token=owner)
    assert [item["id"] for item in in_workspace.document()] == [link["id"]]

    revoked = atelier_on_platform("share", "revoke", str(link["id"]), "--json", token=owner)
    assert revoked.status == 0, revoked.err
    assert revoked.document()["state"] == "revoked"
    assert opened(platform_api, link["url"]) == 410


def test_create_prints_the_link_first_then_the_embeds(atelier_on_platform: Atelier, team: Team, run: Run) -> None:
    outcome = atelier_on_platform("share", "create", str(run.pk), token=token_for(team.member))
    assert outcome.status == 0, outcome.err
    first, second, *rest = outcome.out.splitlines()
    assert first.startswith("http://127.0.0.1:8000/s/")
    link = ShareLink.objects.get()
    assert second == (
        f"Link {link.pk} to “Fair poster”: shows the shown version, expires never. Copy it now: it is shown this once."
    )
    assert "Embed poster.png:" in rest
    assert any(line.strip().startswith(f'<iframe src="{first}embed/') for line in rest)

    table = atelier_on_platform("share", "list", str(run.pk), token=token_for(team.member)).out.splitlines()
    assert table[0].split() == ["ID", "STATE", "SHOWS", "VIEWS", "EXPIRES", "MADE", "BY", "CREATION", "(LABEL)"]
    assert table[1].split()[:2] == [str(link.pk), "active"]


def test_a_viewer_is_refused_with_the_reason(atelier_on_platform: Atelier, team: Team, run: Run) -> None:
    outcome = atelier_on_platform("share", "create", str(run.pk), "--json", token=token_for(team.viewer))
    assert outcome.status == ExitStatus.FORBIDDEN
    assert outcome.error()["message"] == "Only owners, admins and members of this workspace can make share links."
    assert not ShareLink.objects.exists()


def test_a_create_retried_after_a_lost_answer_sends_the_same_key() -> None:
    answers = iter(["lost", "made"])
    body = {"id": 1, "creation_id": 3, "title": "A poster", "workspace": "studio", "version": None, "label": ""}
    body |= {"token_hint": "abcd", "state": "active", "problem": "", "created_by": "bob", "expires_at": None}
    body |= {"view_count": 0, "url": "http://files.test/s/x/", "embeds": []}

    def create(request: httpx.Request) -> httpx.Response:
        if next(answers) == "lost":
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(201, json=body)

    api = FakeApi({("POST", "/runs/7/share-links"): create})
    assert share.share_create(api.client(), 7, {"pin": False}).url == "http://files.test/s/x/"
    first, retry = api.sent("POST", "/runs/7/share-links")
    assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
