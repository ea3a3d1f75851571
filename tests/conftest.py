"""Suite-wide fixtures. Area-specific fixtures live in tests/support/fixtures/ (pytest plugins)."""

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devstack.databases import disconnect_others
from devstack.migrated_template import use_migrated_template
from tests.support import IN_CI, flush_retry
from tests.support.fixtures.workers import number_rows_for_worker, worker_number

pytest_plugins = [
    "tests.support.markers",  # docker, stack and browser markers from the fixtures a test uses
    "tests.support.garbage_collector",  # what collection made, frozen; full collections, rare
    "tests.support.fixtures.accounts",
    # --- plugins added by other areas below (sandbox, model, runs, browser) ---
    "tests.support.fixtures.model",  # agent area: the scripted OpenAI-compatible server
    "tests.support.fixtures.sandbox",  # sandboxes area: image, provider, sandbox
    "tests.support.fixtures.runs",  # runs area: a real Celery worker + beat + daphne (atelier_server, run_stack)
    "tests.support.fixtures.browser",  # web area: headless Chromium against the running stack (browser, web)
    "tests.support.fixtures.redis",  # a Redis server of a test's own
    "tests.support.fixtures.s3",  # storage: a real S3-compatible server (SeaweedFS)
    "tests.support.fixtures.docker_engine",  # a second Docker + gVisor engine: a stand-in for a second worker host
    "tests.support.fixtures.workers",  # under pytest-xdist, a Redis server of each worker's own
    "tests.support.fixtures.role_world",  # the role matrices' world, once per module
    "tests.support.fixtures.rate_limits",  # the rate limiter: counted per test, its clock held still
]


def pytest_configure(config: pytest.Config) -> None:
    flush_retry.install()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None, django_db_blocker: Any) -> None:
    """Each process's test database (a worker's, under pytest-xdist) is a copy of one migrated
    template, built by the first process that needs it: `make test` migrates once, not five times."""
    with django_db_blocker.unblock():
        use_migrated_template()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any, request: pytest.FixtureRequest) -> Iterator[None]:
    """pytest-django's test database, whose teardown cannot drop it while
    connections of other threads (Channels' sync-to-async pool, agent threads)
    are still open: end those first. Under pytest-xdist, numbered from a block of the worker's own."""
    number = worker_number(request.config)
    if number is not None:
        with django_db_blocker.unblock():
            number_rows_for_worker(number)
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock():
        disconnect_others()


@pytest.fixture(scope="session")
def _media_roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(autouse=True)
def _media_in_tmp(settings: Any, _media_roots: Path) -> None:
    """Each test stores files in a temporary media root: one folder for them all, as pytest's
    numbered folders are found by listing every entry of theirs, thousands of tests later."""
    settings.MEDIA_ROOT = Path(tempfile.mkdtemp(dir=_media_roots))


@pytest.fixture(autouse=True)
def _run_events_match_their_schema(settings: Any) -> None:
    """An event stored in a test that drifts from its schema fails the test, as in
    development (the stack's processes get the same in devstack.stack.PROCESS_ENV). A fixture, not
    test settings: those change only what makes tests fast."""
    settings.RUN_EVENT_SCHEMA_STRICT = True


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if IN_CI and terminalreporter.stats.get("skipped"):
        terminalreporter.write_line("CI: skipped tests are failures here (see above).", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # In CI a skip hides a broken feature: turn any skip into a failing exit.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if IN_CI and reporter is not None and reporter.stats.get("skipped"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
