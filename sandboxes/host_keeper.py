"""What every worker does for its host, beside running runs.

A worker owns the Docker engine of its host (DOCKER_HOST, or the local one).
One thread per worker process:
- sweeps the host's engine as the worker starts, so a host that died (and
  left sandboxes behind) cleans up as soon as it is back, then every
  SANDBOX_JANITOR_INTERVAL seconds: only its own host's containers
  (sandboxes.janitor), never another host's;
- says every SANDBOX_HOST_BEAT_SECONDS that the host is alive, and whether its
  engine can start sandboxes, in its claim (sandboxes.host_presence), which
  /healthz/workers reads. Whether the engine answers is asked on every beat (a
  ping, which costs the engine nothing); whether it has the runtime and the
  image, every SANDBOX_ENGINE_CHECK_SECONDS and on every beat after a problem
  (`docker info`, which has the engine start processes of its own to answer).
Runs of a host that died are ended by whichever worker's reaper notices
their heartbeats stopped (creations.runs.reaper); that needs no host of its own.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Hashable

import docker
import docker.errors
from django.conf import settings
from django.db import connection

from sandboxes import host_presence
from sandboxes.engine_client import engine_client, forget_api_version
from sandboxes.image import image_exists, sandbox_image_tag
from sandboxes.janitor import default_run_active_check, sweep
from sandboxes.per_process import per_process_by

log = logging.getLogger(__name__)

ENGINE_TIMEOUT_SECONDS = 10
ENGINE_UNANSWERING = "the Docker engine does not answer"
# What an operator reads of the engine's own error (a reason, never its whole body).
ENGINE_ERROR_CHARACTERS = 200


def _engine_failed(error: docker.errors.APIError) -> str:
    said = " ".join(str(error.explanation or "").split())[:ENGINE_ERROR_CHARACTERS]
    return f"the Docker engine failed a check ({error.status_code or 'no status'}: {said or 'no reason given'})"


def _engine_verdict(question: Callable[[docker.DockerClient], str]) -> str:
    """`question`'s answer about this host's engine (a problem, or empty), asked with a client of
    it. When the engine does not answer, ENGINE_UNANSWERING; when it answers with an error, that
    error's status and reason. Either way the API version the client spoke is forgotten: the
    engine may be back as another one by the next beat. Nothing it does stops the keeper's beats."""
    try:
        client = engine_client(timeout=ENGINE_TIMEOUT_SECONDS)
    except docker.errors.DockerException:
        return ENGINE_UNANSWERING
    try:
        return question(client)
    except docker.errors.APIError as error:
        forget_api_version()
        return _engine_failed(error)
    except Exception:
        forget_api_version()
        return ENGINE_UNANSWERING
    finally:
        client.close()


def _sandboxes_can_start(client: docker.DockerClient) -> str:
    runtime = settings.SANDBOX_RUNTIME
    if runtime not in (client.info().get("Runtimes") or {}):
        return f"the engine has no {runtime} runtime"
    if not image_exists(client, sandbox_image_tag()):
        return "the sandbox image is missing (manage.py build_sandbox_image)"
    return ""


def _answers(client: docker.DockerClient) -> str:
    client.ping()  # raises unless the engine answers OK
    return ""


def engine_problem() -> str:
    """Why this host's engine cannot start sandboxes now (it answers, has the runtime, has the
    image); empty when it can."""
    return _engine_verdict(_sandboxes_can_start)


def engine_unanswering() -> str:
    """ENGINE_UNANSWERING unless the engine answers now; a ping, which costs it nothing."""
    return _engine_verdict(_answers)


class HostKeeper:
    def __init__(self, *, worker: str) -> None:
        self.host_id: str = settings.SANDBOX_HOST_ID
        self.worker = worker
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="host-keeper", daemon=True)
        self._last_problem: str | None = None
        self._last_full_check: float | None = None  # time.monotonic() of the last whole check

    def start(self) -> None:
        log.info("Worker %s keeps sandbox host %r (its Docker engine and containers).", self.worker, self.host_id)
        self._thread.start()

    def stop(self, timeout: float = 10) -> None:
        self._stopped.set()
        self._thread.join(timeout)
        try:
            host_presence.withdraw(host_id=self.host_id, worker=self.worker)
        except Exception as error:  # Redis away: the claim expires on its own
            log.warning("Could not withdraw host %r's claim: %s", self.host_id, error)

    def _keep(self) -> None:
        next_beat = next_sweep = time.monotonic()
        while not self._stopped.is_set():
            now = time.monotonic()
            if now >= next_sweep:
                next_sweep = now + settings.SANDBOX_JANITOR_INTERVAL
                self.sweep_once()
            if now >= next_beat:
                next_beat = now + settings.SANDBOX_HOST_BEAT_SECONDS
                self.beat_once()
            self._stopped.wait(max(0.0, min(next_beat, next_sweep) - time.monotonic()))

    def sweep_once(self) -> None:
        try:
            removed = sweep(default_run_active_check(), host_id=self.host_id)
            if removed:
                log.info("Host %r: removed %d sandbox(es) nobody will release.", self.host_id, len(removed))
        except Exception as error:  # the engine or the database is away: the next sweep retries
            log.warning("Host %r: the janitor could not sweep: %s", self.host_id, error)
        finally:
            connection.close()  # the run check's; this thread holds none between sweeps

    def beat_once(self) -> None:
        problem = self._engine_problem_now()
        if problem != self._last_problem:
            if problem:
                log.warning("Host %r cannot start sandboxes: %s.", self.host_id, problem)
            elif self._last_problem:
                log.info("Host %r can start sandboxes again.", self.host_id)
            self._last_problem = problem
        claim = host_presence.WorkerClaim(
            host_id=self.host_id, worker=self.worker, engine_ok=not problem, problem=problem, seen_at=time.time()
        )
        try:
            host_presence.claim_alive(claim)
        except Exception as error:  # Redis away: runs still go on; healthz says Redis is down
            log.warning("Host %r: could not say it is alive: %s", self.host_id, error)

    def _engine_problem_now(self) -> str:
        """The whole check when it is due or the last beat found a problem; in between, whether
        the engine still answers, the rest taken from the last whole check."""
        now = time.monotonic()
        last = self._last_full_check
        if self._last_problem == "" and last is not None and now - last < settings.SANDBOX_ENGINE_CHECK_SECONDS:
            return engine_unanswering()
        self._last_full_check = now
        return engine_problem()


def _one_per_process(*, node: str) -> Hashable:
    return "keeper"  # whatever the worker's node is called: one keeper is enough for a host


@per_process_by(_one_per_process)
def start_keeping(*, node: str) -> HostKeeper:
    """Start this worker process's keeper (once)."""
    keeper = HostKeeper(worker=f"{node}:{os.getpid()}")
    keeper.start()
    return keeper


def stop_keeping() -> None:
    for keeper in start_keeping.reset():
        keeper.stop()
