#!/bin/sh
# Writes a zstd-compressed tar of /testbed to stdout: the whole tree when its apparent
# size is at most $1 bytes (or when $2 is "all"), else only output/ ($2 "output" forces
# that). The first line on stderr says which: "scope=all bytes=N" or "scope=output bytes=N",
# N being the whole tree's apparent size, so the worker can say what was left out.
# Runs as the sandbox's user; unreadable files are skipped (tar warns on stderr), never fatal.
set -u
max_bytes="$1"
scope="${2:-auto}"
cd /testbed || exit 3
# du's line is "SIZE<tab>.": the size is cut off in the shell, not by a process of its own (each
# costs tens of milliseconds of CPU under gVisor, and every run's end waits for this).
total=$(du -sb . 2>/dev/null)
total=${total%%[!0-9]*}
total=${total:-0}
if [ "$scope" = auto ]; then
  if [ "$total" -le "$max_bytes" ]; then scope=all; else scope=output; fi
fi
echo "scope=$scope bytes=$total" >&2
if [ "$scope" = all ]; then
  set -- .
else
  mkdir -p output
  set -- ./output
fi
# --ignore-failed-read: a file the agent made unreadable is left out, not the whole snapshot.
# zstd at its fastest level: a version's files are mostly already compressed media and a
# little text, and the run's end waits for this (gzip -1 is three times slower under gVisor).
tar -c --format=gnu --ignore-failed-read -b 2048 -f - "$@" 2>/dev/null | zstd -1 -T2 -q -c
