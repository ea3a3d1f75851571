"""A pytest of a test's own, on test files it wrote into a folder: for tests of how the suite itself is
collected, ordered or spread over workers (markers, groups), which only another session can show."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_pytest_in(folder: Path, arguments: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m pytest` on `folder` alone, with none of the project's configuration (nor its cache), in
    `env`; fails the calling test when that session does not pass."""
    alone = ["-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(folder)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *arguments, *alone, str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
        env=dict(env),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done
