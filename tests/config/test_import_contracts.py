"""Which way imports may run (pyproject.toml, [tool.importlinter]): kept today,
and a wrong-way import makes the check fail, as `make lint` runs it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "creations", "sandboxes", "workspaces", "api", "atelier_cli", "devstack", "bench", "tests")
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


# The check reads Python modules only: the copy leaves out every other file (templates, test data, sample media),
# compiled modules, and a benchmark's virtualenv of its own (hundreds of megabytes once `make bench` has run).
SKIPPED_FOLDERS = shutil.ignore_patterns("__pycache__", "screenshots", ".venv*")


def _not_source(folder: str, names: list[str]) -> set[str]:
    skipped = SKIPPED_FOLDERS(folder, names)
    return skipped | {name for name in names if not name.endswith(".py") and not (Path(folder) / name).is_dir()}


def _copy_of_the_project(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=_not_source)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_project_keeps_its_import_contracts(tmp_path: Path) -> None:
    result = _lint_imports(_copy_of_the_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "wrong_way", "reported"),
    [
        ("workspaces/selectors.py", "from creations.models import Run", "workspaces.selectors -> creations.models"),
        ("sandboxes/runtime.py", "from creations.runs import services", "sandboxes.runtime -> creations.runs.services"),
        (
            "creations/runs/services.py",
            "from creations.runs import tasks",
            "creations.runs.services -> creations.runs.tasks",
        ),
        ("bench/measuring.py", "from tests.support import free_port", "bench.measuring -> tests.support"),
        ("devstack/ports.py", "import pytest", "devstack.ports -> pytest"),
        ("creations/apps.py", "from devstack.ports import free_port", "creations.apps -> devstack.ports"),
    ],
    ids=[
        "teams import runs",
        "the sandbox imports the run service",
        "a service imports its task",
        "a benchmark imports a test helper",
        "the development stack uses pytest",
        "the platform imports the development stack",
    ],
)
def test_a_wrong_way_import_breaks_the_check(tmp_path: Path, module: str, wrong_way: str, reported: str) -> None:
    tree = _copy_of_the_project(tmp_path)
    with (tree / module).open("a") as source:
        source.write(f"\n{wrong_way}  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert reported in result.stdout
