"""Sharing a creation, in Chromium: a member makes a link on the creation's Share page, a stranger
opens it in a fresh browser (no account, no login) and sees the files, a hostile page among them
contained as everywhere; the embed snippet pasted into another site shows the poster with its
"Made with Atelier" link; and revoking the link turns it off for the stranger at once.

And the conversation under a creation: a comment that mentions a colleague rings their bell, and
opening the notification takes them to the comment and empties the bell.

Screenshots: tests/screenshots/share-dialog.png, share-page.png, share-embedded.png, share-revoked.png,
comment-mention.png, comment-mention-bell.png.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, expect

from creations.comments.models import Comment
from creations.sharing.models import ShareLink
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import IMAGE_WIDTH, Web
from tests.support.media_samples import hostile_html, png_bytes
from tests.support.request_log import RequestLog

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

def test_a_stranger_opens_a_shared_creation_and_another_site_embeds_it(web: Web, team: Team, browser: Browser) -> None:
    run = finished_run(
        workspace=team.workspace,
        author=team.member,
        brief="A poster and a page for the summer fair",
        outputs=[Output("poster.png", png_bytes(64, 40)), Output("page.html", hostile_html(web.platform))],
    )
    run.creation.title = "Summer fair"
    run.creation.save(update_fields=["title"])
    poster = run.artifacts.get(path="poster.png")

    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}{run.creation.get_absolute_url()}")
    page.get_by_role("link", name="Share", exact=True).click()
    page.get_by_label("Expires").select_option(label="7 days")
    page.get_by_label("Label").fill("for the fair's committee")
    page.get_by_role("button", name="Make link").click()
    url = page.get_by_role("textbox", name="Share link").input_value()
    assert url.startswith(f"{web.artifacts}/s/")
    snippet = page.locator(f"#embed-{poster.pk}").input_value()
    expect(page.locator("[data-role=share-links] tbody tr")).to_have_count(1)
    assert ShareLink.objects.get().run is None  # it follows the version the creation shows
    web.shot(page, "share-dialog")

    stranger = browser.new_context(viewport={"width": 1280, "height": 900})  # nobody signed in here
    try:
        visitor = stranger.new_page()
        visitor.set_default_timeout(30_000)
        response = visitor.goto(url)
        assert response is not None
        assert response.status == 200
        expect(visitor.get_by_text("Summer fair").first).to_be_visible()
        assert visitor.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 64
        frame = visitor.frame_locator("iframe.artifact-frame")
        frame.locator("#result").filter(has_not_text="running").wait_for()
        result = json.loads(frame.locator("#result").inner_text())
        assert result["cookie"].startswith("ERR:"), result  # an opaque origin: no cookies
        assert result["fetch"].startswith("ERR:"), result  # no network
        assert result["parentCookie"].startswith("ERR:"), result
        assert visitor.url == url, "the shared page was navigated away"
        assert stranger.cookies() == []  # nothing set for the stranger, on either origin
        web.shot(visitor, "share-page")

        # Another site (a server of its own on loopback) pastes the snippet: the poster shows in it,
        # with the way back to Atelier.
        blog_page = f"<!doctype html><html><body><h1>Our summer fair</h1>{snippet}</body></html>"
        with RequestLog(page=blog_page.encode()) as blog:
            visitor.goto(f"{blog.url}/our-fair")
            embedded = visitor.frame_locator("iframe")
            assert embedded.locator("img.artifact-image").evaluate(IMAGE_WIDTH) == 64
            made_with = embedded.get_by_role("link", name="Made with Atelier")
            expect(made_with).to_have_attribute("href", f"{web.platform}/")
            web.shot(visitor, "share-embedded", full_page=False)
        link = ShareLink.objects.get()
        assert link.view_count == 2  # the page and the embed

        # Revoked on the dialog: the stranger's next request is refused.
        page.get_by_role("button", name="Revoke").click()
        expect(page.locator("[data-role=share-links] tbody tr")).to_have_attribute("data-state", "revoked")
        gone = visitor.goto(url)
        assert gone is not None
        assert gone.status == 410
        expect(visitor.get_by_role("heading", name="This link no longer works")).to_be_visible()
        web.shot(visitor, "share-revoked", full_page=False)
    finally:
        stranger.close()


def test_a_mention_in_a_comment_rings_the_bell_of_the_one_mentioned(web: Web, team: Team, browser: Browser) -> None:
    run = finished_run(
        workspace=team.workspace, author=team.member, brief="A poster for the summer fair", outputs=[]
    )
    run.creation.title = "Summer fair"
    run.creation.save(update_fields=["title"])
    creation_url = f"{web.platform}{run.creation.get_absolute_url()}"

    colleague = browser.new_context(viewport={"width": 1280, "height": 900})  # the member, at their own computer
    try:
        mentioned = colleague.new_page()
        mentioned.set_default_timeout(30_000)
        web.sign_in(mentioned, team.member.username, PASSWORD)
        mentioned.goto(creation_url)
        bell = mentioned.locator("[data-role=bell]")
        expect(bell).to_have_attribute("aria-label", "Notifications")  # nothing unread yet

        page = web.page()
        web.sign_in(page, team.owner.username, PASSWORD)
        page.goto(creation_url)
        text = f"<b>Lovely</b>, but the logo is too small, @{team.member.username}"
        page.get_by_label("Comment", exact=True).fill(text)
        page.get_by_role("button", name="Comment", exact=True).click()
        comment = page.locator("[data-role=comment]")
        expect(comment).to_contain_text("<b>Lovely</b>, but the logo is too small")  # text, never markup
        expect(comment.locator(".mention")).to_have_text(f"@{team.member.username}")
        web.shot(page, "comment-mention")

        mentioned.reload()
        expect(bell).to_have_attribute("aria-label", "Notifications: 1 unread")
        expect(bell.locator("[data-role=bell-count]")).to_have_text("1")
        bell.click()
        item = mentioned.locator("[data-role=notifications] li").first
        expect(item).to_contain_text(f"{team.owner.username} mentioned you on “Summer fair”")
        web.shot(mentioned, "comment-mention-bell")
        item.get_by_role("button", name="Open").click()
        expect(mentioned.locator("[data-role=comment]")).to_contain_text("the logo is too small")
        assert mentioned.url.endswith(f"#comment-{Comment.objects.get().pk}")
        expect(bell).to_have_attribute("aria-label", "Notifications")  # read now
    finally:
        colleague.close()
