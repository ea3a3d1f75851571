"""An engine that leaves a removal unanswered past the client's timeout (a fork-bombed sandbox on a
busy host takes minutes to go) ends neither a run's cleanup nor the janitor's sweep with an
exception: the sandbox is left to the next sweep, and the log says so. The engine here is a
stand-in that answers like docker-py does when its socket times out; tests/sandboxes/test_survival.py
removes real fork-bombed sandboxes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests.exceptions

from sandboxes import janitor
from sandboxes.container_spec import LABEL_HOST, LABEL_RUN_ID, LABEL_SANDBOX, SandboxConfig
from sandboxes.docker_runtime import DockerSandbox

SLOW = "a" * 64
QUICK = "b" * 64


@dataclass
class EngineThatTimesOut:
    """Removing `slow` times out as docker-py's socket does; every other removal is done."""

    slow: set[str]
    containers_listed: list[dict[str, Any]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)

    @property
    def api(self) -> EngineThatTimesOut:
        return self

    def remove_container(self, container_id: str, *, force: bool) -> None:
        self.attempts.append(container_id)
        if container_id in self.slow:
            raise requests.exceptions.ReadTimeout("UnixHTTPConnectionPool(host='localhost'): Read timed out.")
        self.removed.append(container_id)

    def containers(self, **_: Any) -> list[dict[str, Any]]:
        return self.containers_listed

    def inspect_container(self, container_id: str) -> dict[str, Any]:
        return {"Created": "2020-01-01T00:00:00.000000Z", "State": {"Running": False, "Pid": 0}}


def test_a_removal_the_engine_leaves_unanswered_ends_the_stop_and_says_the_janitor_takes_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The settings' sandbox, with its cgroup parent as written: the real one asks the engine its cgroup driver.
    monkeypatch.setattr("sandboxes.container_spec.sandbox_cgroup_parent", lambda setting: setting)
    engine = EngineThatTimesOut(slow={SLOW})
    sandbox = DockerSandbox(engine, SLOW, SandboxConfig.from_settings(), {}, "atelier-slow")  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="sandboxes.docker_runtime"):
        sandbox.stop()
    assert engine.attempts == [SLOW]
    assert "the engine did not answer its removal" in caplog.text
    assert "the janitor removes it" in caplog.text
    sandbox.stop()  # a second caller (a cancel, then the run's end) returns at once, asking nothing more
    assert engine.attempts == [SLOW]


def test_the_janitor_goes_on_past_a_removal_the_engine_leaves_unanswered(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SANDBOX_HOST_ID = "host-a"
    labels = {LABEL_SANDBOX: "1", LABEL_HOST: "host-a"}
    engine = EngineThatTimesOut(
        slow={SLOW},
        containers_listed=[
            {"Id": SLOW, "Names": ["/atelier-slow"], "Labels": {**labels, LABEL_RUN_ID: "1"}},
            {"Id": QUICK, "Names": ["/atelier-quick"], "Labels": {**labels, LABEL_RUN_ID: "2"}},
        ],
    )
    with caplog.at_level(logging.WARNING, logger="sandboxes.janitor"):
        removals = janitor.sweep(lambda _run_id: False, client=engine)  # type: ignore[arg-type]
    assert [removal.name for removal in removals] == ["atelier-quick"]
    assert engine.removed == [QUICK]
    assert "janitor could not remove atelier-slow" in caplog.text
