"""Hardening and limits: what a hostile or clumsy command can and cannot do."""

from __future__ import annotations

import docker
import pytest

from tests.support.sandboxes import start_with

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("sandbox_image")]  # start_with() starts sandboxes


def test_commands_run_as_a_non_root_user_with_no_capabilities_and_no_docker_socket(shared_sandbox):
    result = shared_sandbox.run_command(
        "id -u; grep CapEff /proc/self/status; ls /var/run/docker.sock /run/docker.sock 2>&1 | head -2; "
        "touch /etc/evil 2>&1 || echo root-fs-read-only",
        timeout=30,
    )
    lines = result.output.splitlines()
    assert lines[0] == "1000"
    assert lines[1].split() == ["CapEff:", "0000000000000000"]
    assert all("No such file" in line for line in lines[2:4])
    assert lines[-1] == "root-fs-read-only"


def test_the_container_runs_under_the_configured_runtime_with_its_limits(shared_sandbox, settings):
    attrs = docker.from_env().api.inspect_container(shared_sandbox.id)
    host = attrs["HostConfig"]
    assert host["Runtime"] == settings.SANDBOX_RUNTIME
    assert host["CapDrop"] == ["ALL"]
    assert host["ReadonlyRootfs"] is True
    assert host["Init"] is True
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == settings.SANDBOX_PIDS_LIMIT
    assert host["CpuShares"] == settings.SANDBOX_CPU_SHARES  # below the web process and Redis (1024)
    assert {u["Name"] for u in host["Ulimits"]} == {"nproc", "nofile"}
    assert not any("docker.sock" in bind for bind in host.get("Binds") or [])
    assert attrs["Config"]["Labels"]["atelier.run_id"] == "tests"


def test_a_disk_fill_stops_at_the_testbed_bound():
    box = start_with(testbed_size="64m")
    try:
        result = box.run_command(
            "dd if=/dev/zero of=/testbed/output/big bs=1M count=500 2>&1; du -m /testbed/output/big | cut -f1",
            timeout=120,
        )
        assert "No space left" in result.output
        assert int(result.output.split()[-1]) <= 64
        assert box.run_command("echo alive", timeout=30).output == "alive\n"
    finally:
        box.stop()


def test_a_memory_hog_ends_the_sandbox_or_the_command_without_harming_the_worker():
    box = start_with(memory="256m")
    try:
        result = box.run_command("python3 -c 'b = bytearray(1024 * 1024 * 1024); print(len(b))'", timeout=120)
        assert result.exit_code != 0
        assert "1073741824" not in result.output
        if box.is_running():
            assert box.run_command("echo alive", timeout=30).output.endswith("alive\n")
        else:
            assert "stopped" in result.output or "new shell" in result.output
    finally:
        box.stop()


def test_a_fork_bomb_is_contained_without_harming_the_worker():
    box = start_with(nproc=64)
    try:
        result = box.run_command("bomb() { bomb | bomb & }; bomb; sleep 5; echo survived", timeout=20)
        assert result.exit_code is None or "survived" in result.output or result.timed_out
        box.stop()
        assert not box.is_running()
    finally:
        box.stop()
