# Stops what runs in the persistent shell's session, from a second exec, after shell_sweep.sh:
#   shell_stop.sh command SHELL STATE_DIR  on timeout (or too much output): tells the shell to
#     abandon the command, then kills what the command started: its jobs, their children, and
#     orphans whose parent already exited. Earlier background jobs survive; the clock comparison
#     has 100 ms slack, so a job started within 100 ms before the command may not.
#   shell_stop.sh shell SHELL STATE_DIR    before a new shell replaces the old one: everything of
#     the old shell's session goes (jobs reparented to init included), so that its processes
#     cannot hold the sandbox's process slots.
shell=$2
if [ "$1" = shell ]; then
  kill -KILL "$shell" 2>/dev/null
  __atl_stop_session "$shell" 0 ""
  exit 0
fi
# The command's start heads its output log (shell_bootstrap.sh writes it there).
read -r t0 2>/dev/null <"$3/output.log" || t0=""
t0=${t0#$'\036'__ATL_T0:}
[[ $t0 =~ ^[0-9]+$ ]] || t0=0
read -r spare 2>/dev/null <"$3/tee" || spare=""
__atl_since_boot "$t0"
kill -USR1 "$shell" 2>/dev/null
__atl_stop_session "$shell" "$__atl_boot_t0" "$spare"
exit 0
