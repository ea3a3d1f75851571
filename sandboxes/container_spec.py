"""What a sandbox container is made of: its settings, its labels and everything `docker run` gets.

The hardening lives here (container_options); sandboxes.docker_runtime starts and drives the container.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import docker
from django.conf import settings

from sandboxes.cpu_priority import sandbox_cgroup_parent
from sandboxes.image import sandbox_image_tag
from sandboxes.network import NetworkSettings
from sandboxes.shell_scripts import STATE_DIR, ShellLimits

LABEL_SANDBOX = "atelier.sandbox"
LABEL_RUN_ID = "atelier.run_id"
LABEL_OWNER = "atelier.owner"
LABEL_POOL = "atelier.pool"
# The worker host whose engine runs the sandbox: each host cleans up only its own.
LABEL_HOST = "atelier.host"
SANDBOX_USER = "1000:1000"


@dataclass(frozen=True)
class SandboxConfig:
    image: str
    runtime: str
    memory: str
    cpus: float
    cpu_shares: int
    cgroup_parent: str
    pids_limit: int
    nproc: int
    nofile: int
    tmp_size: str
    home_size: str
    testbed_size: str
    network_mode: str
    network: NetworkSettings
    output_limit: int
    stream_limit: int
    command_timeout: float
    start_timeout: float
    copy_in_max_bytes: int
    copy_out_max_bytes: int
    copy_out_max_files: int
    freeze_idle: bool = False
    cpu_burst: bool = False
    output_max_bytes: int = 128 * 1024 * 1024
    host_id: str = "localhost"

    @classmethod
    def from_settings(cls) -> SandboxConfig:
        s = settings
        return cls(
            image=sandbox_image_tag(),
            runtime=s.SANDBOX_RUNTIME,
            memory=s.SANDBOX_MEMORY,
            cpus=s.SANDBOX_CPUS,
            cpu_shares=s.SANDBOX_CPU_SHARES,
            cgroup_parent=sandbox_cgroup_parent(s.SANDBOX_CGROUP_PARENT),  # a slice under systemd
            pids_limit=s.SANDBOX_PIDS_LIMIT,
            nproc=s.SANDBOX_NPROC,
            nofile=s.SANDBOX_NOFILE,
            tmp_size=s.SANDBOX_TMP_SIZE,
            home_size=s.SANDBOX_HOME_SIZE,
            testbed_size=s.SANDBOX_TESTBED_SIZE,
            network_mode=s.SANDBOX_NETWORK_MODE,
            network=NetworkSettings(
                name=s.SANDBOX_NETWORK_NAME,
                bridge=s.SANDBOX_NETWORK_BRIDGE,
                subnet=s.SANDBOX_NETWORK_SUBNET,
                dns=tuple(s.SANDBOX_DNS),
            ),
            output_limit=s.SANDBOX_OUTPUT_LIMIT,
            stream_limit=s.SANDBOX_STREAM_LIMIT,
            command_timeout=s.SANDBOX_COMMAND_TIMEOUT,
            start_timeout=s.SANDBOX_START_TIMEOUT,
            copy_in_max_bytes=s.SANDBOX_COPY_IN_MAX_BYTES,
            copy_out_max_bytes=s.SANDBOX_COPY_OUT_MAX_BYTES,
            copy_out_max_files=s.SANDBOX_COPY_OUT_MAX_FILES,
            freeze_idle=s.SANDBOX_FREEZE_IDLE,
            cpu_burst=s.SANDBOX_CPU_BURST,
            output_max_bytes=s.SANDBOX_OUTPUT_MAX_BYTES,
            host_id=s.SANDBOX_HOST_ID,
        )

    def shell_limits(self) -> ShellLimits:
        """What each command in the shell may use, below the sandbox's own limits.

        gVisor kills the whole sandbox when its memory limit is reached, and a
        sandbox whose process slots are all taken cannot even start the helper
        that stops a command: so commands get less than the sandbox, and the
        rest stays for the shell and the worker's helpers."""
        memory = parse_size(self.memory)
        reserve = max(48 * 1024 * 1024, memory // 8)
        return ShellLimits(
            output_limit=self.output_limit,
            stream_limit=self.stream_limit,
            output_max_bytes=self.output_max_bytes,
            memory_kb=max(memory - reserve, 64 * 1024 * 1024) // 1024,
            memory_reserve_kb=reserve // 1024,
            nproc=self.nproc - max(4, self.nproc // 8),
        )


_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """Bytes in a Docker size such as "2g", "512m" or "1048576"."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:].isalpha() else ""
    number = value[: len(value) - len(unit)]
    if unit not in _SIZE_UNITS or not number.replace(".", "", 1).isdigit():
        raise ValueError(f"not a size: {text!r}")
    return int(float(number) * _SIZE_UNITS[unit])


def _tmpfs(size: str, mode: str, owned: bool) -> str:
    owner = ",uid=1000,gid=1000" if owned else ""
    return f"rw,exec,nosuid,nodev,size={size},mode={mode}{owner}"


def container_options(config: SandboxConfig, labels: Mapping[str, str], network: str) -> dict[str, Any]:
    """Everything `docker run` gets: the hardening lives here."""
    options: dict[str, Any] = {
        "image": config.image,
        "command": ["sleep", "infinity"],
        "detach": True,
        "runtime": config.runtime,
        "user": SANDBOX_USER,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,  # required under gVisor: rootfs writes would land unbounded on the host
        "init": True,
        "mem_limit": config.memory,
        "memswap_limit": config.memory,  # no swap on top
        "nano_cpus": int(config.cpus * 1e9),
        # Below other containers' weight (1024); `docker update` cannot change it under runsc.
        "cpu_shares": config.cpu_shares,
        "cgroup_parent": config.cgroup_parent or None,
        "pids_limit": config.pids_limit,  # host threads under gVisor: generous; nproc stops fork bombs
        "ulimits": [
            docker.types.Ulimit(name="nproc", soft=config.nproc, hard=config.nproc),
            docker.types.Ulimit(name="nofile", soft=config.nofile, hard=config.nofile),
        ],
        "tmpfs": {
            "/tmp": _tmpfs(config.tmp_size, "1777", owned=False),  # noqa: S108 - inside the sandbox
            "/home/agent": _tmpfs(config.home_size, "0755", owned=True),
            "/testbed": _tmpfs(config.testbed_size, "0755", owned=True),  # bounded; docker cp can't reach it
            # The shell's own state and output log, apart from the agent's /tmp: a command that fills
            # /tmp must not break the shell. Room for one command's whole output (the shell stops a
            # command past output_max_bytes) and what is in flight when it does.
            STATE_DIR: _tmpfs(f"{config.output_max_bytes // (1024 * 1024) + 32}m", "0700", owned=True),
        },
        "labels": {LABEL_SANDBOX: "1", LABEL_HOST: config.host_id, **labels},
        "hostname": "sandbox",
        "working_dir": "/testbed",
        "network_mode": network if network == "none" else None,
        "network": None if network == "none" else network,
        "log_config": docker.types.LogConfig(type="none"),
    }
    if config.network.dns and network != "none":
        options["dns"] = list(config.network.dns)
    return {key: value for key, value in options.items() if value is not None}
