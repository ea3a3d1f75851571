"""A run whose agent is out to hurt the platform around its sandbox: every
byte it prints or leaves is stored, shown and streamed without stalling,
crashing or losing anything — its own run or anybody else's."""

from __future__ import annotations

import pytest

from creations.events.storable import NUL_STAND_IN
from creations.models import Artifact, RunStatus
from tests.support.fixtures.accounts import Team
from tests.support.fixtures.runs import AtelierServer
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_final
from tests.support.scripted_model import ScriptedModel, bash
from tests.support.scripted_model import submit as submit_reply

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]


def test_output_with_nul_bytes_is_stored_escaped_and_the_run_keeps_its_files(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    steps = [
        bash("mkdir -p /testbed/output && echo kept > /testbed/output/kept.txt"),
        bash("cat /proc/self/environ; printf 'before\\0after\\n'"),
        submit_reply("done\x00 with a NUL"),
    ]
    run = submit(team, scripted_endpoint(team, scripted_model, steps))
    run = wait_for_final(run, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert [a.path for a in Artifact.objects.filter(run=run)] == ["kept.txt"]
    outputs = [e["payload"] for e in stored_events(run) if e["kind"] == "tool_result"]
    assert any(f"before{NUL_STAND_IN}after" in str(p.get("output")) for p in outputs), outputs
