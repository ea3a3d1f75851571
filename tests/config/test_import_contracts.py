"""Which way imports may run (pyproject.toml, [tool.importlinter]): kept today,
and a wrong-way import makes the check fail, as `make lint` runs it."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "creations", "sandboxes", "workspaces")
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


def _copy_of_the_project(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_project_keeps_its_import_contracts(tmp_path: Path) -> None:
    result = _lint_imports(_copy_of_the_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_team_module_that_imports_runs_breaks_the_check(tmp_path: Path) -> None:
    tree = _copy_of_the_project(tmp_path)
    with (tree / "workspaces" / "selectors.py").open("a") as module:
        module.write("\nfrom creations.models import Run  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "workspaces.selectors -> creations.models" in result.stdout


def test_the_sandbox_importing_the_run_service_breaks_the_check(tmp_path: Path) -> None:
    tree = _copy_of_the_project(tmp_path)
    with (tree / "sandboxes" / "runtime.py").open("a") as module:
        module.write("\nfrom creations.runs import services  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "sandboxes.runtime -> creations.runs.services" in result.stdout


def test_a_service_that_imports_its_task_breaks_the_check(tmp_path: Path) -> None:
    tree = _copy_of_the_project(tmp_path)
    with (tree / "creations" / "runs" / "services.py").open("a") as module:
        module.write("\nfrom creations.runs import tasks  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "creations.runs.services -> creations.runs.tasks" in result.stdout
