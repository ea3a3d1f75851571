"""An idle sandbox is frozen between commands, and nothing the agent notices changes."""

from __future__ import annotations

import time
from pathlib import Path

import docker
import pytest

from sandboxes.docker_runtime import DockerSandbox
from sandboxes.freezer import Freezer
from tests.support import require
from tests.support.sandboxes import start_with

pytestmark = pytest.mark.timeout(300)

CONTAINER = "4f1c" * 16


@pytest.fixture
def sandbox(sandbox: DockerSandbox) -> DockerSandbox:
    require(sandbox._freezer is not None, "write access to the sandboxes' cgroups (run the tests as root)")
    return sandbox


def _cpu_seconds(box: DockerSandbox) -> float:
    """CPU the sandbox's processes (gVisor's sentry included) have used, from its cgroup."""
    assert box._freezer is not None
    group = box._freezer.control.parent
    for usage in (
        Path(str(group).replace("/freezer/", "/cpuacct/")) / "cpuacct.usage",
        Path(str(group).replace("/freezer/", "/cpu,cpuacct/")) / "cpuacct.usage",
    ):
        if usage.exists():
            return int(usage.read_text()) / 1e9
    stat = (group / "cpu.stat").read_text()  # cgroup v2
    return int(stat.split("usage_usec", 1)[1].split()[0]) / 1e6


def test_between_commands_an_idle_sandbox_is_frozen_and_uses_no_cpu(sandbox: DockerSandbox) -> None:
    first = sandbox.run_command("cd /testbed/output && export COLOUR=teal && echo made > a.txt", timeout=30)
    assert first.exit_code == 0
    assert sandbox.frozen
    assert sandbox._freezer is not None
    assert sandbox._freezer.is_frozen()
    before = _cpu_seconds(sandbox)
    time.sleep(2)  # the model thinking
    assert _cpu_seconds(sandbox) - before < 0.005  # running, the idle sandbox uses 40-80 ms in 2 s here

    second = sandbox.run_command('pwd; echo "$COLOUR"; cat a.txt', timeout=30)
    assert second.output.splitlines() == ["/testbed/output", "teal", "made"]
    assert sandbox.frozen  # and frozen again


def test_a_background_job_keeps_running_between_commands(sandbox: DockerSandbox) -> None:
    started = sandbox.run_command(
        "(while :; do echo tick >> /testbed/ticks; sleep 0.1; done) & echo started", timeout=30
    )
    assert started.output.strip() == "started"
    assert not sandbox.frozen
    # The model thinking: the job goes on meanwhile. Ten ticks take 1 s when the machine is
    # idle; a loaded 2-core machine starts gVisor processes (each `sleep`) several times slower.
    time.sleep(5)
    ticks = int(sandbox.run_command("wc -l < /testbed/ticks", timeout=30).output)
    assert ticks >= 10
    assert not sandbox.frozen

    sandbox.run_command("kill %1; wait; sleep 0.5", timeout=30)  # the job's last `sleep 0.1` ends too
    assert sandbox.frozen  # nothing runs any more


def test_the_editor_and_file_copies_wake_a_frozen_sandbox(sandbox: DockerSandbox, tmp_path: Path) -> None:
    sandbox.run_command("true", timeout=30)
    assert sandbox.frozen
    sandbox.write_files({"brief.txt": b"a poster"})
    assert sandbox.frozen
    code, output = sandbox.exec(["cat", "/testbed/input/brief.txt"], timeout=30)
    assert (code, output) == (0, b"a poster")
    sandbox.run_command("cp /testbed/input/brief.txt /testbed/output/", timeout=30)
    report = sandbox.copy_out(tmp_path)
    assert [f.path for f in report.files] == ["brief.txt"]


def test_a_frozen_sandbox_stops_at_once(sandbox: DockerSandbox) -> None:
    sandbox.run_command("true", timeout=30)
    assert sandbox.frozen
    started = time.monotonic()
    sandbox.stop()
    assert time.monotonic() - started < 10
    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(sandbox.id)


def test_with_freezing_off_a_sandbox_stays_running(sandbox_image: str) -> None:
    box = start_with(freeze_idle=False)
    try:
        assert box.run_command("echo hi", timeout=30).output == "hi\n"
        assert not box.frozen
        assert box._freezer is None
    finally:
        box.stop()


# --- finding the freezer (no Docker needed) -------------------------------------


def _host(tmp_path: Path, lines: list[str], controls: list[str]) -> tuple[Path, Path]:
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "42").mkdir(parents=True)
    (proc / "42" / "cgroup").write_text("\n".join(lines) + "\n")
    for control in controls:
        (cgroups / control).parent.mkdir(parents=True, exist_ok=True)
        (cgroups / control).write_text("")
    return proc, cgroups


def test_cgroup_v1_uses_the_freezer_hierarchy(tmp_path: Path) -> None:
    proc, cgroups = _host(
        tmp_path,
        [f"6:freezer:/atelier-sandboxes/{CONTAINER}", f"1:cpu:/atelier-sandboxes/{CONTAINER}", "0::/"],
        [f"freezer/atelier-sandboxes/{CONTAINER}/freezer.state"],
    )
    freezer = Freezer.for_container(42, CONTAINER, proc=proc, cgroups=cgroups)
    assert freezer is not None
    assert freezer.freeze()
    assert freezer.control.read_text() == "FROZEN"
    assert freezer.thaw()
    assert freezer.control.read_text() == "THAWED"


def test_cgroup_v2_uses_cgroup_freeze(tmp_path: Path) -> None:
    scope = f"system.slice/docker-{CONTAINER}.scope"
    proc, cgroups = _host(tmp_path, [f"0::/{scope}"], [f"{scope}/cgroup.freeze"])
    freezer = Freezer.for_container(42, CONTAINER, proc=proc, cgroups=cgroups)
    assert freezer is not None
    freezer.freeze()
    assert freezer.control.read_text() == "1"


def test_a_cgroup_that_is_not_the_containers_own_is_never_frozen(tmp_path: Path) -> None:
    # e.g. a process that is not the sandbox's: freezing its cgroup could freeze the worker itself
    proc, cgroups = _host(tmp_path, ["6:freezer:/", "0::/user.slice"], ["freezer/freezer.state"])
    assert Freezer.for_container(42, CONTAINER, proc=proc, cgroups=cgroups) is None


def test_no_freezer_without_the_process_or_write_access(tmp_path: Path) -> None:
    proc, cgroups = _host(tmp_path, [f"6:freezer:/docker/{CONTAINER}"], [])  # no control file to write
    assert Freezer.for_container(42, CONTAINER, proc=proc, cgroups=cgroups) is None
    assert Freezer.for_container(43, CONTAINER, proc=proc, cgroups=cgroups) is None  # another PID namespace
    assert Freezer.for_container(0, CONTAINER, proc=proc, cgroups=cgroups) is None
