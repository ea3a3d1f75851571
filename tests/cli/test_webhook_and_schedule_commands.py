"""`atelier webhooks …` and `atelier schedule …` against the platform's real API in this process:
a webhook added (its secret printed once), tested, its log read and removed; a schedule set,
shown and cleared; a member refused the webhooks with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from api.schemas.schedules import ScheduleOut
from api.schemas.webhooks import AttemptOut, DeliveryOut, WebhookOut
from atelier_cli.commands import schedule, webhooks
from atelier_cli.exit_status import ExitStatus
from creations.models import Creation, Run
from creations.schedules.models import Schedule
from creations.webhooks.models import Webhook, WebhookDelivery
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)


def test_the_client_checks_only_fields_the_api_sends() -> None:
    assert set(webhooks.Webhook.model_fields) <= set(WebhookOut.model_fields)
    assert set(webhooks.Delivery.model_fields) <= set(DeliveryOut.model_fields)
    assert set(webhooks.Attempt.model_fields) <= set(AttemptOut.model_fields)
    assert set(schedule.Schedule.model_fields) <= set(ScheduleOut.model_fields)


def test_add_test_read_the_log_and_remove_a_webhook(atelier_on_platform: Atelier, team: Team) -> None:
    owner = token_for(team.owner)
    slug = team.workspace.slug
    url = "https://93.184.215.14/hooks"
    added = atelier_on_platform(
        "webhooks", "add", slug, url, "--event", "run.failed", "--event", "version.made", token=owner
    )
    assert added.status == 0, added.err
    secret, said = added.out.splitlines()
    webhook = Webhook.objects.get()
    assert secret.startswith("whsec_")
    assert secret == webhook.secret
    assert webhook.events == ["run.failed", "version.made"]
    assert said.startswith(f"Webhook {webhook.pk} to {url}")

    listed = atelier_on_platform("webhooks", "list", slug, "--json", token=owner).document()
    assert [(item["id"], item["secret"]) for item in listed] == [(webhook.pk, None)]  # never shown again

    assert atelier_on_platform("webhooks", "test", str(webhook.pk), token=owner).status == 0
    log = atelier_on_platform("webhooks", "deliveries", str(webhook.pk), "--json", token=owner).document()
    assert [(item["event"], item["status"]) for item in log] == [("ping", "pending")]

    assert atelier_on_platform("webhooks", "remove", str(webhook.pk), token=owner).status == 0
    assert not Webhook.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_a_member_is_refused_the_webhooks_with_the_reason(atelier_on_platform: Atelier, team: Team) -> None:
    outcome = atelier_on_platform("webhooks", "list", team.workspace.slug, "--json", token=token_for(team.member))
    assert outcome.status == ExitStatus.FORBIDDEN
    assert outcome.error()["message"] == "Only owners and admins of this workspace can see and change its webhooks."


def test_set_show_and_clear_a_schedule(atelier_on_platform: Atelier, team: Team) -> None:
    run: Run = finished_run(workspace=team.workspace, author=team.member, outputs=[Output("a.md", b"# a")])
    endpoint = ModelEndpoint.objects.create(
        workspace=team.workspace, name="m", base_url="http://127.0.0.1:9/v1", model="m"
    )
    Creation.objects.filter(pk=run.creation_id).update(model_endpoint=endpoint)
    member = token_for(team.member)
    made = atelier_on_platform(
        "schedule", "set", str(run.pk), "--weekly", "mon", "--at", "07:30", "--instruction", "update it", token=member
    )
    assert made.status == 0, made.err
    assert made.out.startswith("Refreshes weekly on Monday at 07:30 UTC; next ")
    shown: Any = atelier_on_platform("schedule", "show", str(run.pk), "--json", token=member).document()
    assert (shown["cadence"], shown["cron"], shown["paused"]) == ("weekly", "30 7 * * 1", False)

    bad = atelier_on_platform(
        "schedule", "set", str(run.pk), "--cron", "*/5 * * * *", "--instruction", "x", token=member
    )
    assert bad.status != 0
    assert "more often than once every 60 minutes" in bad.err

    assert atelier_on_platform("schedule", "clear", str(run.pk), token=member).status == 0
    assert not Schedule.objects.exists()
