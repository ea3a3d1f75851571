"""Checks behind `manage.py sandbox_doctor`: engine, runtime, CPU priority, image, sandbox, network policy."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
from django.conf import settings

from sandboxes.container_spec import SandboxConfig
from sandboxes.cpu_priority import AGENTS, TIERS, Engine, State, Tier, configured, inspect_sandbox_cgroup
from sandboxes.docker_runtime import start_sandbox
from sandboxes.firewall import NetworkPolicyError, policy_runner
from sandboxes.image import sandbox_image_tag
from sandboxes.network import egress_policy_problems


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False


def cpu_priority_checks(engine: Engine) -> Iterator[Check]:
    """Each tier's parent cgroup: without it sandboxes still run, but live streams lag under load.
    Missing or too heavy is a failure; off on purpose (an empty setting), or out of this process's
    sight (no host cgroups here, as in a network namespace of its own), a warning. Two tiers in one
    group fail too: one weight cannot be both."""
    seen: dict[Path, Tier] = {}
    for tier in TIERS:
        status = inspect_sandbox_cgroup(configured(tier), engine, tier=tier)
        name = "cpu priority" if tier is AGENTS else f"cpu priority ({tier.who})"
        fix = status.fix
        if status.state in {State.MISSING, State.TOO_HEAVY} and engine.driver != "systemd":
            fix = f"python manage.py sandbox_doctor --fix (as root on the Docker host), or {fix}"
        if status.group is not None and status.group in seen:
            other = seen[status.group]
            detail = f"{tier.setting_name} shares {status.group} with {other.setting_name}, weighed for {other.who}"
            yield Check(name, False, detail, f"set {tier.setting_name} to a group of its own ({tier.default})")
            continue
        if status.group is not None:
            seen[status.group] = tier
        warn = status.state in {State.OFF, State.UNSEEN}
        yield Check(name, status.ok or warn, status.summary(), fix, warning=warn)


def run_checks(*, start_one: bool = True) -> Iterator[Check]:
    try:
        client = docker.from_env(timeout=15)
        info = client.info()
    except Exception as exc:
        yield Check(
            "engine",
            False,
            f"Docker does not answer: {exc}",
            "Install docker.io and start dockerd (make test does both).",
        )
        return
    yield Check("engine", True, f"Docker {info.get('ServerVersion')}")
    runtime = settings.SANDBOX_RUNTIME
    runtimes = info.get("Runtimes", {})
    if runtime not in runtimes:
        yield Check(
            "runtime",
            False,
            f"runtime {runtime!r} is not registered (have: {', '.join(runtimes)})",
            "Install runsc (bookworm-backports) and register it in /etc/docker/daemon.json; "
            "see platform/sandbox/README.md.",
        )
    elif runtime != "runsc":
        yield Check(
            "runtime",
            True,
            f"SANDBOX_RUNTIME={runtime}: NOT isolated by gVisor (development only)",
            "Set SANDBOX_RUNTIME=runsc in production.",
            warning=True,
        )
    else:
        yield Check("runtime", True, "runsc (gVisor) is registered")
    yield from cpu_priority_checks(Engine.from_info(info))
    tag = sandbox_image_tag()
    try:
        client.images.get(tag)
        yield Check("image", True, tag)
    except docker.errors.ImageNotFound:
        yield Check(
            "image",
            False,
            f"{tag} is missing",
            "python manage.py build_sandbox_image (add --offline without a registry)",
        )
        return
    if start_one:
        try:
            box = start_sandbox({"atelier.owner": "doctor", "atelier.run_id": "doctor"})
        except Exception as exc:
            yield Check(
                "sandbox",
                False,
                f"a sandbox does not start: {exc}",
                "Look at dockerd's log; check the runtime arguments in /etc/docker/daemon.json.",
            )
            return
        try:
            result = box.run_command("id -u", timeout=30)
            used = client.api.inspect_container(box.id)["HostConfig"].get("Runtime")
            yield Check(
                "sandbox",
                result.exit_code == 0 and result.output.strip() == "1000" and used == runtime,
                f"started under {used}; runs as uid {result.output.strip() or '?'}",
                "Check the image's user and the runtime registration.",
            )
        finally:
            box.stop()
    config = SandboxConfig.from_settings()
    if config.network_mode == "none":
        yield Check("network", True, "SANDBOX_NETWORK_MODE=none: no network")
        return
    try:
        runner = policy_runner(client, config.image)
    except NetworkPolicyError as exc:
        yield Check(
            "network policy",
            False,
            f"cannot reach the Docker daemon's network namespace: {exc}",
            "See platform/sandbox/README.md, Egress (a worker in a container).",
        )
        return
    # Always checked where the sandboxes' bridge is (the daemon's namespace), and said so:
    # a clean report from the wrong namespace would be worse than none.
    problems = egress_policy_problems(config.network, runner)
    yield Check(
        "network policy",
        not problems,
        f"checked in {runner.where}: "
        + ("; ".join(problems) or f"in place for bridge {config.network.bridge} (IPv4 and IPv6)"),
        "Run python manage.py sandbox_doctor --fix as root on the Docker host (iptables); "
        "a running worker also restores it before its next sandbox starts.",
    )
