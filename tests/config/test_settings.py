"""Settings come from the environment; bad values stop start-up, naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
SET_BY_TESTS = {"DJANGO_SETTINGS_MODULE", "SECURE_COOKIES", "SECRET_KEY", "FIELD_ENCRYPTION_KEYS"}


def _process_environment(env: dict[str, str]) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in SET_BY_TESTS}
    clean.update(
        {
            "SECRET_KEY": "x" * 50,
            "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            **env,
        }
    )
    return clean


def _start(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=_process_environment(env), capture_output=True, text=True, timeout=60
    )


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _start(["manage.py", *args], env)


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`code` in a process of the checkout that starts as every process does, from the settings the
    environment makes; without the apps `manage.py shell` loads first (most of a second of CPU each)."""
    return _start(["-c", code], env)


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
        ("ARTIFACT_PAGE_HOSTS", "https://*.tile.openstreetmap.org"),
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


def test_it_requires_field_encryption_keys_outside_debug_and_says_how_to_make_one() -> None:
    result = manage("check", FIELD_ENCRYPTION_KEYS="", DEBUG="false")
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS" in result.stderr
    assert "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("backend", ["console", "locmem"])
def test_outside_debug_it_refuses_to_start_with_mail_that_reaches_nobody(backend: str) -> None:
    backend_path = f"django.core.mail.backends.{backend}.EmailBackend"
    result = manage("check", DEBUG="false", EMAIL_BACKEND=backend_path)
    assert result.returncode != 0
    assert "(atelier.E001) EMAIL_BACKEND is" in result.stderr
    assert "password resets and invitations would reach nobody" in result.stderr
    assert "EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend" in result.stderr  # what to set instead
    assert "Traceback" not in result.stderr
    if backend == "console":  # migrate, which the web runs before it serves, stops there too
        migrate = manage("migrate", "--check", DEBUG="false", EMAIL_BACKEND=backend_path)
        assert migrate.returncode != 0
        assert "atelier.E001" in migrate.stderr


def test_outside_debug_mail_goes_through_smtp_unless_told_otherwise() -> None:
    code = "from django.conf import settings as s; print(s.EMAIL_BACKEND)"
    production = python(code, DEBUG="false")
    assert production.stdout.strip().splitlines()[-1] == "django.core.mail.backends.smtp.EmailBackend"
    development = python(code, DEBUG="true")
    assert development.stdout.strip().splitlines()[-1] == "django.core.mail.backends.console.EmailBackend"


def test_it_starts_with_the_embedded_defaults(tmp_path: Path) -> None:
    result = manage(
        "check", DEBUG="true", SECRET_KEY="", FIELD_ENCRYPTION_KEYS="", DEVELOPMENT_SECRETS_DIR=str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


SHOW_SECRETS = "from django.conf import settings as s; print(s.SECRET_KEY, *s.FIELD_ENCRYPTION_KEYS)"


def development_secrets(checkout: Path) -> list[str]:
    """The signing and encryption keys a development process of `checkout` uses."""
    result = python(
        SHOW_SECRETS,
        DEBUG="true",
        SECRET_KEY="",
        FIELD_ENCRYPTION_KEYS="",
        DEVELOPMENT_SECRETS_DIR=str(checkout),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1].split()


def test_development_makes_its_secrets_once_per_checkout_readable_only_by_its_owner(tmp_path: Path) -> None:
    first = development_secrets(tmp_path / "one")
    secret_key, encryption_key = first
    assert len(secret_key) >= 50
    Fernet(encryption_key)  # a valid key of its own, not one derived from SECRET_KEY
    kept = {p.name: p for p in (tmp_path / "one").iterdir()}
    assert set(kept) == {"development-secret-key", "development-field-encryption-key"}
    assert kept["development-secret-key"].read_text().strip() == secret_key
    assert kept["development-field-encryption-key"].read_text().strip() == encryption_key
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in kept.values())
    assert development_secrets(tmp_path / "one") == first  # a restart keeps sessions and stored keys
    other = development_secrets(tmp_path / "two")
    # Never a constant shared by every checkout.
    assert other[0] != secret_key
    assert other[1] != encryption_key


def test_stored_api_keys_do_not_depend_on_the_signing_key(tmp_path: Path) -> None:
    def run(code: str, secret_key: str, checkout: Path) -> subprocess.CompletedProcess[str]:
        return manage(
            "shell",
            "-c",
            f"from workspaces.fields import decrypt, encrypt; print({code})",
            DEBUG="true",
            SECRET_KEY=secret_key,
            FIELD_ENCRYPTION_KEYS="",
            DEVELOPMENT_SECRETS_DIR=str(checkout),
        )

    encrypted = run("encrypt('sk-secret-123')", secret_key="a" * 50, checkout=tmp_path / "one")
    assert encrypted.returncode == 0, encrypted.stderr
    token = encrypted.stdout.strip().splitlines()[-1]
    decrypted = run(f"decrypt({token!r})", secret_key="b" * 50, checkout=tmp_path / "one")
    assert decrypted.stdout.strip().splitlines()[-1] == "sk-secret-123", decrypted.stderr
    # Another checkout's key cannot read it, and the error says which setting to look at.
    elsewhere = run(f"decrypt({token!r})", secret_key="a" * 50, checkout=tmp_path / "two")
    assert elsewhere.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS changed" in elsewhere.stderr


def test_production_settings_turn_on_secure_cookies() -> None:
    code = "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.DEBUG)"
    result = python(code, DEBUG="false")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == ["True", "True", "False"]


def test_the_worker_runs_each_run_in_a_thread_four_per_core_unless_told() -> None:
    code = "from config.celery import app; print(app.conf.worker_pool, app.conf.worker_concurrency)"
    default = python(code, DEBUG="true")
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip().splitlines()[-1].split() == ["threads", str(4 * (os.cpu_count() or 1))]
    chosen = python(code, DEBUG="true", WORKER_CONCURRENCY="30")
    assert chosen.stdout.strip().splitlines()[-1].split() == ["threads", "30"]


@pytest.mark.parametrize(
    ("debug", "artifact_origin", "starts"),
    [
        ("true", "http://localhost:8001", True),  # development: another port of the same host will do
        ("true", "http://localhost:8000", False),  # the platform's own origin
        ("false", "http://localhost:8001", False),  # production: cookies ignore ports
        ("false", "https://artifacts.example.net", True),
    ],
)
def test_the_artifact_origin_is_never_the_platform_s(debug: str, artifact_origin: str, starts: bool) -> None:
    result = manage("check", DEBUG=debug, SITE_URL="http://localhost:8000", ARTIFACT_ORIGIN=artifact_origin)
    assert (result.returncode == 0) is starts, result.stderr
    if not starts:
        assert "ARTIFACT_ORIGIN" in result.stderr
