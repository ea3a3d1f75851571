"""A team in the browser: the owner sets up a workspace with its own model and
invites people by link; a colleague signs up through the link and makes
something with that model; a viewer joins and can look but not make.

Everything a person does here goes through the pages: only the owner's and
the viewer's accounts exist beforehand, as people who already use Atelier.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from tests.support.fixtures.accounts import PASSWORD, make_user
from tests.support.fixtures.browser import Web
from tests.support.runs import per_conversation

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

KEY = "sk-proj-VGVhbSBrZXkgdHlwZWQgaW4gdGhlIGJyb3dzZXI-9f3e"
GREETING = "hello from the studio"
MODEL_NAME = "Studio model"
TITLE = "A greeting for the studio"

NewPerson = Callable[[], Page]


@pytest.fixture
def keyed_model() -> Iterator[ScriptedModel]:
    steps = [
        bash(f"mkdir -p /testbed/output && echo '{GREETING}' > /testbed/output/hello.txt", "Writing the greeting."),
        submit_reply("Made hello.txt."),
    ]
    with ScriptedModel(api_key=KEY, exhausted=per_conversation(steps)) as server:
        yield server


@pytest.fixture
def new_person(browser: Browser) -> Iterator[NewPerson]:
    """Another person at another computer: a browser context of their own, with no cookies."""
    contexts = []

    def open_page() -> Page:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)
        return page

    yield open_page
    for context in contexts:
        context.close()


def field(page: Page, label: str) -> Locator:
    """The form field with this label, as Django writes it (with or without its colon)."""
    return page.get_by_label(re.compile(rf"^{re.escape(label)}:?$"))


def nav(page: Page) -> Locator:
    return page.get_by_role("navigation", name="Main")


def owner_creates_the_workspace(web: Web, page: Page) -> str:
    web.sign_in(page, "olivia", PASSWORD)
    page.locator("details.switcher > summary").click()
    page.get_by_role("link", name="+ New team workspace").click()
    field(page, "Name").fill("Atelier Studio")
    page.get_by_role("button", name="Create workspace").click()
    expect(page.get_by_role("heading", name="Atelier Studio", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Atelier Studio is ready. Invite your colleagues from Members.")
    expect(page.locator(".page-head .badge")).to_have_text("Owner")
    return urlsplit(page.url).path.strip("/").split("/")[-1]


def owner_adds_the_model(web: Web, page: Page, model: ScriptedModel) -> None:
    nav(page).get_by_role("link", name="Models", exact=True).click()
    page.get_by_role("link", name="Add a model").click()
    field(page, "Name").fill(MODEL_NAME)
    field(page, "Base URL").fill(model.base_url)
    field(page, "Model").fill(model.model)
    field(page, "API key").fill(KEY)
    page.get_by_role("button", name="Add the model").click()
    expect(page.get_by_role("status")).to_contain_text(f"{MODEL_NAME} was added.")
    row = page.locator(f"tr[data-endpoint='{MODEL_NAME}']")
    expect(row.locator("[data-role=verdict]")).to_have_text("not tested")
    expect(row).to_contain_text(f"…{KEY[-4:]}")  # the key's end, so the owner can tell keys apart

    row.get_by_role("button", name="Test connection").click()
    expect(page.get_by_role("status")).to_contain_text(f"{MODEL_NAME}: Works")
    expect(row.locator("[data-role=verdict]")).to_contain_text("Works")
    web.shot(page, "team-models")


def owner_creates_invitation(page: Page, role: str) -> str:
    field(page, "Role").select_option(label=role)
    page.get_by_role("button", name="Create invitation link").click()
    link = page.locator("[data-role=invitation-link]").input_value()
    assert re.fullmatch(r"http://localhost:\d+/invitations/[\w-]{40,}/", link), link
    return link


def test_a_team_shares_a_workspace_its_model_and_what_a_colleague_made(
    web: Web, new_person: NewPerson, keyed_model: ScriptedModel, sandbox_image: str
) -> None:
    make_user("olivia")
    make_user("victor")
    owner_saw: dict[str, str] = {}

    owner = web.page()
    slug = owner_creates_the_workspace(web, owner)
    assert slug == "atelier-studio"
    owner_saw["new workspace"] = owner.content()
    owner_adds_the_model(web, owner, keyed_model)
    owner_saw["models"] = owner.content()

    nav(owner).get_by_role("link", name="Members", exact=True).click()
    member_link = owner_creates_invitation(owner, "Member")
    owner_saw["members, member link"] = owner.content()
    viewer_link = owner_creates_invitation(owner, "Viewer")
    owner_saw["members, viewer link"] = owner.content()
    assert viewer_link != member_link
    expect(owner.get_by_role("listitem").filter(has_text="by olivia")).to_have_count(2)

    # The colleague has no account yet: the link leads to sign-up, and sign-up into the workspace.
    colleague = new_person()
    colleague.goto(member_link)
    expect(colleague.get_by_role("heading", name="Join Atelier Studio")).to_be_visible()
    expect(colleague.get_by_text("You are invited as member.")).to_be_visible()
    colleague.get_by_role("link", name="Sign up and join").click()
    field(colleague, "Username").fill("maria")
    field(colleague, "Email").fill("maria@example.com")
    field(colleague, "Password").fill("a-long-pass-phrase")
    field(colleague, "Password confirmation").fill("a-long-pass-phrase")
    colleague.get_by_role("button", name="Sign up").click()
    colleague.wait_for_url(f"**/w/{slug}/")
    expect(colleague.get_by_role("heading", name="Atelier Studio", level=1)).to_be_visible()
    expect(colleague.locator(".page-head .badge")).to_have_text("Member")

    nav(colleague).get_by_role("link", name="New creation", exact=True).click()
    colleague.get_by_label("Brief", exact=True).fill("Write a short greeting for the studio into a text file")
    colleague.get_by_label("Title").fill(TITLE)
    colleague.get_by_label("Model", exact=True).select_option(label=f"{MODEL_NAME} ({keyed_model.model})")
    colleague.get_by_role("button", name="Start").click()
    colleague.wait_for_url("**/runs/*/")
    expect(colleague.locator("[data-role=status]")).to_have_text("Succeeded", timeout=120_000)
    expect(colleague.locator("[data-role=started-by]")).to_have_text("maria")
    artifacts = colleague.locator("[data-role=artifacts]")
    expect(artifacts.get_by_role("link", name="hello.txt", exact=True)).to_be_visible()
    expect(artifacts.get_by_role("article", name="hello.txt")).to_contain_text("Text or code")
    web.shot(colleague, "team-run")
    # The run called the model the owner added, with the key the owner typed.
    runs_calls = [r for r in keyed_model.chat_requests() if "tools" in r.body and len(r.messages) > 1]
    assert runs_calls, "the run never called the owner's model"
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in runs_calls)

    # The viewer already has an account: the link offers the login, and the way back to join.
    viewer = new_person()
    viewer.goto(viewer_link)
    expect(viewer.get_by_text("You are invited as viewer.")).to_be_visible()
    viewer.get_by_role("main").get_by_role("link", name="Log in").click()
    field(viewer, "Username").fill("victor")
    field(viewer, "Password").fill(PASSWORD)
    viewer.get_by_role("button", name="Log in").click()
    viewer.get_by_role("button", name="Join as victor").click()
    viewer.wait_for_url(f"**/w/{slug}/")
    expect(viewer.get_by_role("status")).to_contain_text("Welcome to Atelier Studio.")
    expect(viewer.locator(".page-head .badge")).to_have_text("Viewer")
    expect(viewer.get_by_role("link", name="New creation", exact=True)).to_have_count(0)
    expect(viewer.get_by_role("link", name="Make something")).to_have_count(0)
    recent = viewer.get_by_role("region", name="Recent runs")
    expect(recent.get_by_role("listitem").filter(has_text=TITLE)).to_contain_text("Succeeded")
    expect(recent).to_contain_text("maria")

    nav(viewer).get_by_role("link", name="Gallery", exact=True).click()
    expect(viewer.locator(".gallery-grid")).to_contain_text("hello.txt")
    expect(viewer.get_by_role("link", name="New creation", exact=True)).to_have_count(0)

    nav(viewer).get_by_role("link", name="Dashboard", exact=True).click()
    viewer.get_by_role("link", name=TITLE).click()
    expect(viewer.get_by_role("heading", name=TITLE, level=1)).to_be_visible()
    expect(viewer.get_by_text("by maria")).to_contain_text(MODEL_NAME)
    expect(viewer.locator("article.artifact")).to_contain_text(GREETING)
    expect(viewer.get_by_role("button", name="Run again")).to_have_count(0)
    expect(viewer.get_by_role("heading", name="Fork with an edited brief")).to_have_count(0)
    expect(viewer.get_by_role("link", name="New creation", exact=True)).to_have_count(0)
    web.shot(viewer, "team-viewer")

    # Typing the address of the form shows why there is none, not a form that would fail.
    response = viewer.goto(f"{web.platform}/w/{slug}/new/")
    assert response is not None
    assert response.status == 403
    expect(viewer.get_by_role("alert")).to_contain_text("You can look, not make")
    expect(viewer.get_by_role("alert")).to_contain_text("Your role in Atelier Studio is viewer.")
    expect(viewer.get_by_label("Brief", exact=True)).to_have_count(0)
    expect(viewer.get_by_role("button", name="Start")).to_have_count(0)

    # After all that, the owner's pages still show the key nowhere, only its last characters.
    nav(owner).get_by_role("link", name="Dashboard", exact=True).click()
    expect(owner.locator("[data-role=members-count]")).to_have_text("3 members")
    owner_saw["dashboard"] = owner.content()
    owner.get_by_role("link", name=TITLE).click()
    expect(owner.locator("article.artifact")).to_contain_text(GREETING)
    owner_saw["creation"] = owner.content()
    nav(owner).get_by_role("link", name="Models", exact=True).click()
    owner_saw["models, later"] = owner.content()
    owner.get_by_role("link", name="Edit").click()
    expect(field(owner, "API key")).to_have_value("")
    owner_saw["model edit"] = owner.content()
    for where, html in owner_saw.items():
        assert KEY not in html, f"the key is in the owner's {where} page"
        assert KEY[8:-4] not in html, f"most of the key is in the owner's {where} page"
