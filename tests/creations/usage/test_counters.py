"""A run's usage from its live counters to its final status event and the usage ledger."""

from __future__ import annotations

import json

import pytest

from creations.events.schema import UsageSummary, validate_event
from creations.models import RunEvent, RunStatus, UsageRecord
from creations.runs.state import run_finish, run_mark_starting
from creations.usage.counters import run_usage
from sandboxes.agent.usage import RunUsage
from tests.support.factories import make_run, record_step_usage
from tests.support.fixtures.accounts import Team

USED = RunUsage(steps=4, prompt_tokens=5200, completion_tokens=610, sandbox_seconds=73.25, output_bytes=90_112)


def test_the_final_status_event_carries_the_usage_and_reads_back_the_same() -> None:
    payload = json.loads(json.dumps(UsageSummary.of(USED).model_dump()))

    assert payload == {
        "steps": 4,
        "prompt_tokens": 5200,
        "completion_tokens": 610,
        "sandbox_seconds": 73.25,
        "output_bytes": 90_112,
    }
    assert UsageSummary.model_validate(payload).usage() == USED


def test_the_event_keeps_sandbox_time_to_the_millisecond() -> None:
    summary = UsageSummary.of(RunUsage(sandbox_seconds=12.3456789))

    assert summary.sandbox_seconds == 12.346
    assert summary.usage().sandbox_seconds == 12.346


@pytest.mark.django_db
def test_steps_add_up_live_and_the_workers_count_is_what_the_run_event_and_ledger_keep(team: Team) -> None:
    run = make_run(team)
    run_mark_starting(run_id=run.pk, worker="w1")
    for step in (RunUsage(steps=1, prompt_tokens=2000, completion_tokens=300), RunUsage(steps=1, prompt_tokens=3200)):
        record_step_usage(run, step)
    run.refresh_from_db()
    assert run_usage(run) == RunUsage(steps=2, prompt_tokens=5200, completion_tokens=300)

    assert run_finish(run_id=run.pk, status=RunStatus.SUCCEEDED, reason="Done.", usage=USED)

    run.refresh_from_db()
    assert run_usage(run) == USED
    final = RunEvent.objects.filter(run=run, kind="status").latest("seq")
    validate_event("status", final.payload)
    assert UsageSummary.model_validate(final.payload["usage"]).usage() == USED
    record = UsageRecord.objects.get(run=run)
    assert (record.prompt_tokens, record.completion_tokens) == (5200, 610)
    assert (record.sandbox_seconds, record.bytes_stored) == (73.25, 90_112)


@pytest.mark.django_db
def test_a_run_ended_by_someone_else_keeps_its_live_counters(team: Team) -> None:
    run = make_run(team)
    run_mark_starting(run_id=run.pk, worker="w1")
    record_step_usage(run, RunUsage(steps=1, prompt_tokens=700, completion_tokens=40))

    assert run_finish(run_id=run.pk, status=RunStatus.FAILED, reason="The worker stopped responding.")

    run.refresh_from_db()
    assert run_usage(run) == RunUsage(steps=1, prompt_tokens=700, completion_tokens=40)
    assert UsageRecord.objects.get(run=run).total_tokens == 740
