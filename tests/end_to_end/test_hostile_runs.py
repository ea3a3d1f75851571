"""A run whose agent is out to hurt the platform around its sandbox: every
byte it prints or leaves is stored, shown and streamed without stalling,
crashing or losing anything — its own run or anybody else's."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from creations.events.storable import NUL_STAND_IN
from creations.models import Artifact, Run, RunStatus
from devstack.scripted_model import ScriptedModel, ScriptEntry, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import PROCESS_ENV, AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_event, wait_for_final

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


# Files an agent can leave to stall the parsers that look at them: 64 KiB of newlines
# (quadratic for the old sniffer: ~80 s holding the GIL), 32 KiB of "[" named .md
# (Python-Markdown: ~2 min), 64 KiB of " \n" named .md. And 30 MB of output printed.
HOSTILE_FILES = (
    "cd /testbed/output"
    ' && python3 -c "import sys; sys.stdout.write(chr(10) * 65536)" > newlines.txt'
    " && python3 -c \"import sys; sys.stdout.write('[' * 32768)\" > brackets.md"
    " && python3 -c \"import sys; sys.stdout.write((' ' + chr(10)) * 32768)\" > spaces.md"
    " && echo fine > fine.txt"
)
FLOOD = "yes 'all work and no play' | head -c 30000000"


def _heartbeat_gaps(run_id: int, stop: threading.Event, gaps: list[float]) -> None:
    """The longest time the run went without a fresh heartbeat, sampled until `stop`."""
    from django.db import connection

    last_beat, last_change = None, time.monotonic()
    try:
        while not stop.is_set():
            beat = Run.objects.filter(pk=run_id).values_list("heartbeat_at", flat=True).get()
            now = time.monotonic()
            if beat != last_beat:
                if last_beat is not None:
                    gaps.append(now - last_change)
                last_beat, last_change = beat, now
            stop.wait(0.2)
    finally:
        connection.close()


@pytest.mark.alone  # the calm run's heartbeat gaps are measured against the reaper's clock
def test_a_hostile_run_cannot_stall_another_run_in_the_same_worker(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel, settings: Any
) -> None:
    hostile_steps = [bash(HOSTILE_FILES), bash(FLOOD), submit_reply("made some files")]
    calm_steps = [bash(f"echo calm {i}; sleep 1", f"Step {i}.") for i in range(1, 13)] + [submit_reply("done")]
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = _by_brief({"hostile": hostile_steps, "calm": calm_steps})
    hostile = submit(team, endpoint, brief="a hostile agent's files")
    calm = submit(team, endpoint, brief="a calm piece of work")
    wait_for_event(calm, "step_started", step=1, logs=run_stack.logs)
    gaps: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_heartbeat_gaps, args=(calm.pk, stop, gaps))
    sampler.start()
    try:
        hostile = wait_for_final(hostile, timeout=300, logs=run_stack.logs)
        calm = wait_for_final(calm, timeout=300, logs=run_stack.logs)
    finally:
        stop.set()
        sampler.join()

    assert hostile.status == RunStatus.SUCCEEDED, hostile.reason
    assert calm.status == RunStatus.SUCCEEDED, calm.reason
    stale_after = float(PROCESS_ENV["RUN_STALE_AFTER_SECONDS"])
    assert gaps, "the calm run's heartbeat was never seen to move"
    assert max(gaps) < stale_after, f"the calm run went {max(gaps):.1f} s without a heartbeat: the reaper would end it"
    kinds = dict(Artifact.objects.filter(run=hostile).values_list("path", "kind"))
    assert kinds == {"newlines.txt": "text", "brackets.md": "markdown", "spaces.md": "markdown", "fine.txt": "text"}
    browser = Client()
    browser.force_login(team.member)
    page = browser.get(reverse("creation_detail", args=[hostile.creation_id]))
    assert page.status_code == 200
    assert "brackets.md" in page.content.decode()


def _by_brief(scripts: dict[str, Sequence[ScriptEntry]]) -> Callable[[dict[str, Any]], ScriptEntry]:
    """Answer each conversation from the script named by a word of its brief."""

    def answer(body: dict[str, Any]) -> ScriptEntry:
        brief = next(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
        steps = next(script for word, script in scripts.items() if word in brief)
        done = sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")
        return steps[min(done, len(steps) - 1)]

    return answer
