# Sets the persistent shell up (sandboxes/shell.py sends it on the shell's stdin, after
# shell_sweep.sh): limits, the output log, the per-command wrapper and its helpers.
# Its settings come in the environment and go no further (the agent's commands do not see them):
#   ATL_SKELETON       copied onto / at start, when it exists (the image makes it)
#   ATL_STATE_DIR      the shell's own state: the tee's pid, and output.log, the current
#                      command's start time and then its whole output
#   ATL_SAVED_OUTPUT_DIR, ATL_TESTBED  made when missing; the shell starts in ATL_TESTBED
#   ATL_NPROC          the hard process limit ("unlimited": none)
#   ATL_MEMORY_KB      a command's address space at most ("unlimited": none)
#   ATL_RESERVE_KB     kept free of the sandbox's memory when a command starts
#   ATL_CROWDED        this many processes or more: the shell sweeps what its commands started
exec 2>&1
set -m
shopt -s expand_aliases
alias declare='declare -g' typeset='typeset -g'
__atl_state=$ATL_STATE_DIR
__atl_log=$ATL_STATE_DIR/output.log
__atl_memory_kb=$ATL_MEMORY_KB
__atl_reserve_kb=$ATL_RESERVE_KB
__atl_crowded=$ATL_CROWDED
__atl_testbed=$ATL_TESTBED
__atl_saved=$ATL_SAVED_OUTPUT_DIR
__atl_skel=$ATL_SKELETON
__atl_nproc=$ATL_NPROC
unset ATL_SKELETON ATL_STATE_DIR ATL_SAVED_OUTPUT_DIR ATL_TESTBED ATL_NPROC ATL_MEMORY_KB ATL_RESERVE_KB ATL_CROWDED
[ -d "$__atl_skel" ] && cp -rn "$__atl_skel/." / 2>/dev/null
for __atl_d in "$__atl_state" "$__atl_saved" "$__atl_testbed/input" "$__atl_testbed/output"; do
  [ -d "$__atl_d" ] || {
    mkdir -p "$__atl_state" "$__atl_saved" "$__atl_testbed/input" "$__atl_testbed/output" 2>/dev/null
    break
  }
done
cd "$__atl_testbed" 2>/dev/null
# tee is started in the background of the process substitution, so it is not
# the shell's child: a plain `wait` (as in `a & b & wait`) must not wait for it.
# Its pid is noted: it is in the shell's process group, and a sweep after a command must spare it.
exec > >({ tee -a "$__atl_log" & echo $! >"$__atl_state/tee"; } 0<&0) 2>&1
wait $! 2>/dev/null
read -r __atl_tee 2>/dev/null <"$__atl_state/tee"
# A hard process limit (the agent cannot raise it again): the rest is the worker's reserve.
ulimit -u "$__atl_nproc" 2>/dev/null
# The address-space limit is soft only: programs that reserve far more address space than they
# use (Chromium, Node: V8) lift it for themselves (the image's `chromium` command does) and then
# risk the sandbox, not the command. Under gVisor a limit set here holds for the whole sandbox.
ulimit -S -v "$__atl_memory_kb" 2>/dev/null
trap 'return 130 2>/dev/null' USR1
__atl_run() { eval "$__atl_cmd" </dev/null; }
# Each command may map at most the memory still free (files on the tmpfs mounts use it too)
# minus the reserve: past it, an allocation fails in the command, not the sandbox.
__atl_mem() {
  __atl_kb=$__atl_memory_kb
  # The file's head in one read (MemAvailable is its third line), not a read per line: see below.
  read -r -N 256 __atl_mi </proc/meminfo 2>/dev/null
  if [[ $__atl_mi =~ MemAvailable:\ +([0-9]+) ]]; then
    __atl_v=${BASH_REMATCH[1]}
    (( __atl_v - __atl_reserve_kb < __atl_kb )) && __atl_kb=$(( __atl_v - __atl_reserve_kb ))
  fi
  (( __atl_kb < 32768 )) && __atl_kb=32768
  ulimit -S -v "$__atl_kb" 2>/dev/null
}
# Every system call costs gVisor far more in the first command after the sandbox sat idle (as it
# does while the model thinks) than back to back, so the wrapper makes few: the clock is bash's
# $EPOCHREALTIME (microseconds, read without one); one write both empties the output log and
# starts it with the command's start (shell_stop.sh reads it there); and the processes are counted
# before a command only when something ran on after the last one (only that can have crowded it)
# or the sandbox was crowded then.
__atl_exec() {
  __atl_since=${__atl_t0:-0}
  __atl_t0=${EPOCHREALTIME//[!0-9]/}
  printf '\036__ATL_T0:%s\n' "$__atl_t0" >"$__atl_log" 2>/dev/null
  # Near the process limit (say a fork bomb left running), this command could not even start.
  if (( __atl_n < 0 || __atl_n > __atl_rest || __atl_n >= __atl_crowded )); then
    __atl_count
    (( __atl_n >= __atl_crowded )) && __atl_sweep "$__atl_since" "before this command"
  fi
  __atl_mem
  __atl_run
  __atl_rc=$?
  ulimit -S -v "$__atl_memory_kb" 2>/dev/null  # the command's bound, not the shell's own between commands
  __atl_count
  (( __atl_n >= __atl_crowded )) && __atl_sweep "$__atl_t0" "the command" && __atl_count
  printf '\n\036__ATL_%s:%s:%s\n' "$1" "$__atl_rc" "$__atl_n"
}
# The shell itself stops what its session started since $1 (an $EPOCHREALTIME reading, turned
# into uptime here): it needs no process for it, so it works when no process can be started.
__atl_sweep() {
  __atl_since_boot "$1"
  __atl_stop_session "$$" "$__atl_boot_t0" "$__atl_tee"
  printf '\n[The sandbox was at its process limit (%s processes, a fork bomb?): ' "$__atl_n"
  printf 'the processes started since %s began were stopped.]\n' "$2"
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
  grep -av $'^\036__ATL_' "$__atl_log" | sed '${/^$/d}' >"$1" 2>/dev/null
  __atl_rc=$?
  [ "$__atl_rc" = 0 ] || rm -f "$1" 2>/dev/null
  printf '\n\036__ATL_%s:%s\n' "$2" "$__atl_rc"
}
__atl_count
__atl_rest=$__atl_n  # the shell and its tee: more after a command means something of it runs on
printf '\036__ATL_READY:%s:%s\n' "$$" "$__atl_n"
