"""The bash the persistent shell runs inside the sandbox (see sandboxes.shell).

The programs are files in sandboxes/programs/: the bootstrap sets the shell up
(limits, output log, the per-command wrapper), the stop program ends what a
command or an old shell started, and both carry the sweep that does the
killing. All of it uses bash builtins where it can: each process started under
gVisor costs ~35 ms, and near the process limit a new process may not start at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandboxes.programs import program_text

STATE_DIR = "/tmp/.atelier"  # noqa: S108 - paths inside the sandbox
SAVED_OUTPUT_DIR = "/tmp/outputs"  # noqa: S108
TESTBED = "/testbed"
# Copied onto / at start, one process for every directory above (the image
# builds it: platform/sandbox/Dockerfile); without it the shell makes them.
SKELETON = "/opt/atelier/skel"

_SWEEP = program_text("shell_sweep.sh")
# Sent on the shell's stdin, with its settings in the environment (bootstrap_environment).
BOOTSTRAP = _SWEEP + program_text("shell_bootstrap.sh")
_STOP = _SWEEP + program_text("shell_stop.sh")


@dataclass(frozen=True)
class ShellLimits:
    output_limit: int  # characters the model sees
    stream_limit: int  # characters streamed to the callback per command
    output_max_bytes: int = 128 * 1024 * 1024  # bytes a command may print before it is stopped
    memory_kb: int = 0  # address space a command may map at most (0: no limit)
    memory_reserve_kb: int = 0  # kept free of the sandbox's memory when a command starts
    nproc: int = 0  # processes (the sandbox's, under gVisor) the shell and its commands may have (0: no limit)


def bootstrap_environment(
    limits: ShellLimits,
    *,
    state_dir: str = STATE_DIR,
    saved_output_dir: str = SAVED_OUTPUT_DIR,
    testbed: str = TESTBED,
    skeleton: str = SKELETON,
) -> dict[str, str]:
    """The bootstrap's settings (the directories are the sandbox's unless a test runs it elsewhere)."""
    return {
        "ATL_SKELETON": skeleton,
        "ATL_STATE_DIR": state_dir,
        "ATL_SAVED_OUTPUT_DIR": saved_output_dir,
        "ATL_TESTBED": testbed,
        "ATL_NPROC": str(limits.nproc) if limits.nproc else "unlimited",
        "ATL_MEMORY_KB": str(limits.memory_kb) if limits.memory_kb else "unlimited",
        "ATL_RESERVE_KB": str(limits.memory_reserve_kb),
        "ATL_CROWDED": str(limits.nproc * 3 // 4) if limits.nproc else "1000000000",
    }


def stop_argv(what: Literal["command", "shell"], shell_pid: str, *, state_dir: str = STATE_DIR) -> list[str]:
    """The exec that stops the shell's current command, or the whole old shell before a new one starts."""
    return ["bash", "-c", _STOP, "stop", what, shell_pid, state_dir]
