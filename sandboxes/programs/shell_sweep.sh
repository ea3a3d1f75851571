# Defines __atl_stop_session SHELL T0 SPARE: kills the processes of the session SHELL (the
# persistent shell's pid) that started at or after T0 (in clock ticks since boot), except SPARE
# and the shell itself: by process group, or alone when one shares the shell's group (a command
# substitution). A fork bomb forks while it is being killed, so groups are stopped first and the
# sweep repeats until nothing is left. Builtins only: it starts no process, so it works when no
# process can be started.
# Sent ahead of shell_bootstrap.sh (the shell sweeps itself when it is at its process limit) and
# of shell_stop.sh (a second exec stops a command or an old shell).
__atl_stop_session() {
  local shell=$1 t0=$2 spare=$3 quiet=0 round found p s r
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
}
# Sets __atl_boot_t0 to $1, an $EPOCHREALTIME reading in microseconds (what the shell notes when a
# command starts), as uptime in hundredths, the clock of processes' start times, less 100 ms of
# slack: the two clocks round differently.
__atl_since_boot() {
  local up now
  read -r up _ </proc/uptime
  now=${EPOCHREALTIME//[!0-9]/}
  if [[ $now && $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )); then
    __atl_boot_t0=$(( 10#${up//[!0-9]/} - (now - 10#$1) / 10000 - 10 ))
  else
    __atl_boot_t0=0  # no start to go by (the clock unset by a command): all the session started
  fi
}
