"""`platform/` holds deployment files only; it must never shadow the stdlib module."""

import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_stdlib_platform_module_is_the_one_imported_under_django() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert Path(platform.__file__).resolve().parent == stdlib
    assert platform.python_version()  # the real module answers


def test_a_django_process_started_from_the_project_root_sees_the_stdlib_platform() -> None:
    code = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.test_settings'); "
        "django.setup(); import platform, uuid; print(platform.__file__); print(platform.system())"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    module_path, system = result.stdout.split()
    assert not Path(module_path).resolve().is_relative_to(ROOT)
    assert system == "Linux"


def test_the_platform_directory_holds_no_python() -> None:
    assert not list((ROOT / "platform").rglob("*.py"))
