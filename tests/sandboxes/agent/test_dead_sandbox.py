"""A sandbox that dies under the agent (killed from outside, out of memory)
ends the run with a sandbox error instead of feeding the model a dead shell."""

from __future__ import annotations

import threading
from typing import Any

import docker
import pytest

from devstack.scripted_model import ScriptedModel, bash, submit
from sandboxes.agent import AgentEvent
from sandboxes.agent.events import ToolOutputDelta
from tests.support.agent import Recorder, client_for, run
from tests.support.fixtures.sandbox import TEST_LABELS

# A generous command timeout: if death went unnoticed, the run would hang on
# `sleep` and this test time out instead of passing.
pytestmark = pytest.mark.timeout(120)
COMMAND_TIMEOUT = 600.0
# The shell releases streamed output once it is longer than its end-marker look-behind.
SIGNAL_THEN_SLEEP = 'echo "started $(printf "%0.s." $(seq 80))"; sleep 500'


class KillOnFirstCommand(Recorder):
    """Kills the sandbox's container from outside once its first command is running."""

    def __init__(self, container_id: str) -> None:
        super().__init__()
        self._container_id = container_id

    def __call__(self, event: AgentEvent) -> None:
        super().__call__(event)
        if isinstance(event.payload, ToolOutputDelta) and "started" in event.payload.text:
            threading.Thread(target=docker.from_env().api.kill, args=(self._container_id,), daemon=True).start()


def test_a_sandbox_killed_from_outside_mid_command_ends_the_run_with_a_sandbox_error(
    sandbox: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.play([bash(SIGNAL_THEN_SLEEP), bash("echo never"), submit()])

    outcome, events = run(
        sandbox,
        client_for(scripted_model),
        recorder=KillOnFirstCommand(sandbox.id),
        command_timeout=COMMAND_TIMEOUT,
    )

    assert outcome.reason == "sandbox_error"
    assert "sandbox stopped" in outcome.message
    assert events.of("error")[-1]["message"] == outcome.message
    assert len(scripted_model.chat_requests()) == 1, "the model was asked again after the sandbox died"


# A command is bounded below the sandbox's memory by a soft limit; one that lifts it and takes more than
# the sandbox has takes the sandbox down (several smaller processes only sometimes do: a race).
MEMORY_HOG = "ulimit -S -v unlimited; python3 -c 'import time; b = b\"x\" * (600 << 20); time.sleep(60)'"


def test_a_memory_hog_beyond_the_limit_ends_the_run_with_a_sandbox_error(
    settings: Any, sandbox_provider: Any, scripted_model: ScriptedModel
) -> None:
    settings.SANDBOX_MEMORY = "256m"
    box = sandbox_provider.acquire(labels=TEST_LABELS)
    try:
        # When the sandbox does go down, the run must end with a clear error.
        scripted_model.play([bash(MEMORY_HOG), submit()])

        outcome, _ = run(box, client_for(scripted_model), command_timeout=COMMAND_TIMEOUT)
    finally:
        sandbox_provider.release(box)

    assert outcome.reason == "sandbox_error"
    assert "out of memory" in outcome.message
    assert len(scripted_model.chat_requests()) == 1


def test_cancelling_a_run_whose_sandbox_is_then_stopped_reads_as_cancelled(
    sandbox: Any, scripted_model: ScriptedModel
) -> None:
    cancel = threading.Event()

    class CancelThenStop(Recorder):
        def __call__(self, event: AgentEvent) -> None:
            super().__call__(event)
            if isinstance(event.payload, ToolOutputDelta) and "started" in event.payload.text:
                cancel.set()
                threading.Thread(target=sandbox.stop, daemon=True).start()

    scripted_model.play([bash(SIGNAL_THEN_SLEEP), submit()])

    outcome, _ = run(
        sandbox, client_for(scripted_model), recorder=CancelThenStop(), cancel=cancel, command_timeout=COMMAND_TIMEOUT
    )

    assert outcome.reason == "cancelled"
