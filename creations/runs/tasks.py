"""Celery tasks for runs: thin, they take ids and call services."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.signals import worker_process_init, worker_ready, worker_shutdown
from django.conf import settings
from django.db import OperationalError, connection

from config.startup_objects import freeze_startup_objects
from creations.runs import reaper_thread
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from creations.runs.queue import RUN_TASK_NAME


# A message is a wake-up (creations.runs.queue): the task starts the fairest
# run that may start now, whichever run the message names (`run_id`, absent on
# the wake-up a freed slot sends), or returns at once when none may.
# acks_late + reject_on_worker_lost: a wake-up whose worker dies is not lost; a
# redelivered copy starts whatever may start then, and the dead worker's run is
# the reaper's. A database that is briefly unreachable (restart, connection
# limit) before a run is claimed would leave runs queued, so that is retried.
@shared_task(
    name=RUN_TASK_NAME,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError,),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=8,
)
def run_creation(self: Task, run_id: int | None = None) -> None:
    try:
        claimed = run_claim_next(
            worker=str(self.request.hostname or "worker"), host=settings.SANDBOX_HOST_ID, run_id=run_id
        )
        if claimed is not None:
            run_execute(run_id=claimed)
    finally:
        # An idle pool thread keeps no database connection: connections follow active runs.
        connection.close()


# Each worker process reaps in a thread of its own (creations.runs.reaper_thread): as a task, the
# reaper would wait behind runs for a free thread.
@worker_ready.connect
def _reap_in_this_worker(**_: Any) -> None:
    reaper_thread.start_reaping()


@worker_shutdown.connect
def _stop_reaping_in_this_worker(**_: Any) -> None:
    reaper_thread.stop_reaping()


# The warm pool (SANDBOX_POOL_SIZE > 0) fills as the worker starts, not on its
# first run, so early runs find started sandboxes. Prefork: one pool per child.
@worker_ready.connect
def _fill_pool_in_this_worker(sender: Any = None, **_: Any) -> None:
    pool = getattr(sender, "pool", None)
    if settings.SANDBOX_POOL_SIZE > 0 and not type(pool).__module__.endswith("prefork"):
        _start_pool()


@worker_process_init.connect
def _fill_pool_in_this_child(**_: Any) -> None:
    if settings.SANDBOX_POOL_SIZE > 0:
        _start_pool()


def _start_pool() -> None:
    from sandboxes.pool import get_provider

    get_provider()


# What every run needs, loaded before the first one rather than by it: the model client library
# (`openai`: 0.26 to 0.4 s of CPU here, which the first run would spend before its first step); then
# what the start made is frozen, out of the collector's full passes (config/startup_objects.py).
# worker_ready in a worker with threads; worker_process_init in each child of a prefork worker.
@worker_ready.connect
@worker_process_init.connect
def warm_up_for_runs(**_: Any) -> None:
    from sandboxes.agent.factory import model_client_for  # noqa: F401 - importing it is the point

    freeze_startup_objects()
