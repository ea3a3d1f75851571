"""The refine loop in Chromium, on the real stack (Celery worker, gVisor, the scripted model
over HTTP): "What should change?" on a poster, v2 watched live while a person tells the
agent something, v1 and v2 compared side by side, v1 restored and the gallery following,
and the creation page at a phone's width.

Screenshots: tests/screenshots/versions-*.png.
"""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from creations.models import Creation, RunEvent, RunStatus
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from tests.support.fixtures.accounts import PASSWORD, Team
from tests.support.fixtures.browser import Web
from tests.support.runs import held_until, per_task, scripted_endpoint, submit, wait_for_final

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BRIEF = "a poster for the summer fair"
MAKE_POSTER = (
    "mkdir -p /testbed/work /testbed/output && cat > /testbed/work/make_poster.py <<'PY'\n"
    "import cairosvg\n"
    "SIZE = 40\n"
    "svg = ('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\">'\n"
    "       '<rect width=\"400\" height=\"300\" fill=\"white\"/>'\n"
    "       f'<text x=\"20\" y=\"120\" font-size=\"{SIZE}\" font-family=\"DejaVu Sans\">Summer fair</text></svg>')\n"
    "open('/testbed/output/poster.svg', 'w').write(svg)\n"
    "cairosvg.svg2png(bytestring=svg.encode(), write_to='/testbed/output/poster.png')\n"
    "PY\n"
    "python3 /testbed/work/make_poster.py"
)
SCRIPT = "/testbed/work/make_poster.py"
BIGGER = "make the title bigger"
SAID = "Keep the white background, please."


def test_refine_watch_talk_compare_and_restore(
    web: Web, team: Team, scripted_model: ScriptedModel, sandbox_image: str
) -> None:
    gate = threading.Event()
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = per_task(
        {
            BIGGER: [
                held_until(gate, bash("ls -R /testbed")),
                bash(f"sed -i 's/^SIZE = 40/SIZE = 90/' {SCRIPT} && python3 {SCRIPT}"),
                submit_reply("The poster with the title at 90 px, on white."),
            ],
            BRIEF: [bash(MAKE_POSTER), submit_reply("A poster with its title at 40 px.")],
        }
    )
    v1 = wait_for_final(submit(team, endpoint, brief=BRIEF, title="Summer fair poster"))
    assert v1.status == RunStatus.SUCCEEDED, v1.reason

    page = web.page()
    web.sign_in(page, team.member.username, PASSWORD)
    page.goto(f"{web.platform}/creations/{v1.creation_id}/")
    page.get_by_label("What should change?").fill(BIGGER)
    page.get_by_role("button", name="Make v2").click()
    page.wait_for_url("**/runs/*/")
    expect(page.get_by_text("Asked for v2 (from v1):")).to_be_visible()

    # Its first model request is held: tell the agent something, then let it go on.
    page.get_by_label("Tell the agent").fill(SAID)
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_text("Sent: the agent reads it")).to_be_visible()
    gate.set()
    trajectory = page.locator("[data-role=trajectory]")
    expect(trajectory.locator(".person-message")).to_contain_text(SAID, timeout=60_000)
    expect(page.get_by_text("Succeeded").first).to_be_visible(timeout=120_000)
    expect(page.get_by_label("Tell the agent")).to_be_hidden()  # it has ended: nobody would read it
    web.shot(page, "versions-v2-live")
    v2 = Creation.objects.get(pk=v1.creation_id).runs.get(version=2)
    assert RunEvent.objects.filter(run=v2, kind="person_message", payload__text=SAID).exists()

    page.get_by_role("link", name="Creation page").first.click()
    versions = page.locator("[data-role=versions]")
    expect(versions.locator("li")).to_have_count(2)
    expect(versions.locator("li").first).to_contain_text(BIGGER)
    expect(versions.locator("li").first).to_contain_text("shown")
    page.get_by_role("link", name="Compare v1 and v2").click()
    expect(page.locator("[data-role=pixel-summary]").first).to_contain_text("% of pixels changed", timeout=90_000)
    summary = page.locator("[data-role=pixel-summary]").first.inner_text()
    assert not summary.startswith("0.00%"), summary
    # Each file is compared in a sandbox of its own: the SVG's line diff may come after the PNG's pixels.
    expect(page.locator("[data-role=line-diff]").first).to_contain_text('font-size="90"', timeout=90_000)
    web.shot(page, "versions-compare")

    # Restore v1: the gallery shows the creation once, at v1.
    page.goto(f"{web.platform}/creations/{v1.creation_id}/?run={v1.pk}")
    page.get_by_role("button", name="Restore v1").click()
    expect(page.get_by_text("v1 is the version the gallery shows now.")).to_be_visible()
    page.goto(f"{web.platform}/w/{team.workspace.slug}/gallery/")
    grid = page.locator("#gallery-grid")
    expect(grid.locator(".tile")).to_have_count(2)  # poster.png and poster.svg, of one version
    expect(grid.locator(".version-tag").first).to_contain_text("v1 · 2 versions")
    web.shot(page, "versions-gallery-restored")
    assert Creation.objects.get(pk=v1.creation_id).shown_run_id == v1.pk

    phone = web.page()
    phone.set_viewport_size({"width": 390, "height": 844})
    phone.goto(f"{web.platform}/creations/{v1.creation_id}/")
    expect(phone.locator("[data-role=versions] li")).to_have_count(2)
    refine_box = phone.get_by_label("What should change?")
    refine_box.scroll_into_view_if_needed()
    expect(refine_box).to_be_visible()
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width} px)"
    web.shot(phone, "versions-phone")
