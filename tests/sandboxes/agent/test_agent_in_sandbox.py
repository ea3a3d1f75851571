"""The agent in a real gVisor sandbox, driven by the scripted server over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from devstack.scripted_model import ScriptedModel, bash, call, reply, submit
from sandboxes.agent import AgentLimits, run_agent
from tests.support.agent import Recorder, client_for

pytestmark = pytest.mark.timeout(180)


def _run(sandbox: Any, scripted_model: ScriptedModel, max_steps: int = 10) -> tuple[Any, Recorder]:
    recorder = Recorder()
    outcome = run_agent(
        sandbox=sandbox,
        model=client_for(scripted_model),
        brief="test",
        limits=AgentLimits(max_steps=max_steps, command_timeout=30),
        emit=recorder,
    )
    return outcome, recorder


def test_shell_state_persists_across_execute_bash_calls(sandbox: Any, scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            bash("mkdir -p /tmp/work && cd /tmp/work && export GREETING=hello && (sleep 300 &) && echo set"),
            bash('pwd; echo "$GREETING"'),
            submit(),
        ]
    )

    outcome, events = _run(sandbox, scripted_model)

    assert outcome.reason == "submitted"
    second = events.of("tool_result")[1]["output"]
    assert "/tmp/work" in second
    assert "hello" in second


def test_files_written_with_the_editor_are_there_for_the_shell(sandbox: Any, scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            reply(
                "",
                [
                    call(
                        "str_replace_editor",
                        {"command": "create", "path": "/testbed/output/note.txt", "file_text": "alpha\nbeta\n"},
                    )
                ],
            ),
            reply(
                "",
                [
                    call(
                        "str_replace_editor",
                        {
                            "command": "str_replace",
                            "path": "/testbed/output/note.txt",
                            "old_str": "beta",
                            "new_str": "gamma",
                        },
                    )
                ],
            ),
            bash("cat /testbed/output/note.txt"),
            submit(),
        ]
    )

    outcome, events = _run(sandbox, scripted_model)

    assert outcome.reason == "submitted"
    results = events.of("tool_result")
    assert [r["is_error"] for r in results[:3]] == [False, False, False]
    assert results[2]["output"].split() == ["alpha", "gamma"]


def test_a_failing_command_reports_its_exit_code_and_the_run_goes_on(
    sandbox: Any, scripted_model: ScriptedModel
) -> None:
    scripted_model.play([bash("ls /no/such/dir"), bash("echo fine"), submit()])

    outcome, events = _run(sandbox, scripted_model)

    failed, fine = events.of("tool_result")[:2]
    assert failed["exit_code"] != 0
    assert failed["is_error"]
    assert "No such file" in failed["output"]
    assert fine["exit_code"] == 0
    assert "fine" in fine["output"]
    assert outcome.reason == "submitted"


def test_output_streams_while_the_command_runs(sandbox: Any, scripted_model: ScriptedModel) -> None:
    # Lines longer than the shell's end-marker look-behind, so each can be released at once.
    long_line = 'echo "line-$i $(printf "%0.sx" $(seq 80))"'
    scripted_model.play([bash(f"for i in 1 2 3; do {long_line}; sleep 0.3; done"), submit()])

    _, events = _run(sandbox, scripted_model)

    deltas = [d["text"] for d in events.of("tool_output_delta")]
    assert len(deltas) >= 2
    assert [line.split()[0] for line in "".join(deltas).splitlines()] == ["line-1", "line-2", "line-3"]
