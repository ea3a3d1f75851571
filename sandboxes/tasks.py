"""The sandboxes app's part in a Celery worker: each worker keeps its host
(sandboxes.host_keeper): it sweeps its own engine and says it is alive."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready, worker_shutdown

from sandboxes import host_keeper


@worker_ready.connect
def _keep_this_host(sender: Any = None, **_: Any) -> None:
    host_keeper.start_keeping(node=str(getattr(sender, "hostname", None) or "worker"))


@worker_shutdown.connect
def _stop_keeping_this_host(**_: Any) -> None:
    host_keeper.stop_keeping()
