"""The sandbox session web runs and the terminal share: a start that fails, and
a stop that comes while the sandbox is still starting."""

from __future__ import annotations

import threading
from collections.abc import Mapping

import pytest

from devstack.scripted_model import ScriptedModel, bash, submit
from sandboxes.agent import AgentLimits
from sandboxes.agent.session import SandboxSession, SandboxStartError
from sandboxes.runtime import Sandbox
from tests.support.agent import Recorder, client_for
from tests.support.fakes import FakeSandbox


class Provider:
    """Hands out fake sandboxes; `gate` holds a start until it is set; `broken` fails it."""

    def __init__(self, *, broken: bool = False) -> None:
        self.broken = broken
        self.gate = threading.Event()
        self.gate.set()
        self.acquired: list[FakeSandbox] = []
        self.released: list[Sandbox] = []

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        self.gate.wait(timeout=30)
        if self.broken:
            raise RuntimeError("no room for another sandbox")
        sandbox = FakeSandbox()
        self.acquired.append(sandbox)
        return sandbox

    def release(self, sandbox: Sandbox) -> None:
        self.released.append(sandbox)


def _agent(session: SandboxSession, scripted_model: ScriptedModel, cancel: threading.Event | None = None) -> str:
    outcome = session.run_agent(
        model=client_for(scripted_model),
        brief="make something",
        limits=AgentLimits(max_steps=3),
        emit=Recorder(),
        cancel=cancel or threading.Event(),
    )
    return outcome.reason


def test_a_sandbox_that_cannot_start_is_said_so_and_nothing_is_left(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("ls"), submit()])
    provider = Provider(broken=True)
    with SandboxSession(provider=provider, labels={}) as session, pytest.raises(SandboxStartError, match="no room"):
        _agent(session, scripted_model)
    assert provider.released == []


def test_the_inputs_are_in_before_the_agent_runs_and_the_sandbox_is_released(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("ls /testbed/input"), submit()])
    provider, ready = Provider(), list[Sandbox]()
    session = SandboxSession(provider=provider, labels={}, input_files={"a.csv": b"1"}, on_ready=ready.append)
    with session:
        assert _agent(session, scripted_model) == "submitted"
    (sandbox,) = provider.acquired
    assert ready == [sandbox]
    assert sandbox.commands == ["ls /testbed/input"]
    assert provider.released == [sandbox]
    assert session.sandbox_seconds > 0


def test_a_stop_while_the_sandbox_starts_stops_it_once_it_is_there(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("ls"), submit()])
    provider = Provider()
    provider.gate.clear()
    cancel = threading.Event()
    session = SandboxSession(provider=provider, labels={})
    stopper = threading.Thread(target=session.stop_sandbox)
    stopper.start()
    cancel.set()
    provider.gate.set()
    stopper.join(timeout=30)
    with session:
        assert _agent(session, scripted_model, cancel) == "cancelled"
    (sandbox,) = provider.acquired
    assert sandbox.stopped
    assert session.stopped
