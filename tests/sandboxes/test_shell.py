"""The persistent shell behind execute_bash, under the real runtime."""

from __future__ import annotations

import pytest

from tests.support.sandboxes import run_measured

pytestmark = pytest.mark.timeout(300)


def test_working_directory_variables_and_background_jobs_persist_between_commands(sandbox):
    sandbox.run_command("mkdir -p /testbed/work && cd /testbed/work && export GREETING=hello", timeout=30)
    sandbox.run_command("sleep 300 &", timeout=30)
    result = sandbox.run_command('pwd; echo "$GREETING"; jobs', timeout=30)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "/testbed/work"
    assert lines[1] == "hello"
    assert "sleep 300" in lines[2]
    assert "Running" in lines[2]


def test_a_fresh_sandbox_has_its_folders_and_a_warm_plot_font_cache(sandbox):
    listing = sandbox.run_command(
        "stat -c '%U %a %n' /testbed/input /testbed/output /tmp/outputs; ls \"$MPLCONFIGDIR\"", timeout=30
    )
    assert listing.exit_code == 0, listing.output
    assert listing.output.splitlines()[:3] == [
        "agent 755 /testbed/input",
        "agent 755 /testbed/output",
        "agent 755 /tmp/outputs",
    ]
    assert "fontlist" in listing.output  # matplotlib finds its cache: no font scan on the first plot
    plot = sandbox.run_command(
        "python3 -W error -c 'import matplotlib.pyplot as p; p.plot([1, 2]); p.savefig(\"/testbed/output/p.png\")'",
        timeout=60,
    )
    assert plot.exit_code == 0, plot.output
    assert "building the font cache" not in plot.output.lower()


def test_waiting_for_background_jobs_returns_when_they_end(sandbox):
    result = sandbox.run_command("sleep 0.2 & sleep 0.4 & wait; echo all done", timeout=20)
    assert not result.timed_out
    assert (result.exit_code, result.output.splitlines()[-1]) == (0, "all done")


def test_exit_code_and_stderr_are_returned(sandbox):
    result = sandbox.run_command("echo to-stderr >&2; false", timeout=30)
    assert result.exit_code == 1
    assert result.output == "to-stderr\n"


def test_output_streams_to_the_callback_in_order_while_the_command_runs(sandbox):
    chunks: list[str] = []
    result = sandbox.run_command(
        "for i in 1 2 3 4 5; do echo line-$i; sleep 0.2; done", timeout=30, on_output=chunks.append
    )
    assert len(chunks) >= 3  # several pieces arrived, not one block at the end
    assert "".join(chunks) == result.output
    assert result.output.split() == [f"line-{i}" for i in range(1, 6)]


def test_a_short_line_before_a_long_wait_arrives_while_the_command_waits(sandbox):
    """A line shorter than the shell's end-of-command marker is passed on at once, not
    held until the command ends ("started", then minutes of work)."""
    chunks: list[str] = []
    result = sandbox.run_command("echo started; sleep 1; echo done", timeout=30, on_output=chunks.append)
    assert "started" in chunks[0]
    assert "done" not in chunks[0]  # it came before the wait was over
    assert "".join(chunks) == result.output
    assert result.output.split() == ["started", "done"]


def test_a_timeout_kills_the_command_and_keeps_the_shell(sandbox):
    sandbox.run_command("cd /tmp && export KEPT=yes", timeout=30)
    result = sandbox.run_command("for i in 1 2 3; do sleep 60; done; echo never", timeout=2)
    assert result.timed_out
    assert result.exit_code is None
    assert not result.shell_restarted
    assert "never" not in result.output
    assert "timed out" in result.output
    after = sandbox.run_command('pwd; echo "$KEPT"; pgrep -P $$ -x sleep || echo no-sleep', timeout=30)
    assert after.output.split() == ["/tmp", "yes", "no-sleep"]


def test_a_killed_shell_is_restarted_and_the_model_is_told(sandbox):
    sandbox.run_command("export LOST=1; echo kept > /testbed/file", timeout=30)
    result = sandbox.run_command("kill -9 $$", timeout=30)
    assert result.shell_restarted
    assert "new shell" in result.output
    after = sandbox.run_command('echo "[$LOST]"; cat /testbed/file', timeout=30)
    assert after.exit_code == 0
    assert after.output.split() == ["[]", "kept"]


def test_long_output_is_cut_for_the_model_and_saved_whole_in_the_sandbox(sandbox):
    result = sandbox.run_command("seq 1 100000", timeout=60)
    assert result.exit_code == 0
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.rstrip().endswith("99999\n100000")
    assert "characters cut" in result.output
    assert len(result.output) < 20_000
    assert result.full_output_path
    saved = sandbox.run_command(f"grep -c . {result.full_output_path}; tail -n 1 {result.full_output_path}", timeout=30)
    assert saved.output.split() == ["100000", "100000"]


def test_printing_100_mb_keeps_worker_memory_bounded(sandbox):
    measured = run_measured(sandbox, "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo done", timeout=240)
    result, peak, streamed = measured.result, measured.worker_peak_bytes, measured.streamed_chars
    assert result.exit_code == 0
    assert result.output.rstrip().endswith("done")
    assert peak < 20 * 1024 * 1024, f"worker peak {peak / 1e6:.1f} MB"
    assert streamed < 5_000_000  # live output pauses past the stream limit
    after = sandbox.run_command("echo still-here", timeout=30)
    assert after.output == "still-here\n"
