"""The persistent shell's programs on this machine's bash, against temporary directories.

The bootstrap and the stop program the worker sends into the sandbox (sandboxes/shell_scripts.py),
driven the way sandboxes/shell.py drives them: commands in, end markers out, a second process to
stop a command or the whole shell. The shell is a session leader here as it is in the sandbox, so
the sweep can only ever touch the processes it started. The docker-marked tests in test_shell.py
and test_survival.py check the same programs inside gVisor.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from sandboxes.shell_scripts import BOOTSTRAP, ShellLimits, bootstrap_environment, stop_argv

pytestmark = pytest.mark.timeout(60)
LIMITS = ShellLimits(output_limit=16_000, stream_limit=16_000)


@dataclass(frozen=True)
class Ended:
    output: str
    status: int
    processes: int | None


class HostShell:
    """bash with the bootstrap, in a session of its own, spoken to through pipes."""

    def __init__(self, root: Path, limits: ShellLimits = LIMITS, **overrides: str) -> None:
        root.mkdir(exist_ok=True)
        self.testbed, self.state, self.saved = root / "testbed", root / "state", root / "outputs"
        settings = bootstrap_environment(
            limits,
            state_dir=str(self.state),
            saved_output_dir=str(self.saved),
            testbed=str(self.testbed),
            skeleton=str(root / "no-skeleton"),
        )
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=root,
            env={"PATH": os.environ["PATH"], "HOME": str(root), **settings, **overrides},
            start_new_session=True,
        )
        self.pid = self.proc.pid
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self._in, self._out = self.proc.stdin, self.proc.stdout.fileno()
        self._in.write(BOOTSTRAP.encode())
        self._in.flush()
        self.ready = self._read_until(re.compile(r"\x1e__ATL_READY:(\d+):(-?\d+)\n"))

    def _read_until(self, pattern: re.Pattern[str], timeout: float = 20) -> re.Match[str]:
        text = ""
        deadline = time.monotonic() + timeout
        while not (found := pattern.search(text)):
            ready, _, _ = select.select([self._out], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._out, 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"no end marker within {timeout} s; the shell said: {text!r}")
            text += chunk.decode("utf-8", "replace")
        self.last_text = text
        return found

    def send(self, command: str) -> str:
        token = secrets.token_hex(8)
        self._in.write(f"IFS= read -r -d '' __atl_cmd\n{command}\0__atl_exec {token}\n".encode())
        self._in.flush()
        return token

    def wait(self, token: str, timeout: float = 20) -> Ended:
        found = self._read_until(re.compile(rf"\n\x1e__ATL_{token}:(-?\d+):(-?\d*)\n"), timeout)
        processes = found.group(2)
        return Ended(self.last_text[: found.start()], int(found.group(1)), int(processes) if processes else None)

    def run(self, command: str) -> Ended:
        return self.wait(self.send(command))

    def call(self, function: str) -> int:
        """One of the shell's own functions, as the worker calls them (its token last)."""
        token = secrets.token_hex(8)
        self._in.write(f"{function} {token}\n".encode())
        self._in.flush()
        return int(self._read_until(re.compile(rf"\n\x1e__ATL_{token}:(-?\d+)\n")).group(1))

    def stop(self, what: Literal["command", "shell"]) -> None:
        subprocess.run(stop_argv(what, str(self.pid), state_dir=str(self.state)), timeout=30, check=True)

    def session(self) -> list[tuple[int, str]]:
        """(pid, command) of the processes of the shell's session still alive, the shell's own included."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text()
            except (OSError, ValueError):
                continue
            name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
            if fields[3] == str(self.pid) and fields[0] != "Z":
                found.append((int(entry.name), name))
        return found

    def close(self) -> None:
        if self.proc.poll() is None:
            self.stop("shell")
            self.proc.wait(timeout=10)
        for pid, _ in self.session():  # whatever a broken stop program left behind: this test's own
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[HostShell]:
    host_shell = HostShell(tmp_path)
    yield host_shell
    host_shell.close()


def test_the_shell_starts_in_its_testbed_with_its_directories_and_says_it_is_ready(shell):
    assert shell.ready.group(1) == str(shell.pid)
    assert int(shell.ready.group(2)) > 0  # the processes it sees
    for folder in (shell.testbed / "input", shell.testbed / "output", shell.state, shell.saved):
        assert folder.is_dir()
    assert shell.run("pwd").output == f"{shell.testbed}\n"


def test_the_settings_do_not_reach_the_commands(shell):
    assert shell.run("env | grep -c '^ATL_'; true").output == "0\n"


def test_directory_variables_and_exit_codes_persist_between_commands(shell):
    assert shell.run("cd input && greeting=hello").status == 0
    ended = shell.run('echo "$greeting from $PWD"; (exit 3)')
    assert (ended.output, ended.status) == (f"hello from {shell.testbed}/input\n", 3)
    assert shell.run("echo oops >&2").output == "oops\n"  # stderr joins stdout, as the model reads it


def test_the_whole_output_of_a_command_can_be_saved_without_the_markers(shell):
    shell.run("seq 1 5")
    assert shell.call(f"__atl_save {shell.saved}/command-1.txt") == 0
    assert (shell.saved / "command-1.txt").read_text() == "1\n2\n3\n4\n5\n"
    assert shell.call(f"__atl_save {shell.testbed}/missing/command-2.txt") != 0
    assert not (shell.testbed / "missing").exists()


def test_each_command_may_map_the_free_memory_less_the_reserve_and_no_more_than_the_limit(tmp_path):
    roomy = HostShell(tmp_path / "roomy", ShellLimits(1000, 1000, memory_kb=4_000_000, memory_reserve_kb=0))
    starved = HostShell(tmp_path / "starved", ShellLimits(1000, 1000, memory_kb=4_000_000, memory_reserve_kb=10**12))
    try:
        free_kb = next(
            int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemAv")
        )
        assert int(roomy.run("ulimit -S -v").output) == min(4_000_000, free_kb)
        # Less than nothing left: the floor, so that a command can still start.
        assert starved.run("ulimit -S -v").output == "32768\n"
    finally:
        roomy.close()
        starved.close()


def test_stopping_a_command_ends_it_and_what_it_started_and_keeps_the_shell(shell):
    assert shell.run("sleep 300 & echo $! >earlier.pid").status == 0
    earlier = int((shell.testbed / "earlier.pid").read_text())
    time.sleep(0.3)  # the stop spares jobs that started more than 100 ms before the command
    token = shell.send("sleep 120 & sleep 120; echo never")
    time.sleep(0.5)
    assert sorted(name for _, name in shell.session()).count("sleep") == 3
    shell.stop("command")
    ended = shell.wait(token)
    assert ended.status != 0
    assert "never" not in ended.output
    assert [pid for pid, name in shell.session() if name == "sleep"] == [earlier]
    assert shell.call("__atl_settle") == 0  # bash's notices of the killed jobs go here
    assert shell.run("echo still here").output == "still here\n"


def test_stopping_the_shell_ends_its_whole_session(shell):
    shell.run("sleep 300 & sleep 300 &")
    assert len(shell.session()) >= 4  # the shell, its tee, two jobs
    shell.stop("shell")
    assert shell.proc.wait(timeout=10) != 0
    deadline = time.monotonic() + 10
    while shell.session() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shell.session() == []


# A command may unset the shell's clock: with no start to go by, the sweep ends everything the
# session started rather than nothing.
@pytest.mark.parametrize("before", ["", "unset EPOCHREALTIME"], ids=["clock-kept", "clock-unset"])
def test_a_crowded_sandbox_is_swept_after_the_command_and_the_model_is_told(tmp_path, before):
    # Crowded from one process on: every command starts and ends with a sweep.
    crowded = HostShell(tmp_path, ATL_CROWDED="1")
    try:
        if before:
            crowded.run(before)
        ended = crowded.run("sleep 300 & echo started")
        assert "started\n" in ended.output
        assert "\n[The sandbox was at its process limit (" in ended.output
        assert "the processes started since the command began were stopped.]\n" in ended.output
        assert [name for _, name in crowded.session() if name == "sleep"] == []
        assert "\nnext\n" in crowded.run("echo next").output
    finally:
        crowded.close()


# Outside a sandbox the shell counts every process of the machine: beside other tests, whose processes
# come and go by dozens, the count it is given as its limit would not hold still.
@pytest.mark.alone
def test_what_a_background_job_crowds_the_sandbox_with_between_commands_is_swept_before_the_next(tmp_path):
    # The processes are counted before a command only when something ran on after the last one.
    counting = HostShell(tmp_path / "counting")
    resting = int(counting.ready.group(2))  # processes here with only a shell and its tee running
    counting.close()
    crowded = HostShell(tmp_path / "crowded", ATL_CROWDED=str(resting + 30))
    try:
        ended = crowded.run(
            "for i in $(seq 10); do sleep 300 & done; (sleep 0.3; for i in $(seq 40); do sleep 300 & done) &"
        )
        assert "process limit" not in ended.output
        time.sleep(1.0)
        nxt = crowded.run("echo next")
        assert "[The sandbox was at its process limit (" in nxt.output
        assert "the processes started since before this command began were stopped.]\n" in nxt.output
        assert "\nnext\n" in nxt.output.split("before this command began were stopped.]", 1)[1]
        assert [name for _, name in crowded.session() if name == "sleep"] == []
    finally:
        crowded.close()
