"""Helpers shared by the test suite."""

import os
import shutil
import socket
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(reason: str) -> NoReturn:
    """Skip a test whose real dependency is absent — except in CI, where a
    skipped Docker/gVisor/Redis/Postgres/browser test would hide a broken feature."""
    if IN_CI:
        pytest.fail(f"required for this test but missing in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require(condition: bool, reason: str) -> None:
    if not condition:
        missing(reason)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def has_executable(name: str) -> bool:
    return shutil.which(name) is not None
