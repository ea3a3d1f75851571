"""On this machine's cgroup file system: a real Celery worker prepares the sandboxes' low-weight
parent cgroup and the previews' own as it starts, and the sandboxes it starts (its warm pool's) land
under the first; one that cannot write the cgroups says so in one warning each and runs its sandboxes
anyway; `sandbox_doctor` reports both groups and `--fix` prepares them; a preview's sandbox lands
under the previews' group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest
from django.core.management import CommandError, call_command

from sandboxes.cpu_priority import OFFLINE, Engine
from sandboxes.offline import start_offline_sandbox
from tests.support import require
from tests.support.cgroups import cpu_cgroup_of, group_of, own_cgroup_parent, sandbox_pid_under, weight_of

pytestmark = [pytest.mark.docker, pytest.mark.services, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
# The worker's view of the cgroup file system made read-only, as in a container without the
# host's /sys/fs/cgroup: a mount namespace of its own (this machine's is untouched).
READ_ONLY_CGROUPS = (
    "for m in $(awk '$2 ~ \"^/sys/fs/cgroup\" {print $2}' /proc/self/mounts); do"
    ' mount -o remount,bind,ro "$m"; done; exec "$@"'
)


@dataclass
class Worker:
    popen: subprocess.Popen[bytes]
    log: Path
    parent: str

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_text():
                return
            assert self.popen.poll() is None, f"the worker exited:\n{self.log_text()}"
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} in the worker's log:\n{self.log_text()}")


@pytest.fixture
def engine() -> Engine:
    require(os.geteuid() == 0, "root (the worker writes the host's cgroups)")
    return Engine.from_info(docker.from_env().info())


@pytest.fixture
def parent(engine: Engine) -> Iterator[str]:
    require(engine.driver == "cgroupfs", "Docker's cgroupfs driver (with systemd the worker only checks)")
    with own_cgroup_parent() as name:
        yield name


@pytest.fixture
def offline_parent(parent: str) -> Iterator[str]:
    """A group of the test's own for previews, beside the agents' (`parent`)."""
    with own_cgroup_parent() as name:
        yield name


@pytest.fixture
def start_worker(
    parent: str, offline_parent: str, own_redis: str, sandbox_image: str, tmp_path: Path
) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(*, wrap: list[str] | None = None) -> Worker:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "REDIS_URL": own_redis,
            "CELERY_BROKER_URL": own_redis,
            "SANDBOX_CGROUP_PARENT": parent,
            "SANDBOX_OFFLINE_CGROUP_PARENT": offline_parent,
            "SANDBOX_IMAGE": sandbox_image,
            # One warm sandbox, started by the worker itself as it becomes ready.
            "SANDBOX_POOL_SIZE": "1",
            "SANDBOX_NETWORK_MODE": "none",
            "SANDBOX_FREEZE_IDLE": "false",
            "SANDBOX_JANITOR_INTERVAL": "86400",
            "PYTHONUNBUFFERED": "1",
        }
        celery = str(Path(sys.executable).parent / "celery")
        argv = [celery, "-A", "config", "worker", "--pool", "threads", "--concurrency", "1", "--loglevel", "INFO"]
        argv += ["--without-gossip", "--without-mingle", "--hostname", f"cpu-priority-{uuid.uuid4().hex[:6]}@%h"]
        log = tmp_path / f"worker-{len(started)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [*(wrap or []), *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        worker = Worker(popen, log, parent)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.popen.pid, signal.SIGTERM)  # its pool removes its sandbox as it exits
        try:
            worker.popen.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.popen.pid, signal.SIGKILL)
            worker.popen.wait(timeout=10)


def _priority_lines(worker: Worker) -> list[str]:
    return [line for line in worker.log_text().splitlines() if "sandboxes.cpu_priority" in line]


def test_a_starting_worker_prepares_the_low_weight_cgroup_and_its_sandboxes_land_under_it(
    engine: Engine, parent: str, offline_parent: str, start_worker: Callable[..., Worker]
) -> None:
    assert not group_of(engine, parent).exists()
    assert not group_of(engine, offline_parent).exists()
    worker = start_worker()
    worker.wait_for(" ready.")
    assert weight_of(engine, parent) == engine.low_weight  # 128 of cpu.shares (v1), 12 of cpu.weight (v2)
    previews_weight = OFFLINE.weight_under(engine.version)
    assert weight_of(engine, offline_parent) == previews_weight  # 512 (v1), 50 (v2)
    lines = _priority_lines(worker)
    assert len(lines) == 2, worker.log_text()
    assert " INFO sandboxes.cpu_priority sandboxes run at low CPU priority: cgroup " + parent in lines[0]
    assert f"{engine.control} {engine.low_weight}" in lines[0]
    assert "created just now" in lines[0]
    assert (
        " INFO sandboxes.cpu_priority previews and comparisons run at half a process's CPU priority: cgroup "
        + offline_parent
        in lines[1]
    )
    assert f"{engine.control} {previews_weight}" in lines[1]
    assert "created just now" in lines[1]

    pid = sandbox_pid_under(parent)
    assert cpu_cgroup_of(pid).startswith(f"{parent}/"), Path(f"/proc/{pid}/cgroup").read_text()
    assert weight_of(engine, parent) == engine.low_weight  # Docker made its group inside, and kept ours


def test_a_worker_that_cannot_write_the_cgroups_warns_once_and_still_runs_its_sandboxes(
    engine: Engine, parent: str, start_worker: Callable[..., Worker]
) -> None:
    worker = start_worker(wrap=["unshare", "--mount", "--propagation", "private", "sh", "-c", READ_ONLY_CGROUPS, "sh"])
    worker.wait_for(" ready.")
    lines = _priority_lines(worker)
    assert len(lines) == 2, worker.log_text()
    warning, previews_warning = lines
    assert " WARNING sandboxes.cpu_priority sandboxes run at NORMAL CPU priority: cgroup " + parent in warning
    assert "cannot be written (Read-only file system)" in warning
    assert "live streams lag" in warning
    assert "Fix: run the worker as root with the host's /sys/fs/cgroup writable" in warning
    assert " WARNING sandboxes.cpu_priority previews and comparisons run at NORMAL CPU priority: " in previews_warning
    assert "cannot be written (Read-only file system)" in previews_warning

    pid = sandbox_pid_under(parent)  # its sandboxes start all the same: under the group Docker made
    assert cpu_cgroup_of(pid).startswith(f"{parent}/")
    assert weight_of(engine, parent) > engine.low_weight  # at normal priority, as the warning said
    assert worker.popen.poll() is None


def test_sandbox_doctor_fails_a_missing_or_heavy_group_with_the_fix_and_fix_prepares_it(
    engine: Engine, parent: str, sandbox_image: str, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.SANDBOX_CGROUP_PARENT = parent
    settings.SANDBOX_OFFLINE_CGROUP_PARENT = ""  # the previews' group: the next test's
    settings.SANDBOX_NETWORK_MODE = "none"  # only the cgroup is this test's to fix
    group = group_of(engine, parent)
    with pytest.raises(CommandError, match="1 check"):
        call_command("sandbox_doctor", "--quick")
    out = capsys.readouterr().out
    assert f"FAIL  cpu priority: sandboxes run at NORMAL CPU priority: cgroup {parent} (" in out
    assert f"{group} does not exist; under load, live streams lag behind busy runs" in out
    assert "      fix: python manage.py sandbox_doctor --fix (as root on the Docker host), or " in out

    call_command("sandbox_doctor", "--quick", "--fix")
    out = capsys.readouterr().out
    assert f"OK    cpu priority: sandboxes run at low CPU priority: cgroup {parent} (" in out
    assert weight_of(engine, parent) == engine.low_weight

    default = 1024 if engine.version == 1 else 100
    (group / engine.control).write_text(f"{default}\n")  # an operator, or a reboot's defaults
    with pytest.raises(CommandError):
        call_command("sandbox_doctor", "--quick")
    assert f"{engine.control} {default}, above {engine.low_weight}" in capsys.readouterr().out


def test_sandbox_doctor_warns_when_the_sandboxes_have_no_parent_group(
    sandbox_image: str, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.SANDBOX_CGROUP_PARENT = ""
    settings.SANDBOX_NETWORK_MODE = "none"
    call_command("sandbox_doctor", "--quick")
    out = capsys.readouterr().out
    assert "WARN  cpu priority: sandboxes run at NORMAL CPU priority (SANDBOX_CGROUP_PARENT is empty)" in out
    assert "      fix: set SANDBOX_CGROUP_PARENT=/atelier-sandboxes (its default)" in out


def test_previews_sandboxes_land_under_their_own_group_which_the_doctor_checks_and_fixes(
    engine: Engine, parent: str, sandbox_image: str, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.SANDBOX_CGROUP_PARENT = ""  # the agents' group: the test above's
    settings.SANDBOX_OFFLINE_CGROUP_PARENT = parent
    settings.SANDBOX_NETWORK_MODE = "none"
    with pytest.raises(CommandError, match="1 check"):
        call_command("sandbox_doctor", "--quick")
    out = capsys.readouterr().out
    expected = "FAIL  cpu priority (previews and comparisons): previews and comparisons run at NORMAL CPU priority:"
    assert f"{expected} cgroup {parent} (" in out
    assert f"{group_of(engine, parent)} does not exist" in out

    call_command("sandbox_doctor", "--quick", "--fix")
    out = capsys.readouterr().out
    expected = "OK    cpu priority (previews and comparisons): previews and comparisons run at half a process's"
    assert f"{expected} CPU priority: cgroup {parent} (" in out
    assert weight_of(engine, parent) == OFFLINE.weight_under(engine.version)

    sandbox = start_offline_sandbox(
        labels={"atelier.test": "cpu-priority"},
        purpose="preview",
        memory_bytes=256 * 1024 * 1024,
        scratch_bytes=16 * 1024 * 1024,
        max_in_bytes=1024 * 1024,
        max_out_bytes=1024 * 1024,
    )
    try:
        pid = sandbox_pid_under(parent)
        assert cpu_cgroup_of(pid).startswith(f"{parent}/"), Path(f"/proc/{pid}/cgroup").read_text()
        assert weight_of(engine, parent) == OFFLINE.weight_under(engine.version)  # Docker kept ours
    finally:
        sandbox.stop()


def test_sandbox_doctor_fails_when_the_previews_and_the_agents_share_one_group(
    engine: Engine, parent: str, sandbox_image: str, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.SANDBOX_CGROUP_PARENT = parent
    settings.SANDBOX_OFFLINE_CGROUP_PARENT = parent
    settings.SANDBOX_NETWORK_MODE = "none"
    with pytest.raises(CommandError, match="1 check"):  # --fix gives the group the agents' weight, no more
        call_command("sandbox_doctor", "--quick", "--fix")
    out = capsys.readouterr().out
    assert f"OK    cpu priority: sandboxes run at low CPU priority: cgroup {parent} (" in out
    shared = f"SANDBOX_OFFLINE_CGROUP_PARENT shares {group_of(engine, parent)} with SANDBOX_CGROUP_PARENT"
    assert f"FAIL  cpu priority (previews and comparisons): {shared}, weighed for sandboxes" in out
    assert "      fix: set SANDBOX_OFFLINE_CGROUP_PARENT to a group of its own (/atelier_offline)" in out
