"""The browser's role matrix's rows for a workspace's webhooks, a creation's schedule, and
evaluations with their suites."""

from __future__ import annotations

from creations.evaluations.models import Evaluation, Suite
from creations.schedules.models import Schedule
from creations.webhooks.models import Webhook, WebhookDelivery
from tests.config.role_matrix.rows import GET, POST, POST_ONLY, Row
from tests.support.role_outcomes import (
    FORBIDDEN,
    LOGIN,
    NOT_FOUND,
    OK,
    Outcome,
    Rule,
    done,
    members,
    redirect,
    refused,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, SPARE_SUITE, sees


def _schedule_page(outcome: Outcome) -> Rule:
    """A creation's schedule page: for those who see it and may start runs in its workspace; the others
    who see it are told who may. The world's creation uses the demo model, which cannot refresh on a
    schedule: a POST is refused, saying so."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if not sees(who, visibility):
            return NOT_FOUND
        return outcome if who in CREATORS else refused(403)

    return rule


def _clear_schedule(who: str, visibility: str) -> Outcome:
    """The world's creation has no schedule: those who may clear one are sent back to its page."""
    if who == ANONYMOUS:
        return LOGIN
    if not sees(who, visibility):
        return NOT_FOUND
    return redirect("creation_detail") if who in CREATORS else FORBIDDEN


WEBHOOK_PAGE = members(MANAGERS, OK, otherwise=FORBIDDEN)


ROWS = [
    # Webhooks: the workspace's owners and admins; the other members are told who may.
    Row(
        "workspace_webhooks",
        {GET: members(MANAGERS, OK, otherwise=refused(403)), POST: members(MANAGERS, done(200), refused(403))},
        data={"url": "https://93.184.215.14/another-hook", "events": "run.failed"},
        changed=lambda w, actor: Webhook.objects.count() > 1,
    ),
    Row(
        "webhook_detail",
        {GET: WEBHOOK_PAGE, POST: members(MANAGERS, done(to="webhook_detail"), otherwise=FORBIDDEN)},
        data={"url": "https://93.184.215.14/role-matrix-hook", "events": "run.failed"},
        changed=lambda w, actor: Webhook.objects.filter(pk=w.webhook.pk, events=["run.failed"]).exists(),
    ),
    Row(
        "webhook_test",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to="webhook_detail"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: WebhookDelivery.objects.filter(event="ping").exists(),
    ),
    Row(
        "webhook_secret",
        {GET: POST_ONLY, POST: members(MANAGERS, done(200), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Webhook.objects.get(pk=w.webhook.pk).secret != "whsec_role_matrix",
    ),
    Row(
        "webhook_delete",
        {GET: POST_ONLY, POST: members(MANAGERS, done(to="workspace_webhooks"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: not Webhook.objects.filter(pk=w.webhook.pk).exists(),
    ),
    # Schedules: setting one starts runs in one's name.
    Row(
        "creation_schedule",
        {GET: _schedule_page(OK), POST: _schedule_page(refused(400))},
        data={"cadence": "daily", "at": "06:00", "instruction": "update the figures"},
        changed=lambda w, actor: Schedule.objects.exists(),
        per_creation=True,
    ),
    Row(
        "creation_schedule_clear",
        {GET: POST_ONLY, POST: _clear_schedule},
        per_creation=True,
    ),
    # Evaluations: every member reads them; those who may start runs upload suites and start
    # evaluations (the other members are told who may); the world's evaluation is the member's, so
    # the member, owners and admins cancel it.
    Row("evaluations_list", {GET: members(MEMBERS, OK)}),
    Row(
        "suite_upload",
        # A POST with no task file: the form says what is missing.
        {GET: members(CREATORS, OK, otherwise=refused(403)), POST: members(CREATORS, refused(400), refused(403))},
        data={"name": "A suite"},
        changed=lambda w, actor: Suite.objects.filter(name="A suite").exists(),
    ),
    Row(
        "suite_samples_add",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluations_list"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Suite.objects.filter(is_sample=True).exists(),
    ),
    # The spare suite is the member's, with no evaluation: the member, owners and admins delete it.
    Row(
        "suite_delete",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluations_list"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: not Suite.objects.filter(name=SPARE_SUITE).exists(),
    ),
    Row(
        "evaluation_new",
        # The demo model is refused, saying why.
        {GET: members(CREATORS, OK, otherwise=refused(403)), POST: members(CREATORS, refused(400), refused(403))},
        data={"models": "demo", "modes": "both"},
        changed=lambda w, actor: Evaluation.objects.count() > 1,
    ),
    Row("evaluation_detail", {GET: members(MEMBERS, OK)}),
    Row(
        "evaluation_cancel",
        {GET: POST_ONLY, POST: members(CREATORS, done(to="evaluation_detail"), otherwise=FORBIDDEN)},
        changed=lambda w, actor: Evaluation.objects.filter(pk=w.evaluation.pk, status="cancelled").exists(),
    ),
    Row("evaluation_results_csv", {GET: members(MEMBERS, OK)}),
    Row("evaluation_answers_csv", {GET: members(MEMBERS, OK)}),
]
