"""Helpers for sandbox tests: sandboxes with tighter limits, for fast limit tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from sandboxes.docker_runtime import DockerSandbox, SandboxConfig, start_sandbox

TEST_LABELS = {"atelier.owner": "tests", "atelier.run_id": "tests"}


def start_with(**overrides: Any) -> DockerSandbox:
    config = dataclasses.replace(SandboxConfig.from_settings(), **overrides)
    return start_sandbox(TEST_LABELS, config=config)
