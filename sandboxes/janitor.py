"""Remove sandboxes nobody will release: their run ended or is unknown, or
they are stale pool members.

A sweep only ever touches the containers of this worker host (the
`atelier.host` label, SANDBOX_HOST_ID): several hosts may share a database,
and a run another host is running is none of this host's business, nor is a
container on an engine shared with another installation. Each worker sweeps
its own host (sandboxes.host_keeper); `manage.py sandbox_janitor` does by hand."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import docker
import docker.errors
from django.conf import settings
from django.utils.module_loading import import_string

from sandboxes.container_spec import LABEL_HOST, LABEL_RUN_ID, LABEL_SANDBOX
from sandboxes.engine_client import engine_client
from sandboxes.engine_errors import ENGINE_UNANSWERED
from sandboxes.freezer import thaw_container
from sandboxes.pool import POOL_NAME_PREFIX, POOL_OWNER_LABEL, RUN_NAME_PREFIX

logger = logging.getLogger(__name__)

RunActiveCheck = Callable[[str], bool]
# Docker's own default for a client's requests.
SWEEP_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Removal:
    name: str
    reason: str


def default_run_active_check() -> RunActiveCheck | None:
    """The check named by SANDBOX_RUN_ACTIVE_CHECK (a dotted path), if any."""
    path = settings.SANDBOX_RUN_ACTIVE_CHECK
    return import_string(path) if path else None


def _age_seconds(attrs: dict[str, Any]) -> float:
    created = str(attrs.get("Created", ""))
    try:
        stamp = datetime.fromisoformat(created[:26].rstrip("Z") + "+00:00")
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - stamp).total_seconds()


def _run_id(name: str, labels: dict[str, str]) -> str | None:
    if labels.get(LABEL_RUN_ID):
        return labels[LABEL_RUN_ID]
    if name.startswith(RUN_NAME_PREFIX):
        run_id = name[len(RUN_NAME_PREFIX) :].rsplit("-", 1)[0]
        return None if run_id == "unknown" else run_id
    return None


def belongs_to_host(labels: dict[str, str], host_id: str) -> bool:
    """Is this container one of `host_id`'s? Containers made before sandboxes
    carried their host have only ever run on the engine they are on: its host's."""
    return labels.get(LABEL_HOST, host_id) == host_id


def _pool_owner_dead(labels: dict[str, str]) -> bool:
    host, _, pid = labels.get(POOL_OWNER_LABEL, "").partition(":")
    if host != settings.SANDBOX_HOST_ID or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def removal_reason(
    name: str, labels: dict[str, str], age: float, running: bool, is_run_active: RunActiveCheck | None
) -> str | None:
    if name.startswith(POOL_NAME_PREFIX):
        if age > settings.SANDBOX_POOL_MAX_AGE + 300:
            return "stale pool member"
        if _pool_owner_dead(labels):
            return "pool member of a process that exited"
        return None
    run_id = _run_id(name, labels)
    if is_run_active is not None and run_id is not None:
        return None if is_run_active(run_id) else f"run {run_id} has ended or is unknown"
    if age > settings.SANDBOX_ORPHAN_MIN_AGE:
        return f"no active run known, older than {settings.SANDBOX_ORPHAN_MIN_AGE} s"
    if not running and age > 60:
        return "stopped"
    return None


def sweep(
    is_run_active: RunActiveCheck | None = None,
    *,
    client: docker.DockerClient | None = None,
    dry_run: bool = False,
    only_labels: dict[str, str] | None = None,
    host_id: str | None = None,
) -> list[Removal]:
    """Remove this host's orphaned sandboxes; returns what was (or would be) removed.
    `only_labels` narrows the sweep further (tests use it to leave others' sandboxes alone)."""
    client = client or engine_client(timeout=SWEEP_TIMEOUT_SECONDS)
    host_id = host_id or settings.SANDBOX_HOST_ID
    removals: list[Removal] = []
    label_filter = [LABEL_SANDBOX, *(f"{key}={value}" for key, value in (only_labels or {}).items())]
    for summary in client.api.containers(all=True, filters={"label": label_filter}):
        name = (summary.get("Names") or ["/?"])[0].lstrip("/")
        labels = summary.get("Labels") or {}
        if not belongs_to_host(labels, host_id):
            continue
        try:
            attrs = client.api.inspect_container(summary["Id"])
        except docker.errors.NotFound:
            continue
        reason = removal_reason(name, labels, _age_seconds(attrs), bool(attrs["State"].get("Running")), is_run_active)
        if reason is None:
            continue
        if not dry_run:
            try:
                thaw_container(summary["Id"], int(attrs["State"].get("Pid") or 0))  # a dead worker's may be frozen
                client.api.remove_container(summary["Id"], force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                logger.warning("janitor could not remove %s: %s", name, exc)
                continue
            except ENGINE_UNANSWERED as exc:  # the next sweep tries again
                logger.warning("janitor could not remove %s: the engine did not answer (%s)", name, exc)
                continue
        logger.info("janitor removed sandbox %s: %s", name, reason)
        removals.append(Removal(name=name, reason=reason))
    return removals
