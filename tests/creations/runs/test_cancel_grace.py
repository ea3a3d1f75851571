"""When a cancelled run's sandbox is stopped: an agent that does not stop within the grace
loses its sandbox; one that has stopped keeps it for its output to be copied; a run ended
elsewhere loses it at once, whatever its agent does."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from creations.runs.supervision import RunSupervisor

GRACE_SECONDS = 0.1
WELL_PAST_THE_GRACE = 1.0


@pytest.fixture
def supervisor(settings: Any) -> tuple[RunSupervisor, threading.Event]:
    settings.RUN_CANCEL_GRACE_SECONDS = GRACE_SECONDS
    sandbox_stopped = threading.Event()
    return RunSupervisor(7, on_stop_sandbox=sandbox_stopped.set), sandbox_stopped


def test_an_agent_that_does_not_stop_within_the_grace_has_its_sandbox_stopped(
    supervisor: tuple[RunSupervisor, threading.Event],
) -> None:
    watch, sandbox_stopped = supervisor
    watch.trigger(lost=False)
    assert watch.stop.is_set()
    assert watch.cancelled
    assert not sandbox_stopped.is_set()  # the agent is given its grace
    assert sandbox_stopped.wait(timeout=WELL_PAST_THE_GRACE)


def test_an_agent_that_stopped_within_the_grace_keeps_its_sandbox_for_the_copy(
    supervisor: tuple[RunSupervisor, threading.Event],
) -> None:
    watch, sandbox_stopped = supervisor
    watch.trigger(lost=False)
    watch.agent_stopped()
    assert not sandbox_stopped.wait(timeout=WELL_PAST_THE_GRACE)


def test_a_cancel_after_the_agent_stopped_leaves_the_sandbox_to_its_wrap_up(
    supervisor: tuple[RunSupervisor, threading.Event],
) -> None:
    watch, sandbox_stopped = supervisor
    watch.agent_stopped()
    watch.trigger(lost=False)
    assert watch.cancelled  # the run still ends cancelled
    assert not sandbox_stopped.wait(timeout=WELL_PAST_THE_GRACE)


def test_a_run_ended_elsewhere_loses_its_sandbox_at_once_even_after_its_agent_stopped(
    supervisor: tuple[RunSupervisor, threading.Event],
) -> None:
    watch, sandbox_stopped = supervisor
    watch.agent_stopped()
    watch.trigger(lost=True)
    assert watch.lost
    assert sandbox_stopped.wait(timeout=WELL_PAST_THE_GRACE)
