"""What a web process loads at start. Three client libraries cost a web or management process much of a
second of CPU at every start between them, for work it never does there: `openai` (a model is called
by the agent's worker, a plain evaluation task and the "Test connection" button), the Docker client
(sandboxes are started by workers) and boto3 (needed only where files are stored on S3, and there
loaded by the storage itself). Each is loaded where it is used. Likewise daphne's server and Twisted's
reactor: only the web process (daphne itself) serves HTTP, so they are no installed app that every
worker, beat and management command would load first.

The long-lived ones, daphne and a worker, load what they serve from as they start and then freeze it
(config/startup_objects.py), so that the garbage collector's full passes skip it."""

import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from celery.signals import worker_process_init, worker_ready
from celery.utils.dispatch import Signal
from cryptography.fernet import Fernet

from creations.runs.tasks import warm_up_for_runs

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


# The web process as daphne starts it, then what a full collection would still walk.
WEB_PROCESS_FROZEN = """
import gc, sys
import django
django.setup()
import config.asgi
print(gc.get_freeze_count(), len(gc.get_objects()), "creations.web.views" in sys.modules, "api.v1" in sys.modules)
"""

# A prefork worker's child as Celery starts it: the task modules, then worker_process_init. (Not
# worker_ready: its other receivers start the host's keeper, whose janitor would sweep this machine's
# sandboxes against a database that knows none of the runs other tests have going.)
WORKER_CHILD_STARTED = """
import gc, sys
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
from celery.signals import worker_process_init
worker_process_init.send(sender=None)
print(gc.get_freeze_count(), len(gc.get_objects()), "openai" in sys.modules)
"""


def _python(program: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "x" * 50,
        "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "DATABASE_URL": os.environ.get("DATABASE_URL", "postgres://atelier:atelier@127.0.0.1:5432/atelier"),
        **extra_env,
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


def test_a_web_process_keeps_what_it_loaded_at_start_out_of_full_collections() -> None:
    """Every page and API operation loaded, then frozen: a full collection walks only what the
    process made since, instead of stopping daphne's event loop for 100 ms or more."""
    result = _python(WEB_PROCESS_FROZEN)
    assert result.returncode == 0, result.stderr
    frozen, tracked, pages_loaded, api_loaded = result.stdout.split()
    assert (pages_loaded, api_loaded) == ("True", "True"), "the URLconf was not loaded before the freeze"
    assert int(frozen) > 50_000, f"only {frozen} objects frozen"
    assert int(tracked) < int(frozen) // 100, f"{tracked} objects still walked by a full collection"


def test_a_worker_loads_the_model_client_and_freezes_before_its_first_run() -> None:
    result = _python(WORKER_CHILD_STARTED, SANDBOX_POOL_SIZE="0")  # no warm pool: it would start sandboxes
    assert result.returncode == 0, result.stderr
    frozen, tracked, model_client_loaded = result.stdout.split()
    assert model_client_loaded == "True", "the first run would import the model client library itself"
    assert int(frozen) > 50_000, f"only {frozen} objects frozen"
    assert int(tracked) < int(frozen) // 100, f"{tracked} objects still walked by a full collection"


@pytest.mark.parametrize("signal", [worker_ready, worker_process_init], ids=["worker_ready", "worker_process_init"])
def test_both_kinds_of_worker_warm_up(signal: Signal) -> None:
    """A worker with threads (as deployed) hears worker_ready; each child of a prefork one hears
    worker_process_init."""
    receivers = [r() if isinstance(r, weakref.ReferenceType) else r for _, r in signal.receivers]
    assert warm_up_for_runs in receivers
