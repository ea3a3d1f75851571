"""A team workspace with something on every page a person can open, for the tests that visit all of
them (tests/browser/test_every_screen.py): a creation in two versions with a kept comparison, a run
still going, files of several kinds (one with a long name), a model with a long address, members,
an invitation, a share link, an access token and this month's usage; a comment that mentions its
owner (so the bell has an unread notification), a webhook with a delivery log and a schedule.

Everything is committed (the stack's processes read it); `pages(world)` lists the addresses.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import time, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from api.tokens import token_create
from creations.arena.models import Comparison, Contestant
from creations.arena.services import vote_cast
from creations.comments.services import comment_create
from creations.compare import store
from creations.compare.results import Detail, LineDiff, PixelDiff
from creations.compare.selectors import comparison_files
from creations.evaluations.models import (
    Evaluation,
    EvaluationItem,
    EvaluationStatus,
    ItemStatus,
    Mode,
    Modes,
)
from creations.evaluations.suites import sample_suites_add
from creations.events.store import store_events
from creations.models import Artifact, Creation, Run, RunStatus, Visibility
from creations.schedules.cadence import Cadence
from creations.schedules.services import schedule_set
from creations.sharing.services import share_link_create
from creations.webhooks.events import ALL_EVENTS, WebhookEvent
from creations.webhooks.models import DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery
from tests.support.artifacts import Output, add_artifact
from tests.support.comparisons import poster_png
from tests.support.factories import ModelEndpointFactory, RunFactory, UsageRecordFactory
from tests.support.fixtures.accounts import make_user
from workspaces.invitations import invitation_create
from workspaces.models import ModelEndpoint, Role, Workspace
from workspaces.services import membership_add, workspace_create

# A file name with no place to break, as agents name files: it must wrap, not widen the page.
LONG_NAME = "tokyo-food-stops-with-opening-hours-prices-and-nearest-stations-for-every-ward-2025.csv"
MODEL = "gpt-4o-mini-2024-07-18-house-finetune"
LONG_COMMAND = "python3 make_map.py --stops data/" + "x" * 90 + ".csv --out /testbed/output/map.html"
REPORT = b"# Tokyo food stops\n\nEleven stops, from Tsukiji to Asakusa.\n\n| ward | stops |\n|---|---|\n| Chuo | 4 |\n"
LONG_CSV = (
    b"ward,stop,opens,closes,price_yen,nearest_station_with_a_very_long_name\n"
    + b"Chuo,Tsukiji,05:00,14:00,1200,Tsukiji-shijo\n" * 4
)


@dataclass
class EveryPage:
    workspace: Workspace
    owner: User
    viewer: User  # who may look but not make: the usage export is refused them (the 403 page)
    creation: Creation  # two finished versions, public, with a kept comparison
    finished: Run  # its newer version
    live: Run  # another creation's run, still going
    artifacts: dict[str, Artifact]  # by kind: "image", "markdown", "csv" (the long name), "html"
    share_token: str
    webhook: Webhook  # with a delivery that failed once, then was delivered
    comparison: Comparison  # two models' posters side by side, blind, voted on by bob (not the owner)
    evaluation: Evaluation  # the sample computation suite, finished in both modes by two models


def build_every_page() -> EveryPage:
    owner = make_user("olivia")
    workspace = workspace_create(name="Studio", slug="studio", owner=owner)
    viewer = make_user("vera")
    membership_add(workspace=workspace, user=viewer, role=Role.VIEWER)
    bob = make_user("bob")
    membership_add(workspace=workspace, user=bob, role=Role.MEMBER)
    membership_add(workspace=workspace, user=make_user("maximiliana.vandenberghe"), role=Role.ADMIN)
    endpoint = ModelEndpointFactory.create(
        workspace=workspace,
        name="House model on the company gateway",
        base_url="https://llm-gateway.internal.example-company.com/openai/deployments/house-model/v1",
        model=MODEL,
    )
    invitation_create(workspace=workspace, actor=owner, role=Role.MEMBER, email="new.colleague@example.com")

    older = RunFactory.create(
        finished=True,
        creation__workspace=workspace,
        creation__author=owner,
        creation__title="Tokyo food map",
        creation__brief="A map of Tokyo food stops, with a poster and a report.",
        creation__visibility=Visibility.PUBLIC,
        creation__model_endpoint=endpoint,  # a creation made with a model may be scheduled
    )
    creation = older.creation
    finished = RunFactory.create(creation=creation, finished=True, instruction="Brighten the poster's corner.")
    store_events(finished.pk, _one_step(), require_active=False)
    for run, patch in ((older, None), (finished, (520, 60, 719, 159))):
        add_artifact(run, Output("poster.png", poster_png(800, 500, patch=patch)))
        add_artifact(run, Output("report.md", REPORT if run is older else REPORT + b"| Taito | 3 |\n"))
        add_artifact(run, Output(LONG_NAME, LONG_CSV))
    add_artifact(finished, Output("map.html", b"<!doctype html><title>Map</title><h1>Tokyo food stops</h1>"))
    Creation.objects.filter(pk=creation.pk).update(shown_run=finished)
    _keep_comparison(older, finished)

    live = RunFactory.create(
        status=RunStatus.RUNNING,
        creation__workspace=workspace,
        creation__author=owner,
        creation__title="Calm piano piece",
        started_at=timezone.now() + timedelta(seconds=1),  # after the row's creation
        # As a worker beating far ahead: the reaper leaves it running while the pages are visited.
        heartbeat_at=timezone.now() + timedelta(hours=1),
    )
    store_events(live.pk, _one_step())

    for title, tokens in (("Tokyo food map", 42_000), ("Calm piano piece", 9_000)):
        UsageRecordFactory.create(workspace=workspace, person=owner, creation_title=title, prompt_tokens=tokens)
    shared = share_link_create(creation=creation, user=owner, label="for the food club")
    token_create(user=owner, name="laptop", scope="read", expires_in_days=None)
    # Its owner is mentioned (an unread notification: the bell shows a count), and so is the longest name.
    comment_create(
        creation=creation,
        user=bob,
        text="@olivia the corner is brighter now; @maximiliana.vandenberghe could you check the report's table?",
    )
    schedule_set(
        creation=creation,
        user=owner,
        cadence=Cadence.WEEKLY,
        instruction="Add the stops that opened this week.",
        at=time(7, 30),
        weekday=0,
    )
    webhook = _webhook_with_log(workspace, owner)
    comparison = _voted_comparison(workspace, owner, bob, endpoint)
    evaluation = _finished_evaluation(
        workspace, owner, [endpoint, comparison.contestants.get(position=1).model_endpoint]
    )
    artifacts = {a.kind if a.path != LONG_NAME else "csv": a for a in finished.artifacts.all()}
    return EveryPage(
        workspace=workspace,
        owner=owner,
        viewer=viewer,
        creation=creation,
        finished=finished,
        live=live,
        artifacts=artifacts,
        share_token=shared.token or "",
        webhook=webhook,
        comparison=comparison,
        evaluation=evaluation,
    )


def _finished_evaluation(workspace: Workspace, owner: User, models: list[ModelEndpoint | None]) -> Evaluation:
    """The samples added, and the computation sample answered by two models in both modes, some
    tasks right and some wrong: the results page with its table, chart and answers."""
    suite = next(s for s in sample_suites_add(workspace=workspace, user=owner) if "computation" in s.name)
    evaluation = Evaluation.objects.create(
        workspace=workspace, suite=suite, started_by=owner, modes=Modes.BOTH, status=EvaluationStatus.FINISHED
    )
    position = 0
    for model in models:
        assert model is not None
        for mode in (Mode.SANDBOX, Mode.PLAIN):
            for number, task in enumerate(suite.tasks.order_by("position")):
                correct = number % 3 != 0 if mode == Mode.SANDBOX else number % 2 == 0
                position += 1
                EvaluationItem.objects.create(
                    evaluation=evaluation,
                    task=task,
                    model_endpoint=model,
                    model_name=model.name,
                    mode=mode,
                    position=position,
                    status=ItemStatus.SCORED,
                    answer=task.expected if correct else "a long answer that wanders " * 8,
                    answer_source="answer.txt" if mode == Mode.SANDBOX else "reply",
                    read=task.expected if correct else "",
                    correct=correct,
                    why="" if correct else "no number where one was expected",
                    prompt_tokens=900 + number,
                    completion_tokens=120,
                    seconds=4.5 + number,
                )
    return evaluation


def _voted_comparison(workspace: Workspace, owner: User, voter: User, endpoint: ModelEndpoint) -> Comparison:
    """A blind comparison of the house model and another, finished, with the member's vote: its page
    shows the owner letters only, and the leaderboard has a row per model."""
    other = ModelEndpointFactory.create(workspace=workspace, name="Second opinion", model="open-weights-70b")
    comparison = Comparison.objects.create(
        workspace=workspace, created_by=owner, brief="A poster for the spring food fair.", blind=True
    )
    for position, (model, colour_patch) in enumerate(((endpoint, None), (other, (0, 0, 199, 99)))):
        run = RunFactory.create(
            finished=True,
            creation__workspace=workspace,
            creation__author=owner,
            creation__brief=comparison.brief,
            creation__model_endpoint=model,
        )
        add_artifact(run, Output("poster.png", poster_png(800, 500, patch=colour_patch)))
        Contestant.objects.create(
            comparison=comparison, position=position, creation=run.creation, run=run, model_endpoint=model
        )
    vote_cast(comparison=comparison, user=voter, winner=comparison.contestants.get(position=1))
    return comparison


def _webhook_with_log(workspace: Workspace, owner: User) -> Webhook:
    """Made as its service would, without asking DNS for the receiver's address; its log written as
    the delivery task writes it: one delivery that failed once then got through, one refused."""
    webhook = Webhook.objects.create(
        workspace=workspace,
        created_by=owner,
        url="https://hooks.example-company.com/atelier/events/receiver-for-the-food-club-workspace-2025",
        events=list(ALL_EVENTS),
        description="The food club's board",
        secret="whsec_every-page",
    )
    now = timezone.now()
    delivered = WebhookDelivery.objects.create(
        webhook=webhook,
        event=WebhookEvent.RUN_SUCCEEDED,
        payload={"event": WebhookEvent.RUN_SUCCEEDED, "data": {"creation": "Tokyo food map", "version": 2}},
        status=DeliveryStatus.DELIVERED,
        attempts=2,
        last_attempt_at=now,
        delivered_at=now,
        last_status_code=200,
    )
    WebhookAttempt.objects.create(
        delivery=delivered,
        number=1,
        started_at=now - timedelta(minutes=1),
        duration_ms=10_000,
        error="Timed out after 10 s waiting for hooks.example-company.com:443",
    )
    WebhookAttempt.objects.create(delivery=delivered, number=2, started_at=now, duration_ms=180, status_code=200)
    WebhookDelivery.objects.create(
        webhook=webhook,
        event=WebhookEvent.VERSION_MADE,
        payload={"event": WebhookEvent.VERSION_MADE, "data": {}},
        status=DeliveryStatus.FAILED,
        attempts=1,
        last_attempt_at=now,
        last_status_code=502,
        last_error="502 Bad Gateway",
    )
    return webhook


def _one_step() -> list[tuple[str, dict[str, object]]]:
    call = {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": LONG_COMMAND}}
    result = {
        "step": 1,
        "call_id": "c1",
        "name": "execute_bash",
        "output": "map.html",
        "is_error": False,
        "duration": 0.4,
    }
    return [("tool_call", call), ("tool_result", result)]


def _keep_comparison(older: Run, newer: Run) -> None:
    """The details a worker's preview sandbox would have kept for the changed files: the page then
    shows them at once, and no sandbox is asked for."""
    for item in comparison_files(run_a=older, run_b=newer).changed:
        a, b = item.versions
        detail = Detail(
            pixels=PixelDiff(
                width_a=800,
                height_a=500,
                width_b=800,
                height_b=500,
                changed_pixels=20_000,
                total_pixels=400_000,
                region=(520, 60, 720, 160),
            )
            if item.plan.pixels
            else None,
            lines=LineDiff(
                lines_a=7,
                lines_b=8,
                added=1,
                removed=0,
                diff="@@ -7 +7,2 @@\n | Chuo | 4 |\n+| Taito | 3 |",
                truncated=False,
            )
            if item.plan.lines
            else None,
        )
        overlay = poster_png(800, 500, patch=(520, 60, 719, 159)) if item.plan.pixels else None
        store.detail_put(sha_a=a.sha256, sha_b=b.sha256, plan=item.plan, detail=detail, overlay=overlay)


def pages(world: EveryPage) -> dict[str, str]:
    """Every kind of page a signed-in member opens, by name: its path on the platform."""
    slug, creation = world.workspace.slug, world.creation
    found = {
        "dashboard": f"/w/{slug}/",
        "gallery": f"/w/{slug}/gallery/",
        "public-gallery": "/gallery/",
        "new-creation": f"/w/{slug}/new/",
        "creation": creation.get_absolute_url(),
        "run-live": world.live.get_absolute_url(),
        "run-finished": world.finished.get_absolute_url(),
        "compare": f"/creations/{creation.pk}/compare/",
        "share": f"/creations/{creation.pk}/share/",
        "usage": f"/w/{slug}/usage/",
        "members": f"/w/{slug}/members/",
        "models": f"/w/{slug}/models/",
        "settings": f"/w/{slug}/settings/",
        "share-links": f"/w/{slug}/share-links/",
        "tokens": "/settings/tokens/",
        "notifications": "/notifications/",
        "notification-settings": "/notifications/settings/",
        "webhooks": f"/w/{slug}/webhooks/",
        "webhook": f"/webhooks/{world.webhook.pk}/",
        "schedule": f"/creations/{creation.pk}/schedule/",
        "arena": f"/w/{slug}/arena/",
        "comparison": f"/comparisons/{world.comparison.pk}/",
        "evaluations": f"/w/{slug}/evaluations/",
        "suite-upload": f"/w/{slug}/evaluations/suites/new/",
        "evaluation-new": f"/w/{slug}/evaluations/new/",
        "evaluation": f"/evaluations/{world.evaluation.pk}/",
        "gallery-search": (
            f"/w/{slug}/gallery/?q=poster&kind=image&person=olivia&model={MODEL}&sort=views&show=creations"
        ),
        "not-found": "/creations/999999999/",
    }
    for kind, artifact in sorted(world.artifacts.items()):
        found[f"artifact-{kind}"] = f"/artifacts/{artifact.pk}/"
    return found


@dataclass(frozen=True)
class Refused:
    """A request the platform refuses for what it sends, before any view acts on it."""

    path: str
    status: int  # what it is answered with
    form_fields: int = 0  # posted as a form with this many fields (0: opened as an address)


def refused_requests(world: EveryPage) -> dict[str, Refused]:
    """The platform's 400 and 413 pages, by name: an address with more fields than any page takes,
    and a form with more fields than any form here."""
    too_many = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1
    query = "&".join(f"q{i}=x" for i in range(too_many))
    return {
        "bad-request": Refused(f"/w/{world.workspace.slug}/gallery/?{query}", 400),
        "too-large": Refused(f"/creations/{world.creation.pk}/comments/", 413, form_fields=too_many),
    }


# Pages a viewer is refused, by the platform's error page.
FORBIDDEN_PAGES = {"forbidden": "/w/studio/usage.csv"}
# Pages for someone signed out, opened before signing in.
SIGNED_OUT_PAGES = {"login": "/accounts/login/", "signup": "/accounts/signup/", "not-found-signed-out": "/w/nowhere/"}
