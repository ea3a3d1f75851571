"""Warm pool hand-out and replacement; the janitor removes orphans."""

from __future__ import annotations

import docker
import pytest

from sandboxes.docker_runtime import DockerSandbox, start_sandbox
from sandboxes.janitor import sweep
from sandboxes.pool import WarmPool

pytestmark = pytest.mark.timeout(300)

MINE = {"atelier.owner": "janitor-test"}


def _names() -> set[str]:
    # From the listing alone: inspecting each container (containers.list) fails on one that another
    # suite's test removes meanwhile.
    listing = docker.from_env().api.containers(all=True, filters={"label": "atelier.sandbox"})
    return {(summary.get("Names") or ["/"])[0].lstrip("/") for summary in listing}


def test_the_pool_hands_out_a_ready_sandbox_and_starts_a_replacement(sandbox_image):
    pool = WarmPool(1, max_age=3600)
    try:
        assert pool.wait_until_full(timeout=120)
        box = pool.acquire(labels={"atelier.run_id": "pool-run-1", "atelier.owner": "tests"})
        assert isinstance(box, DockerSandbox)
        try:
            assert box.name.startswith("atelier-run-pool-run-1-")
            assert box.name in _names()
            assert box.run_command("echo ready", timeout=30).output == "ready\n"
            assert pool.wait_until_full(timeout=120)  # a replacement was started
            replacement = pool.acquire(labels={"atelier.run_id": "pool-run-2"})
            assert replacement.id != box.id
            pool.release(replacement)
        finally:
            pool.release(box)
        assert box.name not in _names()
    finally:
        pool.shutdown()


def test_the_janitor_removes_sandboxes_of_ended_runs_and_keeps_active_ones(sandbox_image):
    ended = start_sandbox(
        {"atelier.run_id": "run-ended", "atelier.owner": "janitor-test"}, name="atelier-run-run-ended-1a"
    )
    active = start_sandbox(
        {"atelier.run_id": "run-active", "atelier.owner": "janitor-test"}, name="atelier-run-run-active-1b"
    )
    try:
        assert ended.frozen  # idle since its start: the janitor must thaw it to remove it
        removed = sweep(lambda run_id: run_id == "run-active", only_labels=MINE)
        assert "atelier-run-run-ended-1a" in {r.name for r in removed}
        names = _names()
        assert "atelier-run-run-ended-1a" not in names
        assert "atelier-run-run-active-1b" in names
    finally:
        ended.stop()
        active.stop()


def test_without_a_run_check_the_janitor_only_removes_old_orphans(sandbox_image, settings):
    box = start_sandbox({"atelier.run_id": "young", **MINE}, name="atelier-run-young-1c")
    try:
        settings.SANDBOX_ORPHAN_MIN_AGE = 3600
        assert "atelier-run-young-1c" not in {r.name for r in sweep(None, dry_run=True, only_labels=MINE)}
        settings.SANDBOX_ORPHAN_MIN_AGE = 0
        assert "atelier-run-young-1c" in {r.name for r in sweep(None, dry_run=True, only_labels=MINE)}
    finally:
        box.stop()


def test_the_janitor_of_one_host_leaves_another_hosts_sandboxes_alone(sandbox_image, settings):
    settings.SANDBOX_HOST_ID = "janitor-host-b"
    theirs = start_sandbox({"atelier.run_id": "run-ended-b", **MINE}, name="atelier-run-run-ended-b-1d")
    settings.SANDBOX_HOST_ID = "janitor-host-a"
    ours = start_sandbox({"atelier.run_id": "run-ended-a", **MINE}, name="atelier-run-run-ended-a-1e")
    try:
        assert docker.from_env().containers.get(ours.id).labels["atelier.host"] == "janitor-host-a"
        # Both runs have ended; host A's janitor removes only its own sandbox.
        removed = {r.name for r in sweep(lambda run_id: False, only_labels=MINE)}
        assert removed == {"atelier-run-run-ended-a-1e"}
        assert "atelier-run-run-ended-b-1d" in _names()
        # Host B's own janitor, when it runs, does remove it.
        assert {r.name for r in sweep(lambda run_id: False, only_labels=MINE, host_id="janitor-host-b")} == {
            "atelier-run-run-ended-b-1d"
        }
        assert "atelier-run-run-ended-b-1d" not in _names()
    finally:
        theirs.stop()
        ours.stop()
