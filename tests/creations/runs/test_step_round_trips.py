"""What one agent step costs the worker in database round trips: every browser and API run
pays it on every step, between one model reply and the next request.

Two runs through the worker's code (claim, execute) differ only in their number of steps;
the difference in statements and transactions, over the difference in steps, is the cost of a
step whatever a run costs once (claim, start, artifacts, final status). Counted on every
thread that works for the steps: the worker's, the sandbox start's and the event flusher's
(not the heartbeat's, which beats on a clock).

Before a step's events were stored together, a step cost about nine: five event inserts, the
usage update, and a transaction (BEGIN, SELECT, COMMIT) looking for a person's messages."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

from creations.models import RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from devstack.scripted_model import ScriptedModel, ScriptEntry, bash, submit
from sandboxes.runtime import Sandbox
from tests.support.fakes import FakeSandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import per_brief, scripted_endpoint, stored_events
from tests.support.runs import submit as submit_run

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SHORT, LONG = 3, 9  # steps, the last one submits
# One statement stores a step's events and usage, one asks whether a person wrote to the agent.
ROUND_TRIPS_PER_STEP = 2


# The runs' heartbeat thread: it beats on a clock, whatever the steps do.
WATCHER_THREAD = "run-watcher"


class FakeSandboxes:
    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        return FakeSandbox()

    def release(self, sandbox: Sandbox) -> None:
        sandbox.stop()


@dataclass
class Counted:
    statements: int = 0
    transactions: int = 0  # each one is a BEGIN and a COMMIT (or ROLLBACK) of its own on the wire
    sent: list[str] = field(default_factory=list)  # what the statements began with, to say what a step sends

    @property
    def round_trips(self) -> int:
        return self.statements + 2 * self.transactions


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Counted:
    """Counts what every thread sends the database; the run's own clocks (heartbeat, cancel
    poll, coalescing) are set far off, so what is counted is the steps' doing, not the timing's."""
    settings.RUN_HEARTBEAT_SECONDS = 600
    settings.RUN_CANCEL_POLL_SECONDS = 600
    settings.RUN_EVENT_COALESCE_SECONDS = 600
    monkeypatch.setattr("creations.runs.execution.get_provider", FakeSandboxes)
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)
    counts = Counted()
    lock = threading.Lock()
    execute, executemany = CursorWrapper.execute, CursorWrapper.executemany
    commit, rollback = BaseDatabaseWrapper.commit, BaseDatabaseWrapper.rollback

    def counting(original: Any, name: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread().name == WATCHER_THREAD:
                return original(*args, **kwargs)
            with lock:
                setattr(counts, name, getattr(counts, name) + 1)
                if name == "statements":
                    counts.sent.append(f"{threading.current_thread().name}: {str(args[1])[:80]}")
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(CursorWrapper, "execute", counting(execute, "statements"))
    monkeypatch.setattr(CursorWrapper, "executemany", counting(executemany, "statements"))
    monkeypatch.setattr(BaseDatabaseWrapper, "commit", counting(commit, "transactions"))
    monkeypatch.setattr(BaseDatabaseWrapper, "rollback", counting(rollback, "transactions"))
    return counts


def _script(steps: int) -> list[ScriptEntry]:
    return [*(bash(f"echo step {n}") for n in range(1, steps)), submit("done")]


def _tally(sent: list[str]) -> list[str]:
    return [f"{times} x {what}" for what, times in Counter(sent).most_common()]


def _run_counting(team: Team, endpoint: Any, counts: Counted, brief: str) -> tuple[Counted, list[dict[str, Any]]]:
    run = submit_run(team, endpoint, brief=brief)
    before = Counted(counts.statements, counts.transactions)
    sent_before = len(counts.sent)
    assert run_claim_next(worker="test") == run.pk
    run_execute(run_id=run.pk)
    used = Counted(
        counts.statements - before.statements, counts.transactions - before.transactions, counts.sent[sent_before:]
    )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert run.steps == int(brief.split()[0])
    return used, stored_events(run)


def test_each_step_of_a_run_costs_the_worker_two_database_round_trips(
    team: Team, scripted_model: ScriptedModel, counted: Counted
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = per_brief({"quick-brief": _script(SHORT), "slow-brief": _script(LONG)}, default=[])
    short, short_events = _run_counting(team, endpoint, counted, f"{SHORT} steps, quick-brief")
    long, long_events = _run_counting(team, endpoint, counted, f"{LONG} steps, slow-brief")

    per_step = (long.round_trips - short.round_trips) / (LONG - SHORT)
    print(
        f"per step: {per_step:g} round trips "
        f"({(long.statements - short.statements) / (LONG - SHORT):g} statements, "
        f"{(long.transactions - short.transactions) / (LONG - SHORT):g} transactions)"
    )
    assert per_step <= ROUND_TRIPS_PER_STEP, "\n".join([*_tally(long.sent), "-- fewer steps:", *_tally(short.sent)])
    # Still every event of every step, gapless and in order.
    for events, steps in ((short_events, SHORT), (long_events, LONG)):
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        started = [e["payload"]["step"] for e in events if e["kind"] == "step_started"]
        assert started == list(range(1, steps + 1))
        assert len([e for e in events if e["kind"] == "tool_result"]) == steps
        assert events[-1]["kind"] == "status"
        assert events[-1]["payload"]["final"] is True
