"""The agent's computer survives its user: after each of these the next command runs."""

from __future__ import annotations

import pytest

from sandboxes.docker_runtime import DockerSandbox, ExecOutputTooLarge
from tests.support.sandboxes import run_measured, start_with

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("sandbox_image")]  # start_with() starts sandboxes

MEMORY_HOG = "python3 -c 'a = [bytearray(10**8) for _ in range(400)]'"


@pytest.fixture
def box():
    sandbox = start_with()
    yield sandbox
    sandbox.stop()


def assert_usable(sandbox: DockerSandbox) -> None:
    """The shell answers, and can still start processes (what a runaway command printed
    before it was stopped, and notes about it, may come first)."""
    echo = sandbox.run_command("echo ok", timeout=60)
    assert echo.exit_code == 0, echo.output
    assert "ok" in echo.output.splitlines()
    listing = sandbox.run_command("ls -d /testbed/output", timeout=60)
    assert listing.exit_code == 0, listing.output
    assert "/testbed/output" in listing.output.splitlines()


def test_a_command_that_exhausts_memory_fails_and_the_next_one_runs(box):
    result = box.run_command(MEMORY_HOG, timeout=120)
    assert not result.sandbox_died, result.output
    assert result.exit_code not in (0, None)
    assert "out of memory" in result.output
    assert box.is_running()
    assert_usable(box)


def test_memory_taken_by_files_is_left_to_them_when_a_command_runs_out():
    # tmpfs files live in the sandbox's memory: a command may use only what they leave.
    sandbox = start_with(memory="512m")
    try:
        filled = sandbox.run_command("head -c 300M /dev/zero > /testbed/big && echo filled", timeout=120)
        assert filled.output == "filled\n"
        result = sandbox.run_command(MEMORY_HOG, timeout=120)
        assert not result.sandbox_died, result.output
        assert "out of memory" in result.output
        assert_usable(sandbox)
        assert sandbox.run_command("stat -c %s /testbed/big", timeout=30).output == f"{300 * 1024 * 1024}\n"
    finally:
        sandbox.stop()


@pytest.mark.parametrize(
    "bomb",
    # A classic fork bomb (`:(){ :|:& };:`) is not here: its orphans outlive any timeout and under
    # gVisor they can keep the process slots taken faster than the shell stops them (see the sandbox README).
    ["for i in $(seq 5000); do sleep 100 & done"],
    ids=["thousands-of-jobs"],
)
def test_after_a_fork_bomb_the_next_commands_run(box, bomb):
    result = box.run_command(bomb, timeout=60)
    assert not result.sandbox_died, result.output
    # The shell's own fork can fail while the bomb's last processes are being stopped (bash
    # then exits): the next command may get a new shell, but never a dead sandbox.
    first = box.run_command("echo ok", timeout=60)
    assert not first.sandbox_died, first.output
    assert "ok" in first.output.splitlines() or first.shell_restarted
    assert_usable(box)
    assert_usable(box)  # nothing of the bomb is left to take the slots back


@pytest.mark.parametrize("command", ["sleep 100000", "yes > /dev/null", "x=$(sleep 100000)"])
def test_a_command_that_never_ends_is_stopped_at_its_timeout(box, command):
    box.run_command("cd /tmp && export KEPT=yes", timeout=30)
    result = box.run_command(command, timeout=3)
    assert result.timed_out
    assert "timed out after 3 s and was stopped" in result.output
    assert not result.shell_restarted
    assert_usable(box)
    assert box.run_command('pwd; echo "$KEPT"', timeout=30).output == "/tmp\nyes\n"


@pytest.mark.parametrize(
    ("fill", "path"),
    [("dd if=/dev/zero of=/testbed/big bs=1M", "/testbed/big"), ("yes > /tmp/x", "/tmp/x")],
    ids=["testbed", "tmp"],
)
def test_a_full_disk_says_so_and_the_next_commands_run(fill, path):
    sandbox = start_with(testbed_size="128m", tmp_size="128m")
    try:
        result = sandbox.run_command(fill, timeout=120)
        assert "No space left on device" in result.output
        assert sandbox.run_command("echo ok", timeout=30).output == "ok\n"
        assert sandbox.run_command(f"rm {path}", timeout=30).exit_code == 0
        # The shell's own log was not on the full disk: long output is still saved whole.
        long = sandbox.run_command("seq 1 100000", timeout=60)
        assert long.full_output_path
        saved = sandbox.run_command(f"grep -c . {long.full_output_path}; tail -n 1 {long.full_output_path}", timeout=30)
        assert saved.output.split() == ["100000", "100000"]
        written = sandbox.run_command(f"echo small > {path} && cat {path}", timeout=30)
        assert written.output == "small\n"
    finally:
        sandbox.stop()


def test_a_command_printing_a_gigabyte_is_stopped_and_the_worker_reads_a_bounded_amount(box):
    measured = run_measured(box, "head -c 1000000000 /dev/zero | tr '\\0' x; echo; echo done", timeout=240)
    result, peak, streamed = measured.result, measured.worker_peak_bytes, measured.streamed_chars
    assert result.output_clipped
    assert result.output.startswith("xxxx")
    assert "printed more than 128 MB and was stopped" in result.output
    assert "done" not in result.output
    assert len(result.output) < 20_000
    assert peak < 20 * 1024 * 1024, f"worker peak {peak / 1e6:.1f} MB"
    assert streamed < 5_000_000
    assert not result.shell_restarted
    assert_usable(box)


def test_a_helper_that_prints_without_end_is_not_read_past_a_bound(box):
    with pytest.raises(ExecOutputTooLarge):
        box.exec(["yes"], timeout=60)
    assert_usable(box)
