"""The programs sent into the sandbox: shipped with an installed package, and each one parses."""

from __future__ import annotations

import subprocess
import tomllib
from fnmatch import fnmatch
from importlib.resources import files
from pathlib import Path

import pytest

from sandboxes.programs import program_text

PROGRAMS = Path(str(files("sandboxes.programs")))
SHELL_PROGRAMS = sorted(path.name for path in PROGRAMS.glob("*.sh"))


def test_every_program_that_is_not_a_module_is_package_data():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["sandboxes.programs"]
    data = [path.name for path in PROGRAMS.iterdir() if path.is_file() and path.suffix not in (".py", ".pyc")]
    assert data, "sandboxes/programs/ holds no shell programs"
    assert [name for name in data if not any(fnmatch(name, pattern) for pattern in patterns)] == []


@pytest.mark.parametrize("name", SHELL_PROGRAMS)
def test_each_shell_program_parses(name):
    checked = subprocess.run(["bash", "-n"], input=program_text(name), capture_output=True, text=True, check=False)
    assert (checked.returncode, checked.stderr) == (0, "")
