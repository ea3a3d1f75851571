"""The sandboxes' low-weight parent cgroup, against a cgroup tree made in a temporary folder: what
the worker's start, `sandbox_doctor` and bench/stream.py are told, and what is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxes.cpu_priority import (
    LOW_CPU_SHARES,
    LOW_CPU_WEIGHT,
    OFFLINE,
    Engine,
    State,
    docker_cgroup_parent,
    inspect_sandbox_cgroup,
    prepare_sandbox_cgroup,
)

V1 = Engine(driver="cgroupfs", version=1)
V2 = Engine(driver="cgroupfs", version=2)
SYSTEMD_V1 = Engine(driver="systemd", version=1)
SYSTEMD_V2 = Engine(driver="systemd", version=2)
PARENT = "/atelier-sandboxes"


def _v1_host(tmp_path: Path, **groups: int) -> Path:
    """A cgroup v1 root with its cpu hierarchy, and groups in it with their cpu.shares."""
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.shares").write_text("1024\n")
    for name, shares in groups.items():
        (tmp_path / "cpu" / name).mkdir(parents=True)
        (tmp_path / "cpu" / name / "cpu.shares").write_text(f"{shares}\n")
    return tmp_path


def _v2_host(tmp_path: Path, *, subtree: str = "", **groups: int) -> Path:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text(f"{subtree}\n")
    for name, weight in groups.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "cpu.weight").write_text(f"{weight}\n")
    return tmp_path


def test_v1_a_missing_group_is_reported_then_created_with_the_low_cpu_shares(tmp_path: Path) -> None:
    root = _v1_host(tmp_path)
    missing = inspect_sandbox_cgroup(PARENT, V1, root=root)
    assert missing.state is State.MISSING
    assert not missing.ok
    assert f"{root}/cpu/atelier-sandboxes does not exist" in missing.line()
    assert f"echo 128 > {root}/cpu/atelier-sandboxes/cpu.shares" in missing.fix
    assert not (root / "cpu" / "atelier-sandboxes").exists()  # inspecting writes nothing

    prepared = prepare_sandbox_cgroup(PARENT, V1, root=root)
    assert (prepared.state, prepared.weight) == (State.PREPARED, LOW_CPU_SHARES)
    assert (root / "cpu" / "atelier-sandboxes" / "cpu.shares").read_text().strip() == "128"
    assert prepared.line() == (
        "sandboxes run at low CPU priority: cgroup /atelier-sandboxes (cgroup v1, Docker's cgroupfs driver):"
        f" cpu.shares 128 in {root}/cpu/atelier-sandboxes (created just now)"
    )
    assert inspect_sandbox_cgroup(PARENT, V1, root=root).state is State.FINE


def test_v1_a_group_at_the_default_weight_is_lowered(tmp_path: Path) -> None:
    # e.g. made by Docker itself for the first sandbox, before any worker prepared it
    root = _v1_host(tmp_path, **{"atelier-sandboxes": 1024})
    heavy = inspect_sandbox_cgroup(PARENT, V1, root=root)
    assert (heavy.state, heavy.weight) == (State.TOO_HEAVY, 1024)
    assert "cpu.shares 1024, above 128" in heavy.line()
    assert "Fix: " in heavy.line()

    prepared = prepare_sandbox_cgroup(PARENT, V1, root=root)
    assert (prepared.state, prepared.weight, prepared.why) == (State.PREPARED, 128, "lowered from 1024 just now")


def test_a_group_already_lower_than_ours_is_fine_and_left_as_the_operator_set_it(tmp_path: Path) -> None:
    root = _v1_host(tmp_path, **{"atelier-sandboxes": 64})
    status = prepare_sandbox_cgroup(PARENT, V1, root=root)
    assert (status.state, status.weight, status.ok) == (State.FINE, 64, True)
    assert (root / "cpu" / "atelier-sandboxes" / "cpu.shares").read_text().strip() == "64"


@pytest.mark.parametrize("engine", [V1, V2], ids=["v1", "v2"])
def test_without_the_hosts_cgroups_in_sight_it_says_so_and_makes_nothing_where_they_would_be(
    tmp_path: Path, engine: Engine
) -> None:
    # e.g. a bare tmpfs at /sys/fs/cgroup, or none (`ip netns exec` mounts a sysfs of its own)
    status = prepare_sandbox_cgroup(PARENT, engine, root=tmp_path)
    assert (status.state, status.ok) == (State.UNSEEN, False)
    hierarchy = tmp_path / "cpu" if engine.version == 1 else tmp_path
    assert status.why == (
        f"this process sees no cgroup cpu controller at {hierarchy}, so it cannot check or prepare"
        f" {hierarchy}/atelier-sandboxes"
    )
    assert status.line().startswith("sandboxes run at NORMAL CPU priority: cgroup /atelier-sandboxes")
    assert "Fix: check on the Docker host; " in status.line()
    assert list(tmp_path.iterdir()) == []


def test_v2_the_cpu_controller_is_handed_down_and_cpu_weight_written(tmp_path: Path) -> None:
    root = _v2_host(tmp_path, subtree="memory pids")
    assert inspect_sandbox_cgroup(PARENT, V2, root=root).state is State.MISSING
    prepared = prepare_sandbox_cgroup(PARENT, V2, root=root)
    assert (prepared.state, prepared.weight) == (State.PREPARED, LOW_CPU_WEIGHT)
    assert (root / "cgroup.subtree_control").read_text() == "+cpu\n"  # what the kernel is asked
    assert (root / "atelier-sandboxes" / "cpu.weight").read_text().strip() == "12"
    assert "cpu.weight 12" in prepared.line()
    assert "cgroup v2" in prepared.line()


def test_v2_a_group_at_the_default_weight_is_lowered_and_the_controller_left_as_it_was(tmp_path: Path) -> None:
    root = _v2_host(tmp_path, subtree="cpu memory", **{"atelier-sandboxes": 100})
    heavy = inspect_sandbox_cgroup(PARENT, V2, root=root)
    assert (heavy.state, heavy.weight) == (State.TOO_HEAVY, 100)
    assert f"echo +cpu > /sys/fs/cgroup/cgroup.subtree_control && mkdir -p {root}/atelier-sandboxes" in heavy.fix
    assert prepare_sandbox_cgroup(PARENT, V2, root=root).state is State.PREPARED
    assert (root / "cgroup.subtree_control").read_text() == "cpu memory\n"
    assert (root / "atelier-sandboxes" / "cpu.weight").read_text().strip() == "12"


def test_a_cgroup_file_system_the_worker_cannot_write_is_reported_with_why_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in a worker container without the host's /sys/fs/cgroup (mounted read-only there).
    root = _v1_host(tmp_path)

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    status = prepare_sandbox_cgroup(PARENT, V1, root=root)
    assert status.state is State.MISSING
    assert status.why == (
        f"{root}/cpu/atelier-sandboxes does not exist, and {root}/cpu/atelier-sandboxes cannot be written"
        " (Read-only file system)"
    )
    line = status.line()
    assert line.startswith("sandboxes run at NORMAL CPU priority: cgroup /atelier-sandboxes")
    assert "live streams lag" in line
    assert "Fix: run the worker as root with the host's /sys/fs/cgroup writable" in line


def test_a_weight_that_cannot_be_lowered_stays_reported_as_too_high(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _v1_host(tmp_path, **{"atelier-sandboxes": 1024})

    def refused(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refused)
    status = prepare_sandbox_cgroup(PARENT, V1, root=root)
    assert (status.state, status.weight) == (State.TOO_HEAVY, 1024)
    assert f"{root}/cpu/atelier-sandboxes/cpu.shares cannot be written (Permission denied)" in status.why


@pytest.mark.parametrize(
    ("engine", "control", "prop"),
    [(SYSTEMD_V2, "cpu.weight", "CPUWeight=12"), (SYSTEMD_V1, "cpu.shares", "CPUShares=128")],
    ids=["v2", "v1"],
)
def test_systemd_the_parent_is_a_slice_whose_top_slice_is_checked_and_never_written(
    tmp_path: Path, engine: Engine, control: str, prop: str
) -> None:
    base = _v1_host(tmp_path) / "cpu" if engine.version == 1 else _v2_host(tmp_path)
    (base / "atelier.slice").mkdir()  # systemd made it for the first sandbox
    (base / "atelier.slice" / control).write_text("100\n" if engine.version == 2 else "1024\n")
    status = prepare_sandbox_cgroup(PARENT, engine, root=tmp_path)
    assert status.parent == "atelier-sandboxes.slice"
    assert status.state is State.TOO_HEAVY
    assert status.group == base / "atelier.slice"  # where it competes with system.slice and user.slice
    assert status.fix == f"on the Docker host, as root, once (it persists): systemctl set-property atelier.slice {prop}"
    assert (base / "atelier.slice" / control).read_text() in {"100\n", "1024\n"}  # systemd owns it: untouched

    (base / "atelier.slice" / control).write_text("12\n" if engine.version == 2 else "128\n")
    assert inspect_sandbox_cgroup(PARENT, engine, root=tmp_path).state is State.FINE


def test_systemd_before_the_first_sandbox_the_slice_is_missing(tmp_path: Path) -> None:
    root = _v2_host(tmp_path)
    status = prepare_sandbox_cgroup(PARENT, SYSTEMD_V2, root=root)
    assert status.state is State.MISSING
    assert "systemctl set-property atelier.slice CPUWeight=12" in status.line()
    assert sorted(p.name for p in root.iterdir()) == ["cgroup.controllers", "cgroup.subtree_control"]


def test_an_empty_setting_is_reported_as_normal_priority_and_recorded_as_none(tmp_path: Path) -> None:
    status = prepare_sandbox_cgroup("", V1, root=_v1_host(tmp_path))
    assert (status.state, status.ok, status.parent) == (State.OFF, False, "")
    assert "NORMAL CPU priority (SANDBOX_CGROUP_PARENT is empty)" in status.line()
    assert "SANDBOX_CGROUP_PARENT=/atelier-sandboxes" in status.fix
    assert status.record() == {"cgroup_parent": "none", "state": "off"}
    assert sorted(p.name for p in (tmp_path / "cpu").iterdir()) == ["cpu.shares"]


def test_a_benchmark_records_the_parent_and_its_weight(tmp_path: Path) -> None:
    status = inspect_sandbox_cgroup(PARENT, V1, root=_v1_host(tmp_path, **{"atelier-sandboxes": 128}))
    assert status.record() == {
        "cgroup_parent": "/atelier-sandboxes",
        "state": "fine",
        "weight": 128,
        "control": "cpu.shares",
        "cgroup_version": 1,
        "cgroup_driver": "cgroupfs",
    }


@pytest.mark.parametrize(
    ("setting", "driver", "expected"),
    [
        ("/atelier-sandboxes", "cgroupfs", "/atelier-sandboxes"),
        ("atelier-sandboxes/", "cgroupfs", "/atelier-sandboxes"),
        ("/atelier-sandboxes", "systemd", "atelier-sandboxes.slice"),
        ("/batch/atelier", "systemd", "batch-atelier.slice"),
        ("atelier-sandboxes.slice", "systemd", "atelier-sandboxes.slice"),
        ("", "systemd", ""),
        ("  ", "cgroupfs", ""),
    ],
)
def test_the_parent_docker_is_given_suits_its_cgroup_driver(setting: str, driver: str, expected: str) -> None:
    assert docker_cgroup_parent(setting, driver) == expected


def test_the_engine_is_read_from_docker_info(tmp_path: Path) -> None:
    assert Engine.from_info({"CgroupDriver": "systemd", "CgroupVersion": "2"}) == SYSTEMD_V2
    assert Engine.from_info({"CgroupDriver": "cgroupfs", "CgroupVersion": "1"}) == V1
    # Engines before API 1.40 do not say the version: the file system does.
    assert Engine.from_info({"CgroupDriver": "cgroupfs"}, root=tmp_path) == V1
    assert Engine.from_info({"CgroupDriver": "cgroupfs"}, root=_v2_host(tmp_path)) == V2


# The platform's own sandboxes (previews, comparisons): a group of their own at half a process's weight.
OFFLINE_PARENT = "/atelier_offline"


@pytest.mark.parametrize(("engine", "weight"), [(V1, 512), (V2, 50)], ids=["v1", "v2"])
def test_the_previews_group_is_made_at_half_a_processs_weight_beside_the_agents_low_one(
    tmp_path: Path, engine: Engine, weight: int
) -> None:
    root = _v1_host(tmp_path) if engine.version == 1 else _v2_host(tmp_path)
    agents = prepare_sandbox_cgroup(PARENT, engine, root=root)
    offline = prepare_sandbox_cgroup(OFFLINE_PARENT, engine, tier=OFFLINE, root=root)
    assert (agents.state, agents.weight) == (State.PREPARED, engine.low_weight)
    assert (offline.state, offline.weight) == (State.PREPARED, weight)
    hierarchy = root / "cpu" if engine.version == 1 else root
    assert (hierarchy / "atelier_offline" / engine.control).read_text().strip() == str(weight)
    assert (hierarchy / "atelier-sandboxes" / engine.control).read_text().strip() == str(engine.low_weight)
    assert offline.line().startswith(
        "previews and comparisons run at half a process's CPU priority: cgroup /atelier_offline ("
    )
    assert offline.line().endswith(f"{engine.control} {weight} in {hierarchy}/atelier_offline (created just now)")


def test_a_previews_group_left_at_the_default_weight_is_reported_then_lowered_to_its_own(tmp_path: Path) -> None:
    # Docker makes the group at the default weight for the first preview when no worker prepared it.
    root = _v1_host(tmp_path, atelier_offline=1024)
    heavy = inspect_sandbox_cgroup(OFFLINE_PARENT, V1, tier=OFFLINE, root=root)
    assert (heavy.state, heavy.ok) == (State.TOO_HEAVY, False)
    assert heavy.line().startswith("previews and comparisons run at NORMAL CPU priority: cgroup /atelier_offline")
    assert "cpu.shares 1024, above 512" in heavy.line()
    assert f"echo 512 > {root}/cpu/atelier_offline/cpu.shares" in heavy.fix
    lowered = prepare_sandbox_cgroup(OFFLINE_PARENT, V1, tier=OFFLINE, root=root)
    assert (lowered.state, lowered.weight, lowered.why) == (State.PREPARED, 512, "lowered from 1024 just now")


def test_an_empty_previews_setting_names_its_own_setting_and_default(tmp_path: Path) -> None:
    status = inspect_sandbox_cgroup("", V1, tier=OFFLINE, root=_v1_host(tmp_path))
    assert status.state is State.OFF
    expected = "previews and comparisons run at NORMAL CPU priority (SANDBOX_OFFLINE_CGROUP_PARENT is empty)"
    assert expected in status.line()
    assert status.fix == "set SANDBOX_OFFLINE_CGROUP_PARENT=/atelier_offline (its default)"


@pytest.mark.parametrize(("engine", "prop"), [(SYSTEMD_V1, "CPUShares=512"), (SYSTEMD_V2, "CPUWeight=50")])
def test_systemd_the_previews_slice_is_a_top_slice_of_its_own(tmp_path: Path, engine: Engine, prop: str) -> None:
    """Its default has no dash: a dash would nest it in atelier.slice, the slice the agents' weight is on."""
    root = _v1_host(tmp_path) if engine.version == 1 else _v2_host(tmp_path)
    agents = inspect_sandbox_cgroup(PARENT, engine, root=root)
    offline = inspect_sandbox_cgroup(OFFLINE.default, engine, tier=OFFLINE, root=root)
    assert offline.parent == "atelier_offline.slice"
    assert offline.group is not None
    assert agents.group is not None
    assert (offline.group.name, agents.group.name) == ("atelier_offline.slice", "atelier.slice")
    assert offline.fix.endswith(f"systemctl set-property atelier_offline.slice {prop}")
