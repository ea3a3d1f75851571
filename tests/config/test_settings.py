"""Settings come from the environment; bad values stop start-up, naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "SECURE_COOKIES", "SECRET_KEY"}}
    clean.update({"SECRET_KEY": "x" * 50, "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEBUG", "maybe"),
        ("EMAIL_PORT", "twenty-five"),
        ("EMAIL_PORT", "70000"),
        ("STORAGE_BACKEND", "floppy"),
        ("LOG_LEVEL", "LOUD"),
        ("DATABASE_URL", "not a url"),
        ("WORKER_CONCURRENCY", "0"),
    ],
)
def test_it_refuses_to_start_with_an_invalid_value_and_names_the_variable(variable: str, value: str) -> None:
    result = manage("check", **{variable: value})
    assert result.returncode != 0
    assert variable in result.stderr
    assert "Traceback" not in result.stderr


def test_it_requires_a_secret_key_outside_debug() -> None:
    result = manage("check", SECRET_KEY="", DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_it_requires_a_bucket_for_s3_storage() -> None:
    result = manage("check", STORAGE_BACKEND="s3")
    assert result.returncode != 0
    assert "S3_BUCKET" in result.stderr


def test_it_starts_with_the_embedded_defaults() -> None:
    result = manage("check", DEBUG="true", SECRET_KEY="")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_settings_turn_on_secure_cookies() -> None:
    code = "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.DEBUG)"
    result = manage("shell", "-c", code, DEBUG="false")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == ["True", "True", "False"]


def test_the_worker_runs_each_run_in_a_thread_four_per_core_unless_told() -> None:
    code = "from config.celery import app; print(app.conf.worker_pool, app.conf.worker_concurrency)"
    default = manage("shell", "-c", code, DEBUG="true")
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip().splitlines()[-1].split() == ["threads", str(4 * (os.cpu_count() or 1))]
    chosen = manage("shell", "-c", code, DEBUG="true", WORKER_CONCURRENCY="30")
    assert chosen.stdout.strip().splitlines()[-1].split() == ["threads", "30"]
