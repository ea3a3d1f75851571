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
- On the worker side only a head and a tail of the output stay in memory.
"""

from __future__ import annotations

import codecs
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

import docker.errors

from sandboxes.docker_exec import ExecClosed, ExecConnection
from sandboxes.runtime import CommandResult, OutputCallback

logger = logging.getLogger(__name__)

STATE_DIR = "/tmp/.atelier"  # noqa: S108 - paths inside the sandbox
OUTPUT_LOG = f"{STATE_DIR}/output.log"
SAVED_OUTPUT_DIR = "/tmp/outputs"  # noqa: S108
# Copied onto / at start, one process for every directory above (the image
# builds it: platform/sandbox/Dockerfile); without it the shell makes them.
SKELETON = "/opt/atelier/skel"
_RS = "\x1e"  # record separator: starts our control lines, rare in real output
_KILL_GRACE_SECONDS = 3.0
_MAX_KILL_ROUNDS = 3
# A killed sandbox (OOM, stopped from outside) can leave the exec's socket open:
# while a command is silent, check this often that the container still runs.
_LIVENESS_SECONDS = 1.0

_BOOTSTRAP = rf"""
exec 2>&1
set -m
shopt -s expand_aliases
alias declare='declare -g' typeset='typeset -g'
[ -d {SKELETON} ] && cp -rn {SKELETON}/. / 2>/dev/null
for __atl_d in {STATE_DIR} {SAVED_OUTPUT_DIR} /testbed/input /testbed/output; do
  [ -d "$__atl_d" ] || {{ mkdir -p {STATE_DIR} {SAVED_OUTPUT_DIR} /testbed/input /testbed/output 2>/dev/null; break; }}
done
cd /testbed 2>/dev/null
# tee is started in the background of the process substitution, so it is not
# the shell's child: a plain `wait` (as in `a & b & wait`) must not wait for it.
exec > >({{ tee -a {OUTPUT_LOG} & }} 0<&0) 2>&1
wait $! 2>/dev/null
trap 'return 130 2>/dev/null' USR1
__atl_run() {{ eval "$__atl_cmd" </dev/null; }}
__atl_exec() {{
  read -r __atl_up _ </proc/uptime
  printf '%s\n' "${{__atl_up/./}}" >{STATE_DIR}/t0
  : >{OUTPUT_LOG}
  __atl_run
  __atl_rc=$?
  __atl_count
  printf '\n\036__ATL_%s:%s:%s\n' "$1" "$__atl_rc" "$__atl_n"
}}
# How many processes the sandbox has (-1: cannot tell, say the agent turned globbing off).
__atl_count() {{ __atl_p=(/proc/[0-9]*); if [ -e "$__atl_p" ]; then __atl_n=${{#__atl_p[@]}}; else __atl_n=-1; fi; }}
__atl_save() {{
  grep -av $'^\036__ATL_' {OUTPUT_LOG} | sed '${{/^$/d}}' >"$1" 2>/dev/null
  printf '\n\036__ATL_%s:%s\n' "$2" "$?"
}}
__atl_count
printf '\036__ATL_READY:%s:%s\n' "$$" "$__atl_n"
"""

# Run from a second exec on timeout: tell the shell to abandon the command,
# then kill the process groups of the shell's children started since the
# command began (earlier background jobs survive; the clock comparison has
# 100 ms slack, so a job started within 100 ms before the command may not).
_KILLER = rf"""
shell=$1
read -r t0 < {STATE_DIR}/t0 || t0=0
t0=$(( 10#$t0 - 10 ))  # uptime and process start times round differently: 100 ms slack
kill -USR1 "$shell" 2>/dev/null
for p in /proc/[0-9]*; do
  s=$(< "$p/stat") 2>/dev/null || continue
  r=${{s##*) }}
  set -- $r
  [ "$2" = "$shell" ] || continue
  [ "${{20}}" -ge "$t0" ] || continue
  [ "$3" != "$shell" ] || continue
  kill -KILL -- "-$3" 2>/dev/null
done
exit 0
"""


@dataclass(frozen=True)
class ShellLimits:
    output_limit: int  # characters the model sees
    stream_limit: int  # characters streamed to the callback per command


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

    def render(self, saved_path: str | None) -> str:
        if not self.truncated:
            return self.head + self.tail
        cut = self.total - len(self.head) - len(self.tail)
        where = f" The whole output is saved in {saved_path}." if saved_path else ""
        return f"{self.head}\n\n[... {cut} characters cut ...{where}]\n\n{self.tail}"


class _Framer:
    """Finds a command's end marker in streamed text, releasing the text before it."""

    def __init__(self, token: str) -> None:
        self.marker = f"\n{_RS}__ATL_{token}:"
        self.pending = ""
        self.status: int | None = None
        self.processes: int | None = None  # in the sandbox when the command ended, if reported
        self.done = False

    def feed(self, text: str) -> str:
        self.pending += text
        index = self.pending.find(self.marker)
        if index >= 0:
            end = self.pending.find("\n", index + len(self.marker))
            released = self.pending[:index]
            if end >= 0:
                code, _, processes = self.pending[index + len(self.marker) : end].partition(":")
                self.status = _int_or_none(code)
                self.processes = _int_or_none(processes)
                self.done = True
                self.pending = ""
            else:
                self.pending = self.pending[index:]
            return released
        keep = len(self.marker) - 1
        if len(self.pending) <= keep:
            return ""
        released, self.pending = self.pending[:-keep], self.pending[-keep:]
        return released


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
            conn = ExecConnection.open(
                self._api, self._container_id, ["bash", "--noprofile", "--norc"], workdir="/testbed"
            )
        except Exception as exc:  # docker.errors.APIError, connection errors
            raise ShellUnavailable(f"cannot start a shell: {exc}") from exc
        conn.send(_BOOTSTRAP.encode())
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
        self.start()

    def _kill_shell(self) -> None:
        """Kill the old shell and its jobs, so a runaway command cannot outlive it."""
        script = 'for g in $(ps -o pgid= --ppid "$1"); do kill -KILL -- "-$g"; done; kill -KILL "$1"; exit 0'
        self._run_helper(["bash", "-c", script, "kill-shell", self._pid])

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
            if not text:
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
        except (ExecClosed, OSError):
            shell_died = True
        emit(framer.pending if not framer.done else "")

        saved_path = None
        if collector.truncated and not shell_died:
            saved_path = self._save_output()
        output = collector.render(saved_path)
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
        exit_code = None if (timed_out or shell_died) else framer.status
        self.idle = (
            not (timed_out or shell_died or restarted_before)
            and framer.processes is not None
            and self._resting_processes is not None
            and 0 < framer.processes <= self._resting_processes
        )
        return CommandResult(
            exit_code=exit_code,
            output=output,
            duration=time.monotonic() - started,
            timed_out=timed_out,
            shell_restarted=shell_died or restarted_before,
            full_output_path=saved_path,
        )

    def _container_running(self) -> bool:
        try:
            return bool(self._api.inspect_container(self._container_id)["State"].get("Running"))
        except docker.errors.NotFound:
            return False
        except Exception:  # the engine cannot tell: assume alive, the timeout still applies
            return True

    def _kill_foreground(self) -> None:
        self._run_helper(["bash", "-c", _KILLER, "killer", self._pid])

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

    def _save_output(self) -> str | None:
        """Copy the command's whole output (the tee log) to a numbered file."""
        assert self._conn is not None
        path = f"{SAVED_OUTPUT_DIR}/command-{self._commands}.txt"
        token = secrets.token_hex(8)
        framer = _Framer(token)
        try:
            self._conn.send(f"__atl_save {path} {token}\n".encode())
            deadline = time.monotonic() + 60
            while not framer.done:
                frame = self._conn.read_frame(deadline)
                if frame is None:
                    return None
                framer.feed(frame[1].decode("utf-8", "replace"))
        except (ExecClosed, OSError):
            return None
        return path if framer.status == 0 else None
