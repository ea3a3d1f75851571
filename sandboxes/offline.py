"""Sandboxes with no network, for work on untrusted files that is not an agent's.

The platform itself has to open files agents made (to draw previews, render
documents). It does so in a sandbox like the agents' own — same image, same
gVisor runtime and hardening — but with no network interface at all, its own
memory limit, and a scratch folder sized for the files it gets, so a parser
exploited by a hostile file is stuck in a throwaway computer with nothing to
read and nowhere to send it. Its CPU weight is its own too (SANDBOX_OFFLINE_CGROUP_PARENT,
sandboxes/cpu_priority.py): above the agents' sandboxes, whose runs wait for it to end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from django.conf import settings

from sandboxes.container_spec import SandboxConfig
from sandboxes.cpu_priority import sandbox_cgroup_parent
from sandboxes.docker_runtime import DockerSandbox, start_sandbox

LABEL_PURPOSE = "atelier.purpose"


def start_offline_sandbox(
    *,
    labels: Mapping[str, str],
    purpose: str,
    memory_bytes: int,
    scratch_bytes: int,
    max_in_bytes: int,
    max_out_bytes: int,
    max_out_files: int = 8,
) -> DockerSandbox:
    """A fresh sandbox with no network; `scratch_bytes` of /testbed on top of `memory_bytes` for its programs
    (under gVisor a tmpfs lives in the sandbox's memory, so both count against one limit). Files go in and
    come out within the given caps."""
    config = dataclasses.replace(
        SandboxConfig.from_settings(),
        network_mode="none",
        cgroup_parent=sandbox_cgroup_parent(settings.SANDBOX_OFFLINE_CGROUP_PARENT),
        memory=str(memory_bytes + scratch_bytes),
        testbed_size=str(scratch_bytes),
        freeze_idle=False,  # short-lived and always busy
        copy_in_max_bytes=max_in_bytes,
        copy_out_max_bytes=max_out_bytes,
        copy_out_max_files=max_out_files,
    )
    return start_sandbox({**labels, LABEL_PURPOSE: purpose}, config=config)
