"""A sandbox may spend CPU time it left unused above SANDBOX_CPUS for a moment (CFS burst), so a
command that starts processes after a pause is not throttled; its average stays at SANDBOX_CPUS."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from sandboxes.cpu_burst import allow_cpu_burst
from sandboxes.docker_runtime import DockerSandbox
from tests.support import require
from tests.support.sandboxes import start_with

pytestmark = pytest.mark.timeout(300)

CONTAINER = "9b2e" * 16
QUOTA = "100000"  # one core: 100 ms of CPU time in each 100 ms period


def _cpu_group(box: DockerSandbox) -> tuple[Path, Path]:
    """The sandbox's own cpu cgroup as the kernel reports it: its quota file and its burst file."""
    pid = docker.from_env().api.inspect_container(box.id)["State"]["Pid"]
    unified = None
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):  # cgroup v1: the cpu hierarchy
            group = Path("/sys/fs/cgroup/cpu") / path.lstrip("/")
            return group / "cpu.cfs_quota_us", group / "cpu.cfs_burst_us"
        if controllers == "":
            unified = Path("/sys/fs/cgroup") / path.lstrip("/")
    assert unified is not None, "the sandbox's process is in no cpu cgroup"
    return unified / "cpu.max", unified / "cpu.max.burst"


def _read(control: Path) -> str:
    return control.read_text().split()[0]


def test_a_sandbox_may_bank_one_periods_quota_and_spend_it_above_its_limit(shared_sandbox: DockerSandbox) -> None:
    quota, burst = _cpu_group(shared_sandbox)
    require(burst.exists(), "a kernel with CFS burst (Linux 5.14 or later)")
    assert _read(quota) == QUOTA  # SANDBOX_CPUS=1: the limit itself is unchanged
    assert _read(burst) == QUOTA
    assert shared_sandbox.run_command("python3 -c 'print(6 * 7)'", timeout=60).output == "42\n"


def test_with_the_burst_off_a_sandbox_is_held_to_its_limit_in_every_period(sandbox_image: str) -> None:
    box = start_with(cpu_burst=False)
    try:
        quota, burst = _cpu_group(box)
        require(burst.exists(), "a kernel with CFS burst (Linux 5.14 or later)")
        assert _read(quota) == QUOTA
        assert _read(burst) == "0"
    finally:
        box.stop()


# --- setting the burst (no Docker needed) ------------------------------------------


def _host(tmp_path: Path, lines: list[str], files: dict[str, str]) -> tuple[Path, Path]:
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "42").mkdir(parents=True)
    (proc / "42" / "cgroup").write_text("\n".join(lines) + "\n")
    for name, content in files.items():
        (cgroups / name).parent.mkdir(parents=True, exist_ok=True)
        (cgroups / name).write_text(content)
    return proc, cgroups


def test_cgroup_v1_banks_the_quota_of_one_period(tmp_path: Path) -> None:
    group = f"cpu/atelier-sandboxes/{CONTAINER}"
    proc, cgroups = _host(
        tmp_path,
        [f"6:freezer:/atelier-sandboxes/{CONTAINER}", f"3:cpu:/atelier-sandboxes/{CONTAINER}", "0::/"],
        {f"{group}/cpu.cfs_quota_us": "150000\n", f"{group}/cpu.cfs_burst_us": "0\n"},
    )
    assert allow_cpu_burst(42, CONTAINER, proc=proc, cgroups=cgroups)
    assert (cgroups / group / "cpu.cfs_burst_us").read_text() == "150000"


def test_cgroup_v2_banks_the_quota_of_one_period(tmp_path: Path) -> None:
    scope = f"system.slice/docker-{CONTAINER}.scope"
    proc, cgroups = _host(
        tmp_path, [f"0::/{scope}"], {f"{scope}/cpu.max": "50000 100000\n", f"{scope}/cpu.max.burst": "0\n"}
    )
    assert allow_cpu_burst(42, CONTAINER, proc=proc, cgroups=cgroups)
    assert (cgroups / scope / "cpu.max.burst").read_text() == "50000"


@pytest.mark.parametrize(
    ("lines", "files", "why"),
    [
        (
            [f"3:cpu:/docker/{CONTAINER}"],
            {f"cpu/docker/{CONTAINER}/cpu.cfs_quota_us": "-1\n", f"cpu/docker/{CONTAINER}/cpu.cfs_burst_us": "0\n"},
            "no quota (SANDBOX_CPUS unset by an operator's own engine defaults): nothing to burst above",
        ),
        (
            [f"0::/docker/{CONTAINER}"],
            {f"docker/{CONTAINER}/cpu.max": "max 100000\n", f"docker/{CONTAINER}/cpu.max.burst": "0\n"},
            "no quota under cgroup v2",
        ),
        (
            [f"3:cpu:/docker/{CONTAINER}"],
            {f"cpu/docker/{CONTAINER}/cpu.cfs_quota_us": "100000\n"},
            "a kernel older than 5.14 has no burst file",
        ),
        (
            ["3:cpu:/", "0::/user.slice"],
            {"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_burst_us": "0\n"},
            "a group that is not the container's own: never written",
        ),
    ],
)
def test_nothing_is_written_where_a_burst_does_not_apply(
    tmp_path: Path, lines: list[str], files: dict[str, str], why: str
) -> None:
    proc, cgroups = _host(tmp_path, lines, files)
    assert not allow_cpu_burst(42, CONTAINER, proc=proc, cgroups=cgroups), why
    for name, content in files.items():
        assert (cgroups / name).read_text() == content, why


def test_no_burst_without_the_process_or_when_the_write_is_refused(tmp_path: Path) -> None:
    group = f"cpu/docker/{CONTAINER}"
    proc, cgroups = _host(tmp_path, [f"3:cpu:/docker/{CONTAINER}"], {f"{group}/cpu.cfs_quota_us": "100000\n"})
    (cgroups / group / "cpu.cfs_burst_us").mkdir()  # a write that fails, as the kernel's EINVAL or EACCES does
    assert not allow_cpu_burst(42, CONTAINER, proc=proc, cgroups=cgroups)
    assert not allow_cpu_burst(43, CONTAINER, proc=proc, cgroups=cgroups)  # another PID namespace
    assert not allow_cpu_burst(0, CONTAINER, proc=proc, cgroups=cgroups)
