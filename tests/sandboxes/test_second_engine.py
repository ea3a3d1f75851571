"""A second Docker engine on this machine, the stand-in for a second worker host
(`second_engine`): the platform's own sandboxes start there under gVisor, work,
and stay as isolated as on the first engine.

Only addresses made for these tests are contacted, with the egress tests'
fixtures and helpers (test_network.py, test_egress_policy.py): the host's end of
the second engine's sandbox bridge, network namespaces holding a private address
and the lab's addresses, and sandboxes started here.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devstack.docker_engine import SecondEngine
from sandboxes import firewall
from sandboxes.docker_runtime import DockerSandbox
from sandboxes.pool import ColdStartProvider
from tests.sandboxes import test_egress_policy, test_network
from tests.sandboxes.test_egress_policy import (
    AZURE_WIRESERVER,
    LAB_PORT,
    PUBLIC_V4,
    _gateway_listener,
    _gateways,
    _host_connects,
    _sandbox_connects,
)
from tests.support.fixtures.sandbox import TEST_LABELS

pytestmark = [pytest.mark.docker, pytest.mark.timeout(300)]

# The egress tests' own fixtures, as they are: the lab namespace (with a public-range control
# address) and a listener on a private or link-local address in a namespace of its own.
lab = test_egress_policy.lab
private_listener = test_network.private_listener

REPO = Path(__file__).resolve().parents[2]
LISTEN_PORT = 8766


def _point_platform_at(engine: SecondEngine, monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """This process as a worker started with `engine.sandbox_env()`. The platform makes its Docker
    client with docker.from_env() at each sandbox start (none is kept), so DOCKER_HOST is read then;
    the settings are what the worker's environment would have set."""
    for name, value in engine.sandbox_env().items():
        if name.startswith("SANDBOX_"):
            setattr(settings, name, value)
        else:
            monkeypatch.setenv(name, value)
    settings.SANDBOX_NETWORK_MODE = "internet"


@pytest.fixture
def on_second_engine(second_engine: SecondEngine, monkeypatch: pytest.MonkeyPatch, settings: Any) -> SecondEngine:
    _point_platform_at(second_engine, monkeypatch, settings)
    return second_engine


def _start() -> DockerSandbox:
    box = ColdStartProvider().acquire(labels=TEST_LABELS)
    assert isinstance(box, DockerSandbox)
    return box


def _address(client: Any, box: DockerSandbox) -> str:
    networks = client.api.inspect_container(box.id)["NetworkSettings"]["Networks"]
    (network,) = networks.values()
    return str(network["IPAddress"])


def test_a_sandbox_starts_under_gvisor_on_the_second_engine_and_works_there(on_second_engine, tmp_path):
    engine = on_second_engine
    box = _start()
    try:
        assert box.id in engine.container_ids()
        assert box.id not in engine.first_container_ids()
        attrs = engine.client().api.inspect_container(box.id)
        assert attrs["HostConfig"]["Runtime"] == "runsc"
        address = attrs["NetworkSettings"]["Networks"][engine.network.name]["IPAddress"]
        assert ipaddress.ip_address(address) in ipaddress.ip_network(engine.network.subnet)

        box.write_files({"greeting.txt": b"hello, second engine\n"})
        first = box.run_command('cd /testbed/output && KERNEL="$(dmesg | head -1)" && cp ../input/greeting.txt .')
        assert first.exit_code == 0, first.output
        # The same shell: the directory and the variable of the command before are still there.
        second = box.run_command('echo "$KERNEL" > kernel.txt && pwd')
        assert second.output == "/testbed/output\n"
        report = box.copy_out(tmp_path / "out")
        assert sorted(f.path for f in report.files) == ["greeting.txt", "kernel.txt"]
        assert (tmp_path / "out" / "greeting.txt").read_text() == "hello, second engine\n"
        assert "Starting gVisor" in (tmp_path / "out" / "kernel.txt").read_text()
    finally:
        box.stop()
    assert box.id not in engine.container_ids()


def test_a_worker_given_sandbox_env_uses_the_second_engine_as_its_own(second_engine):
    """A separate process (as a worker would be) with nothing but `sandbox_env()` added to its environment."""
    env = {**os.environ, **second_engine.sandbox_env(), "PYTHONPATH": str(REPO)}
    env["DJANGO_SETTINGS_MODULE"] = "config.test_settings"
    since = int(time.time()) - 1
    doctor = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "sandbox_doctor"],
        env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    until = int(time.time()) + 1
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "OK    sandbox: started under runsc; runs as uid 1000" in doctor.stdout
    assert f"in place for bridge {second_engine.network.bridge} (IPv4 and IPv6)" in doctor.stdout

    def doctor_sandboxes(client: Any) -> list[dict[str, Any]]:
        events = client.events(
            since=since, until=until, decode=True,
            filters={"type": "container", "event": "create", "label": "atelier.owner=doctor"},
        )  # fmt: skip
        return list(events)

    assert len(doctor_sandboxes(second_engine.client())) == 1
    assert doctor_sandboxes(second_engine.first_client()) == []


def test_the_host_the_metadata_address_and_a_private_address_are_refused_on_the_second_engine(on_second_engine, lab):
    engine = on_second_engine
    links = json.loads(subprocess.run(["ip", "-n", lab, "-j", "-4", "addr"], capture_output=True, check=True).stdout)
    # The lab's end of its link to the host (its other addresses are on its loopback).
    (lab_private,) = [a["local"] for link in links if link["ifname"] != "lo" for a in link.get("addr_info", [])]
    assert ipaddress.ip_address(lab_private) in ipaddress.ip_network("10.0.0.0/8")
    box = _start()
    server = None
    try:
        gateway = _gateways(engine.network)[4]  # docker.from_env(): the second engine here
        server, port = _gateway_listener(gateway)
        assert _host_connects(gateway, port)  # control: the host's end of the second engine's bridge listens
        # Control: sandboxes on the second engine do get out (so a refusal below is the policy's) ...
        assert _sandbox_connects(box, PUBLIC_V4, LAB_PORT) == "CONNECTED"
        # ... but not to the host, a cloud metadata address, or a private address.
        assert _sandbox_connects(box, gateway, port).startswith("BLOCKED")
        assert _sandbox_connects(box, AZURE_WIRESERVER, LAB_PORT).startswith("BLOCKED")
        assert _sandbox_connects(box, lab_private, LAB_PORT).startswith("BLOCKED")
    finally:
        if server is not None:
            server.close()
        box.stop()


def test_private_and_metadata_range_addresses_are_refused_on_the_second_engine(on_second_engine, private_listener):
    host, port = private_listener
    with socket.create_connection((host, port), timeout=5):
        pass  # control: reachable from the host through the veth pair
    box = _start()
    try:
        assert _sandbox_connects(box, host, port).startswith("BLOCKED")
    finally:
        box.stop()


def test_sandboxes_on_the_two_engines_cannot_reach_each_other(sandbox, second_engine, monkeypatch, settings):
    """On one kernel the two engines' bridges are routed to each other; each engine's policy refuses it."""
    on_first = sandbox  # started on the first engine, before the switch below
    _point_platform_at(second_engine, monkeypatch, settings)
    on_second = _start()
    try:
        listeners = {
            on_first.id: (_address(second_engine.first_client(), on_first), LISTEN_PORT),
            on_second.id: (_address(second_engine.client(), on_second), LISTEN_PORT),
        }
        for box in (on_first, on_second):
            box.run_command(f"python3 -m http.server {LISTEN_PORT} >/dev/null 2>&1 &")
            deadline = time.monotonic() + 30
            while not _host_connects(*listeners[box.id]):  # control: each listens, and the host reaches it
                assert time.monotonic() < deadline, f"no listener in {box.id[:12]}"
                time.sleep(0.2)
        assert _sandbox_connects(on_second, *listeners[on_first.id]).startswith("BLOCKED")
        assert _sandbox_connects(on_first, *listeners[on_second.id]).startswith("BLOCKED")
    finally:
        on_second.stop()


@pytest.fixture
def runners_decided_anew() -> Iterator[None]:
    """The process forgets how it reaches each engine, before this test and after it (the test's
    answer for the first engine is made up)."""
    firewall.policy_runner.reset()
    yield
    firewall.policy_runner.reset()


def test_the_two_engines_policies_are_kept_apart_in_one_process(second_engine, sandbox_image, runners_decided_anew):
    """A process that talks to both engines decides for each where its egress policy is applied:
    the first engine's answer (here: through a helper container) is not reused for the second."""
    outside = firewall.policy_runner(
        second_engine.first_client(), sandbox_image, identity=lambda: ("another-boot-id", "net:[0]")
    )
    assert isinstance(outside, firewall.DockerHostRunner)
    assert isinstance(firewall.policy_runner(second_engine.client(), sandbox_image), firewall.LocalRunner)
