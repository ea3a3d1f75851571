"""`manage.py create`: one creation from the terminal, in a real gVisor
sandbox, against the scripted model over HTTP (and the demo model)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker
import mido
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from devstack.scripted_model import ScriptedModel, bash, call, http_error, reply, submit

pytestmark = pytest.mark.timeout(240)


def _create(*args: str) -> str:
    out = io.StringIO()
    try:
        call_command("create", *args, stdout=out, no_color=True)
    except CommandError as error:
        error.add_note(out.getvalue())
        raise
    return out.getvalue()


def _scripted(server: ScriptedModel) -> list[str]:
    return ["--model", server.model, "--base-url", server.base_url, "--api-key", "test-key"]


def _run_id(printed: str) -> str:
    match = re.search(r"Run (cli-[0-9a-f]+)", printed)
    assert match, printed
    return match.group(1)


def _containers_of(run_id: str) -> list[Any]:
    return list(docker.from_env().containers.list(all=True, filters={"label": f"atelier.run_id={run_id}"}))


def test_a_scripted_run_prints_its_trajectory_live_and_copies_the_files_out(
    sandbox_image: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    inputs = tmp_path / "in"
    (inputs / "data").mkdir(parents=True)
    (inputs / "data" / "guests.txt").write_text("Ada\nGrace\n")
    scripted_model.play(
        [
            reply("Reading the guest list.", [call("execute_bash", {"command": "cat /testbed/input/data/guests.txt"})]),
            reply(
                "",
                [
                    call(
                        "str_replace_editor",
                        {"command": "create", "path": "/testbed/output/invite.md", "file_text": "Dear Ada and Grace"},
                    )
                ],
            ),
            bash("mkdir -p /testbed/output/extra && wc -l < /testbed/input/data/guests.txt > /testbed/output/extra/n"),
            submit("Two invitations."),
        ]
    )
    output = tmp_path / "out"

    printed = _create(
        "Invite everyone on the list", "--input", str(inputs), "--output", str(output), *_scripted(scripted_model)
    )

    assert "Reading the guest list." in printed
    assert "$ cat /testbed/input/data/guests.txt" in printed
    assert "Ada\nGrace" in printed
    assert "[exit 0 ·" in printed
    assert "✎ editor create /testbed/output/invite.md" in printed
    assert "finished: submitted after 4 step(s) — Two invitations." in printed
    assert "invite.md" in printed
    assert (output / "invite.md").read_text() == "Dear Ada and Grace"
    assert (output / "extra" / "n").read_text().strip() == "2"
    assert "/testbed/input/data/guests.txt" in scripted_model.chat_requests()[0].messages[1]["content"]
    assert _containers_of(_run_id(printed)) == []


def test_the_demo_model_makes_the_piano_piece_into_the_output_directory(sandbox_image: str, tmp_path: Path) -> None:
    output = tmp_path / "music"

    printed = _create("A calm piano piece in A minor, MIDI and WAV", "--output", str(output))

    assert "Demo model (replay)" in printed
    midi = next(output.glob("*.mid"))
    assert 20 <= mido.MidiFile(str(midi)).length <= 30
    assert next(output.glob("*.wav")).stat().st_size > 100_000
    assert f"{midi.name}  (" in printed


def test_a_sandbox_killed_by_a_memory_hog_fails_the_command_with_a_sandbox_error(
    sandbox_image: str, scripted_model: ScriptedModel, tmp_path: Path, settings: Any
) -> None:
    settings.SANDBOX_MEMORY = "256m"
    # A command is bounded below the sandbox's memory by a soft limit; one that lifts it and takes
    # more than the sandbox has takes the sandbox down, and then the run must end with a clear error.
    hogs = "ulimit -S -v unlimited; python3 -c 'import time; b = b\"x\" * (600 << 20); time.sleep(60)'"
    scripted_model.play([bash(hogs), submit()])

    with pytest.raises(CommandError, match=r"The run failed \(sandbox_error\): .*out of memory") as failure:
        _create("Use all the memory", "--output", str(tmp_path / "out"), *_scripted(scripted_model))

    printed = "\n".join(getattr(failure.value, "__notes__", []))
    assert _containers_of(_run_id(printed)) == []


def test_an_endpoint_that_rejects_the_key_exits_non_zero_with_one_clear_line(
    sandbox_image: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    scripted_model.play([http_error(401, "Incorrect API key provided.", code="invalid_api_key")])

    finished = subprocess.run(
        [sys.executable, "manage.py", "create", "anything", "--output", str(tmp_path), *_scripted(scripted_model)],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings"},
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert finished.returncode == 1
    assert "Traceback" not in finished.stderr
    error_lines = [line for line in finished.stderr.splitlines() if line.startswith("CommandError")]
    assert len(error_lines) == 1
    assert "model_error" in error_lines[0]
    assert "API key" in error_lines[0]
    assert _containers_of(_run_id(finished.stdout)) == []


def test_ctrl_c_cancels_the_run_and_removes_the_sandbox(
    sandbox_image: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    # Two long lines: the shell releases streamed output once it is past its end-marker look-behind.
    dots = '$(printf "%0.s." $(seq 80))'
    scripted_model.play([bash(f'echo "working {dots}"; echo "{dots}"; sleep 500'), submit()])
    process = subprocess.Popen(
        [sys.executable, "manage.py", "create", "wait", "--output", str(tmp_path), *_scripted(scripted_model)],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    printed = ""
    while "working ..." not in printed:
        line = process.stdout.readline()
        assert line, f"the command ended early: {printed}"
        printed += line

    process.send_signal(signal.SIGINT)
    rest, errors = process.communicate(timeout=120)

    assert process.returncode == 130
    assert "finished: cancelled" in rest
    assert "Traceback" not in errors
    assert "Cancelled" in errors
    assert _containers_of(_run_id(printed)) == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["brief", "--input", "/no/such/dir"], "--input: the input directory /no/such/dir does not exist"),
        (["brief", "--model", "my-model", "--base-url", ""], "--base-url is required"),
        (["brief", "--model", "my-model", "--base-url", "ftp://x"], "must start with http"),
        (["brief", "--max-steps", "0"], "--max-steps must be at least 1"),
        (["   "], "The brief is empty"),
    ],
)
def test_bad_arguments_are_a_clear_error_before_any_sandbox_starts(arguments: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("create", *arguments, stdout=io.StringIO())
