#!/bin/sh
# Unpacks the gzip-compressed tar on stdin into /testbed (where a new version starts from
# the previous one's files). Ownership and modes are the sandbox user's, whatever the archive says.
set -eu
mkdir -p /testbed
exec tar -x -z --no-same-owner --no-same-permissions -C /testbed -f -
