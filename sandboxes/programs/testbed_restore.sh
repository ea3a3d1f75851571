#!/bin/bash
# Unpacks the zstd-compressed tar on stdin into /testbed (where a new version starts from
# the previous one's files). Ownership and modes are the sandbox user's, whatever the archive says.
# zstd reads stdin and tar reads a pipe in large records: `tar -z -f -` on the exec's stdin
# is ten times slower under gVisor.
set -euo pipefail
mkdir -p /testbed
zstd -d -q -c | tar -x -b 2048 --no-same-owner --no-same-permissions -C /testbed -f -
