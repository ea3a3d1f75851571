"""What a web process loads at start. Three client libraries cost a web or management process much of a
second of CPU at every start between them, for work it never does there: `openai` (a model is called
by the agent's worker, a plain evaluation task and the "Test connection" button), the Docker client
(sandboxes are started by workers) and boto3 (needed only where files are stored on S3, and there
loaded by the storage itself). Each is loaded where it is used. Likewise daphne's server and Twisted's
reactor: only the web process (daphne itself) serves HTTP, so they are no installed app that every
worker, beat and management command would load first."""

import os
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]

# Django set up, then what a web process serves from: the URLs (every page and API operation) and
# the ASGI application (the websockets).
WEB_PROCESS_START = """
import sys
import django
django.setup()
import config.urls
import config.asgi
print(sorted(name for name in sys.modules if name.split(".")[0] in {"openai", "docker", "boto3", "botocore"}))
"""

CALLING_THE_CHECK = """
import sys
import django
django.setup()
from sandboxes.agent.endpoint_check import check_endpoint
print("openai" in sys.modules)
"""

# What `celery worker` and `celery beat` load: Django, then the Celery app with every task module.
WORKER_PROCESS_START = """
import sys
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
print(sorted(name for name in sys.modules if name.split(".")[0] in {"daphne", "twisted", "autobahn"}))
"""


def _python(program: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "x" * 50,
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgres://atelier:atelier@127.0.0.1:5432/atelier"),
    }
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_web_process_starts_without_the_model_docker_or_s3_client_libraries() -> None:
    result = _python(WEB_PROCESS_START)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_connection_check_still_brings_the_library_when_asked() -> None:
    result = _python(CALLING_THE_CHECK)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_a_worker_process_starts_without_daphne_s_server_or_twisted() -> None:
    result = _python(WORKER_PROCESS_START)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
