"""What a Celery worker does for its sandboxes as it starts (connected in SandboxesConfig.ready, so
every worker has it whatever it imports; other processes never receive the signal)."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_init


# worker_init: in the worker's main process whatever the pool, before it takes its first run, so
# every sandbox it starts lands under its weighed parent. One log line per group either way; a worker
# that cannot prepare the group still runs (sandboxes at normal priority).
@worker_init.connect
def _prepare_sandbox_cpu_priority(**_: Any) -> None:
    # Imported here: it brings the Docker client library, which web and management processes
    # (which load this module too, never receiving the signal) would pay for at every start.
    from sandboxes.cpu_priority import TIERS, configured, prepare_at_worker_start

    for tier in TIERS:
        prepare_at_worker_start(configured(tier), tier)
