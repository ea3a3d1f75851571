"""A newcomer with no API key: sign up, pick a starter brief, run it on the
built-in demo model (a replay whose commands really run in the sandbox), and
find the piece of music in the gallery."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.fixtures.browser import Web

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

PLAYS_FOR_A_MOMENT = """async (audio) => {
  audio.muted = true; await audio.play(); await new Promise((ok) => setTimeout(ok, 500));
  const position = audio.currentTime; audio.pause(); return position;
}"""


def test_a_newcomer_makes_music_with_the_demo_model_from_a_starter_brief(web: Web, sandbox_image: str) -> None:
    page = web.page()
    page.goto(f"{web.platform}/accounts/signup/")
    page.locator("#id_username").fill("newcomer")
    page.locator("#id_email").fill("newcomer@example.com")
    page.locator("#id_password1").fill("a-long-pass-phrase")
    page.locator("#id_password2").fill("a-long-pass-phrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("Nothing made here yet")).to_be_visible()

    page.get_by_role("link", name="New creation").first.click()
    model_picker = page.get_by_label("Model", exact=True)
    expect(model_picker.locator("option:checked")).to_contain_text("replay")
    page.get_by_text("Calm piano piece in A minor").click()
    expect(page.get_by_label("Brief", exact=True)).to_have_value(
        "Compose a calm, gentle piano piece in A minor, 20 to 30 seconds long. "
        "Give me the MIDI file and a WAV recording of it."
    )
    page.get_by_role("button", name="Start").click()
    page.wait_for_url("**/runs/*/")

    trajectory = page.locator("[data-role=trajectory]")
    expect(trajectory.locator(".step").first).to_be_visible()
    expect(page.get_by_text("Succeeded").first).to_be_visible(timeout=120_000)
    web.shot(page, "demo-music-run")

    page.get_by_role("link", name="Gallery").first.click()
    grid = page.locator("#gallery-grid")
    expect(grid).to_contain_text("evening-in-a-minor.mid")
    page.get_by_label("Kind").select_option(label="Audio")
    expect(grid).not_to_contain_text(".mid")
    expect(grid).to_contain_text("evening-in-a-minor.wav")
    web.shot(page, "demo-music-gallery")

    grid.locator("a.tile-link", has_text="evening-in-a-minor.wav").click()  # the tile, not "Use in …"
    audio = page.locator("audio").first
    audio.scroll_into_view_if_needed()
    assert audio.evaluate(PLAYS_FOR_A_MOMENT) > 0
