"""The bash the persistent shell runs inside the sandbox (see sandboxes.shell).

The bootstrap sets the shell up (limits, output log, the per-command wrapper);
the sweep and the killers stop what a command started. All of it uses bash
builtins where it can: each process started under gVisor costs ~35 ms, and
near the process limit a new process may not start at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STATE_DIR = "/tmp/.atelier"  # noqa: S108 - paths inside the sandbox
OUTPUT_LOG = f"{STATE_DIR}/output.log"
SAVED_OUTPUT_DIR = "/tmp/outputs"  # noqa: S108
# Copied onto / at start, one process for every directory above (the image
# builds it: platform/sandbox/Dockerfile); without it the shell makes them.
SKELETON = "/opt/atelier/skel"

# Formatted with the ShellLimits by bootstrap_script().
BOOTSTRAP = r"""
exec 2>&1
set -m
shopt -s expand_aliases
alias declare='declare -g' typeset='typeset -g'
[ -d @SKELETON@ ] && cp -rn @SKELETON@/. / 2>/dev/null
for __atl_d in @STATE_DIR@ @SAVED_OUTPUT_DIR@ /testbed/input /testbed/output; do
  [ -d "$__atl_d" ] || { mkdir -p @STATE_DIR@ @SAVED_OUTPUT_DIR@ /testbed/input /testbed/output 2>/dev/null; break; }
done
cd /testbed 2>/dev/null
# tee is started in the background of the process substitution, so it is not
# the shell's child: a plain `wait` (as in `a & b & wait`) must not wait for it.
# Its pid is noted: it is in the shell's process group, and a sweep after a command must spare it.
exec > >({ tee -a @OUTPUT_LOG@ & echo $! >@STATE_DIR@/tee; } 0<&0) 2>&1
wait $! 2>/dev/null
read -r __atl_tee 2>/dev/null <@STATE_DIR@/tee
# A hard process limit (the agent cannot raise it again): the rest is the worker's reserve.
ulimit -u @NPROC@ 2>/dev/null
# The address-space limit is soft only: programs that reserve far more address space than they
# use (Chromium, Node: V8) lift it for themselves (the image's Chromium launcher does) and then
# risk the sandbox, not the command. Under gVisor a limit set here holds for the whole sandbox.
ulimit -S -v @MEMORY_KB@ 2>/dev/null
trap 'return 130 2>/dev/null' USR1
__atl_run() { eval "$__atl_cmd" </dev/null; }
# Each command may map at most the memory still free (files on the tmpfs mounts use it too)
# minus the reserve: past it, an allocation fails in the command, not the sandbox.
__atl_mem() {
  __atl_kb=@MEMORY_KB@
  while read -r __atl_k __atl_v _; do
    if [ "$__atl_k" = MemAvailable: ]; then
      (( __atl_v - @RESERVE_KB@ < __atl_kb )) && __atl_kb=$(( __atl_v - @RESERVE_KB@ ))
      break
    fi
  done </proc/meminfo 2>/dev/null
  (( __atl_kb < 32768 )) && __atl_kb=32768
  ulimit -S -v "$__atl_kb" 2>/dev/null
}
__atl_exec() {
  read -r __atl_up _ </proc/uptime
  __atl_since=${__atl_t0:-0}
  __atl_t0=${__atl_up/./}
  printf '%s\n' "$__atl_t0" >@STATE_DIR@/t0 2>/dev/null
  : >@OUTPUT_LOG@ 2>/dev/null
  # Near the process limit (say a fork bomb left running), this command could not even start.
  __atl_count
  (( __atl_n >= @CROWDED@ )) && __atl_sweep "$__atl_since" "before this command"
  __atl_mem
  __atl_run
  __atl_rc=$?
  ulimit -S -v @MEMORY_KB@ 2>/dev/null  # the command's bound, not the shell's own between commands
  __atl_count
  (( __atl_n >= @CROWDED@ )) && __atl_sweep "$__atl_t0" "the command" && __atl_count
  printf '\n\036__ATL_%s:%s:%s\n' "$1" "$__atl_rc" "$__atl_n"
}
# The shell itself stops what its session started since $1 (uptime in hundredths): it needs
# no process for it, so it works when no process can be started.
__atl_sweep() {
  local shell=$$ t0=$(( 10#$1 - 10 )) spare=$__atl_tee what=$2 round found p s r
  @SWEEP@
  printf '\n[The sandbox was at its process limit (%s processes, a fork bomb?): ' "$__atl_n"
  printf 'the processes started since %s began were stopped.]\n' "$what"
}
# How many processes the sandbox has (-1: cannot tell, say the agent turned globbing off).
__atl_count() { __atl_p=(/proc/[0-9]*); if [ -e "$__atl_p" ]; then __atl_n=${#__atl_p[@]}; else __atl_n=-1; fi; }
# After a command was stopped: bash tells of the jobs it reaps ("Killed sleep 60") when it next
# runs something, so this runs next, for up to 300 ms while the killed jobs end, and what it
# prints is dropped instead of landing in the next command's output. Builtins only.
__atl_settle() {
  local __atl_s __atl_r
  read -r __atl_s _ </proc/uptime
  __atl_s=$(( 10#${__atl_s/./} + 30 ))
  while read -r __atl_r _ </proc/uptime && (( 10#${__atl_r/./} < __atl_s )); do
    jobs -n >/dev/null  # reaps and reports what ended
  done
  printf '\n\036__ATL_%s:0\n' "$1"
}
__atl_save() {
  grep -av $'^\036__ATL_' @OUTPUT_LOG@ | sed '${/^$/d}' >"$1" 2>/dev/null
  __atl_rc=$?
  [ "$__atl_rc" = 0 ] || rm -f "$1" 2>/dev/null
  printf '\n\036__ATL_%s:%s\n' "$2" "$__atl_rc"
}
__atl_count
printf '\036__ATL_READY:%s:%s\n' "$$" "$__atl_n"
"""

# Kills, from a second exec, the processes of the shell's session ($shell)
# that started at or after $t0 (in clock ticks since boot), except $spare: by process group,
# or alone when one shares the shell's group (a command substitution). A fork
# bomb forks while it is being killed, so groups are stopped first and the
# sweep repeats until nothing is left. Builtins only: it starts no process,
# so it works when no process can be started.
SWEEP = r"""
quiet=0
for (( round = 0; round < 100 && quiet < 3; round++ )); do
  found=0
  for p in /proc/[0-9]*; do
    read -r s 2>/dev/null <"$p/stat" || continue
    r=${s##*) }
    set -- $r
    [ "$4" = "$shell" ] && [ "$1" != Z ] && [ "${20}" -ge "$t0" ] || continue
    [ "${p#/proc/}" != "$spare" ] && [ "${p#/proc/}" != "$shell" ] || continue
    found=1
    # An exiting process can show group 0, and `kill -- -0` would hit this script's own group.
    if [ "$3" = "$shell" ] || [ "$3" -le 1 ] || [ "$3" = "$$" ]; then
      kill -KILL "${p#/proc/}" 2>/dev/null
    else
      kill -STOP -- "-$3" 2>/dev/null
      kill -KILL -- "-$3" 2>/dev/null
    fi
  done
  if [ "$found" = 1 ]; then quiet=0; continue; fi
  # A process being forked during a sweep shows up only later: look again a little after.
  (( quiet++ ))
  read -r s _ </proc/uptime
  s=$(( 10#${s/./} + 5 ))
  while read -r r _ </proc/uptime && (( 10#${r/./} < s )); do :; done
done
"""

# On timeout (or too much output): tell the shell to abandon the command,
# then kill what the command started:
# its jobs, their children, and orphans whose parent already exited. Earlier
# background jobs survive; the clock comparison has 100 ms slack, so a job
# started within 100 ms before the command may not.
KILLER = (
    rf"""
shell=$1
read -r t0 2>/dev/null <{STATE_DIR}/t0 || t0=0
read -r spare 2>/dev/null <{STATE_DIR}/tee || spare=""
t0=$(( 10#$t0 - 10 ))  # uptime and process start times round differently: 100 ms slack
kill -USR1 "$shell" 2>/dev/null
"""
    + SWEEP
    + "exit 0\n"
)

# Before a new shell replaces the old one: everything of the old shell's
# session goes (jobs reparented to init included), so that its processes
# cannot hold the sandbox's process slots.
KILL_SHELL = 'shell=$1\nt0=0\nspare=""\nkill -KILL "$shell" 2>/dev/null\n' + SWEEP + "exit 0\n"


def bootstrap_script(limits: ShellLimits) -> str:
    values = {
        "SKELETON": SKELETON,
        "STATE_DIR": STATE_DIR,
        "SAVED_OUTPUT_DIR": SAVED_OUTPUT_DIR,
        "OUTPUT_LOG": OUTPUT_LOG,
        "NPROC": str(limits.nproc) if limits.nproc else "unlimited",
        "MEMORY_KB": str(limits.memory_kb) if limits.memory_kb else "unlimited",
        "RESERVE_KB": str(limits.memory_reserve_kb),
        "CROWDED": str(limits.nproc * 3 // 4) if limits.nproc else "1000000000",
        "SWEEP": SWEEP,
    }
    return re.sub(r"@([A-Z_]+)@", lambda match: values[match.group(1)], BOOTSTRAP)


@dataclass(frozen=True)
class ShellLimits:
    output_limit: int  # characters the model sees
    stream_limit: int  # characters streamed to the callback per command
    output_max_bytes: int = 128 * 1024 * 1024  # bytes a command may print before it is stopped
    memory_kb: int = 0  # address space a command may map at most (0: no limit)
    memory_reserve_kb: int = 0  # kept free of the sandbox's memory when a command starts
    nproc: int = 0  # processes (the sandbox's, under gVisor) the shell and its commands may have (0: no limit)
