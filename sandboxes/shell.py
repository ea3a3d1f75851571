"""The persistent shell behind `execute_bash`: one long-lived bash per sandbox.

One `docker exec` runs bash with its stdin and output attached to a socket.
Each command is sent as text terminated by a NUL byte, read by the builtin
`read -d ''`, run with `eval` (so `cd`, variables and background jobs
persist), and followed by a line carrying a random per-command token and the
exit code. Costs per command: no process start, a few bytes each way.

- `set -m` puts every job in its own process group, so a timeout can kill the
  command's process groups from a second exec while the shell survives; a
  USR1 trap makes the shell abandon the rest of the command (loops included).
- The shell's output passes through one `tee` into a log, so when a command
  prints more than the model should read, its whole output can be saved to a
  file in the sandbox without the worker ever holding it.
- On the worker side only a head and a tail of the output stay in memory, and
  a command that prints more than `output_max_bytes` is stopped: the worker
  never reads an unbounded stream.
- The sandbox must survive what its commands do. gVisor kills the whole
  sandbox when its memory limit is reached, so before each command the shell
  lowers its own address-space limit (inherited by the command) to the memory
  still free minus a reserve (tmpfs files count as memory); a process past it
  gets an allocation error instead. The shell's process limit sits below the
  sandbox's, so after a fork bomb the worker can still start the helper that
  kills it and a new shell. The state and the output log live on their own
  small tmpfs (the agent filling /tmp cannot break them).
"""

from __future__ import annotations

import codecs
import logging
import re
import secrets
import time
from typing import Any

import docker.errors

from sandboxes import shell_scripts
from sandboxes.docker_exec import ExecClosed, ExecConnection
from sandboxes.runtime import CommandResult, OutputCallback
from sandboxes.shell_scripts import ShellLimits

logger = logging.getLogger(__name__)

_RS = "\x1e"  # record separator: starts our control lines, rare in real output
_KILL_GRACE_SECONDS = 3.0
_MAX_KILL_ROUNDS = 3
# A killed sandbox (OOM, stopped from outside) can leave the exec's socket open:
# while a command is silent, check this often that the container still runs.
_LIVENESS_SECONDS = 1.0
_RESTART_PAUSE_SECONDS = 1.0
_MAX_MARKER_LINE = 200  # characters of an end line after its marker: more is not one of ours

# What an allocation failure prints: Python, C (strerror ENOMEM), C++, bash, GNU tools, numpy.
_OUT_OF_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|bad_alloc|out of memory|memory exhausted|cannot allocate", re.IGNORECASE
)
_SIGKILL_EXIT = 137
_SETTLE_SECONDS = 10.0


class ShellUnavailable(RuntimeError):
    """No shell can be started (the sandbox stopped)."""


class OutputCollector:
    """Keeps the first and last characters of a command's output, counts the rest."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = ""
        self.tail = ""
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if len(self.head) < self.head_limit:
            room = self.head_limit - len(self.head)
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self.tail_limit :]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_limit + self.tail_limit

    def render(self, saved_path: str | None, *, whole: bool = True) -> str:
        if not self.truncated:
            return self.head + self.tail
        cut = self.total - len(self.head) - len(self.tail)
        where = ""
        if saved_path:
            where = f" The {'whole' if whole else 'printed'} output is saved in {saved_path}."
        return f"{self.head}\n\n[... {cut} characters cut ...{where}]\n\n{self.tail}"


class _Framer:
    """Finds a command's end marker in streamed text, releasing the text before it."""

    def __init__(self, token: str) -> None:
        self.marker = f"\n{_RS}__ATL_{token}:"
        self.pending = ""
        self.status: int | None = None
        self.processes: int | None = None  # in the sandbox when the command ended, if reported
        self.done = False

    def _marker_start_at_end(self) -> int:
        """The length of the longest end of `pending` that the marker starts with."""
        for length in range(min(len(self.pending), len(self.marker) - 1), 0, -1):
            if self.marker.startswith(self.pending[-length:]):
                return length
        return 0

    def feed(self, text: str) -> str:
        self.pending += text
        released = []
        while True:
            index = self.pending.find(self.marker)
            if index < 0:
                # Hold back only what could be the start of the marker: output shorter than the
                # marker (a "started" before a long wait) must not wait for the command to end.
                keep = self._marker_start_at_end()
                if len(self.pending) > keep:
                    released.append(self.pending[: len(self.pending) - keep])
                    self.pending = self.pending[len(self.pending) - keep :]
                return "".join(released)
            released.append(self.pending[:index])
            end = self.pending.find("\n", index + len(self.marker))
            if end >= 0:
                code, _, processes = self.pending[index + len(self.marker) : end].partition(":")
                self.status = _int_or_none(code)
                self.processes = _int_or_none(processes)
                self.done = True
                self.pending = ""
                return "".join(released)
            if len(self.pending) - index <= _MAX_MARKER_LINE:
                self.pending = self.pending[index:]  # the rest of the end line is on its way
                return "".join(released)
            # Not our end line (ours is short): text that merely looks like its start.
            released.append(self.pending[index : index + 1])
            self.pending = self.pending[index + 1 :]


def _ran_out_of_memory(status: int | None, collector: OutputCollector) -> bool:
    if status in (0, None):
        return False
    return status == _SIGKILL_EXIT or bool(_OUT_OF_MEMORY.search(collector.head + collector.tail))


def _int_or_none(text: str) -> int | None:
    return int(text) if text.lstrip("-").isdigit() else None


class PersistentShell:
    def __init__(self, api: Any, container_id: str, limits: ShellLimits) -> None:
        self._api = api
        self._container_id = container_id
        self._limits = limits
        self._conn: ExecConnection | None = None
        self._pid: str = ""
        self._commands = 0
        self._resting_processes: int | None = None  # the sandbox's processes with only the shell running
        # True when the last command left nothing running: the sandbox may be frozen until the next one.
        self.idle = False

    # -- lifecycle -------------------------------------------------------
    def start(self, timeout: float = 30.0) -> None:
        try:
            environment = shell_scripts.bootstrap_environment(self._limits)
            argv, workdir = ["bash", "--noprofile", "--norc"], shell_scripts.TESTBED
            conn = ExecConnection.open(self._api, self._container_id, argv, workdir=workdir, environment=environment)
        except Exception as exc:  # docker.errors.APIError, connection errors
            raise ShellUnavailable(f"cannot start a shell: {exc}") from exc
        conn.send(shell_scripts.BOOTSTRAP.encode())
        deadline = time.monotonic() + timeout
        text = ""
        try:
            while f"{_RS}__ATL_READY:" not in text or not text.endswith("\n"):
                frame = conn.read_frame(deadline)
                if frame is None:
                    raise ShellUnavailable("the shell did not start in time")
                text += frame[1].decode("utf-8", "replace")
        except ExecClosed as exc:
            conn.close()
            raise ShellUnavailable(f"the shell exited while starting: {text[-500:]}") from exc
        pid, _, processes = text.rsplit(f"{_RS}__ATL_READY:", 1)[1].strip().partition(":")
        self._pid = pid
        if self._resting_processes is None:
            # Counted once, in the fresh sandbox: after a restart, jobs the old shell left behind count as work.
            self._resting_processes = _int_or_none(processes)
        count = _int_or_none(processes)
        self.idle = count is not None and self._resting_processes is not None and 0 < count <= self._resting_processes
        self._conn = conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _restart(self) -> None:
        if self._conn is not None:
            self._kill_shell()
        self.close()
        try:
            self.start()
        except ShellUnavailable:
            # The old session's processes may still hold the process slots a moment after the kill.
            time.sleep(_RESTART_PAUSE_SECONDS)
            self.start()

    def _kill_shell(self) -> None:
        """Kill the old shell and its jobs, so a runaway command cannot outlive it."""
        self._run_helper(shell_scripts.stop_argv("shell", self._pid))

    # -- commands ----------------------------------------------------------
    def run(self, command: str, *, timeout: float, on_output: OutputCallback | None = None) -> CommandResult:
        started = time.monotonic()
        if "\0" in command:
            return CommandResult(exit_code=None, output="Error: the command contains a NUL byte.", duration=0.0)
        restarted_before = False
        if self._conn is None:
            self._restart()  # raises ShellUnavailable if the sandbox is gone
            restarted_before = True
        assert self._conn is not None
        self._commands += 1
        self.idle = False
        token = secrets.token_hex(8)
        collector = OutputCollector(self._limits.output_limit)
        streamed = 0
        stream_note_sent = False

        def emit(text: str) -> None:
            nonlocal streamed, stream_note_sent
            if not text or clipped:
                return
            collector.add(text)
            if on_output is None:
                return
            if streamed < self._limits.stream_limit:
                piece = text[: self._limits.stream_limit - streamed]
                streamed += len(piece)
                on_output(piece)
            elif not stream_note_sent:
                stream_note_sent = True
                on_output("\n[... live output paused: too much output; the result shows its head and tail ...]\n")

        framer = _Framer(token)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        request = f"IFS= read -r -d '' __atl_cmd\n{command}\0__atl_exec {token}\n"
        deadline = started + timeout
        timed_out = False
        clipped = False  # stopped for printing too much: the rest is read and dropped
        received = 0
        kill_rounds = 0
        shell_died = False
        try:
            self._conn.send(request.encode("utf-8", "surrogateescape"))
            while not framer.done:
                frame = self._conn.read_frame(min(deadline, time.monotonic() + _LIVENESS_SECONDS))
                if frame is None and time.monotonic() < deadline:
                    if not self._container_running():
                        shell_died = True
                        break
                    continue
                if frame is None:
                    timed_out = True
                    if kill_rounds >= _MAX_KILL_ROUNDS:
                        shell_died = True
                        break
                    kill_rounds += 1
                    self._kill_foreground()
                    deadline = time.monotonic() + _KILL_GRACE_SECONDS
                    continue
                emit(framer.feed(decoder.decode(frame[1])))
                received += len(frame[1])
                if received > self._limits.output_max_bytes and not clipped:
                    # While the killer runs nothing is read, so the command blocks on its full pipe.
                    clipped = True
                    if on_output is not None:
                        on_output("\n[... too much output: the command is being stopped ...]\n")
                    self._kill_foreground()
        except (ExecClosed, OSError):
            shell_died = True
        emit(framer.pending if not framer.done else "")

        saved_path = None
        if collector.truncated and not shell_died:
            saved_path = self._save_output()
        output = collector.render(saved_path, whole=not clipped)
        if clipped and not shell_died:
            output += (
                f"\n[The command printed more than {self._limits.output_max_bytes // (1024 * 1024)} MB and was "
                "stopped. Send big output to a file (command > /tmp/out.txt) and read parts of it "
                "(head, tail, grep).]"
            )
        elif not (timed_out or shell_died) and _ran_out_of_memory(framer.status, collector):
            output += self._out_of_memory_note()
        if (timed_out or clipped) and not shell_died:
            self._settle()
        if timed_out and not shell_died:
            output += (
                f"\n[The command timed out after {timeout:g} s and was stopped. "
                "The shell is still running: the working directory and variables are kept.]"
            )
        if shell_died:
            reason = f"timed out after {timeout:g} s and could not be stopped" if timed_out else "ended the shell"
            output += (
                f"\n[The command {reason}. A new shell was started: the working directory, "
                "variables and background jobs were reset. Files are kept.]"
            )
            self._restart()  # raises ShellUnavailable if the sandbox is gone
        elif restarted_before:
            output = "[A new shell was started before this command; earlier shell state was reset.]\n" + output
        exit_code = None if (timed_out or shell_died or clipped) else framer.status
        self.idle = (
            not (timed_out or shell_died or restarted_before or clipped)
            and framer.processes is not None
            and self._resting_processes is not None
            and 0 < framer.processes <= self._resting_processes
        )
        return CommandResult(
            exit_code=exit_code,
            output=output,
            duration=time.monotonic() - started,
            timed_out=timed_out,
            output_clipped=clipped,
            shell_restarted=shell_died or restarted_before,
            full_output_path=saved_path,
        )

    def _out_of_memory_note(self) -> str:
        if not self._limits.memory_kb:
            return "\n[The command ran out of memory (or was killed). The shell is still running.]"
        return (
            f"\n[The command ran out of memory (or was killed). A process may use at most about "
            f"{self._limits.memory_kb // 1024} MB here, less while files fill /testbed, /tmp or the home "
            "directory (they are kept in memory). The shell is still running.]"
        )

    def _container_running(self) -> bool:
        try:
            return bool(self._api.inspect_container(self._container_id)["State"].get("Running"))
        except docker.errors.NotFound:
            return False
        except Exception:  # the engine cannot tell: assume alive, the timeout still applies
            return True

    def _kill_foreground(self) -> None:
        """Kill what the current command started."""
        self._run_helper(shell_scripts.stop_argv("command", self._pid))

    def _run_helper(self, argv: list[str]) -> None:
        if not self._pid:
            return
        try:
            helper = ExecConnection.open(self._api, self._container_id, argv, stdin=False)
            try:
                for _ in helper.frames(time.monotonic() + 10):
                    pass
            finally:
                helper.close()
        except Exception:  # a failed kill escalates to a shell restart
            logger.debug("sandbox helper %s failed", argv[:2], exc_info=True)

    def _settle(self) -> None:
        """Let the shell report the jobs a stop killed, and drop what it says (it is no command's output)."""
        self._call_helper("__atl_settle", timeout=_SETTLE_SECONDS)

    def _save_output(self) -> str | None:
        """Copy the command's whole output (the tee log) to a numbered file."""
        path = f"{shell_scripts.SAVED_OUTPUT_DIR}/command-{self._commands}.txt"
        return path if self._call_helper(f"__atl_save {path}", timeout=60) == 0 else None

    def _call_helper(self, call: str, *, timeout: float) -> int | None:
        """Run one of the shell's own functions (its token appended) and drop what it prints;
        its status, or None when it did not answer in time."""
        assert self._conn is not None
        token = secrets.token_hex(8)
        framer = _Framer(token)
        try:
            self._conn.send(f"{call} {token}\n".encode())
            deadline = time.monotonic() + timeout
            while not framer.done:
                frame = self._conn.read_frame(deadline)
                if frame is None:
                    return None
                framer.feed(frame[1].decode("utf-8", "replace"))
        except (ExecClosed, OSError):
            return None
        return framer.status
