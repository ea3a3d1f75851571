"""Redis is only the messenger: when it restarts mid-run (losing every key,
group and queued message), the run still finishes, an open page reconnects and
catches up with nothing missing, and a run whose queue message was lost still
runs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import redis

from creations.models import RunStatus
from devstack.redis_server import RedisServer
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_event, wait_for_final
from tests.support.wsclient import follow_stream

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def run_stack(
    atelier_server: AtelierServer,
    start_stack: Callable[..., AbstractContextManager[AtelierServer]],
    tmp_path_factory: pytest.TempPathFactory,
    settings: Any,
) -> Iterator[AtelierServer]:
    """A stack of the test's own, with a Redis of its own: with that Redis gone for a while, a worker on a
    busy machine was seen hanging in its reconnection, and tests after it on a shared stack waited in vain.
    The session's worker rests meanwhile: on the same test database it could take this stack's runs."""
    atelier_server.worker.stop()
    try:
        with start_stack(tmp_path_factory.mktemp("redis-outage-stack")) as server:
            settings.MEDIA_ROOT = server.media_root
            yield server
    finally:
        atelier_server.ensure_worker()


@pytest.fixture
def restartable_redis(run_stack: AtelierServer) -> Iterator[RedisServer]:
    assert run_stack.redis is not None
    yield run_stack.redis
    if not _answers(run_stack.redis.url):  # the test failed half-way: its stack stops with a Redis to stop
        run_stack.redis.start()


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def test_an_open_page_catches_up_with_nothing_missing_across_a_redis_restart(
    run_stack: AtelierServer,
    restartable_redis: RedisServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
) -> None:
    steps = [bash(f"echo step {i}; sleep 0.3", f"Step {i}.") for i in range(1, 11)] + [submit_reply("done")]
    endpoint = scripted_endpoint(team, scripted_model, steps)
    run = submit(team, endpoint)
    watched: dict[str, Any] = {}

    def watch() -> None:
        watched["events"], watched["reconnections"] = follow_stream(
            run_stack, run.pk, cookie=run_stack.cookie_for(team.member), timeout=180
        )

    watcher = threading.Thread(target=watch)
    watcher.start()
    wait_for_event(run, "step_started", step=3, logs=run_stack.logs)
    seen_before_restart = len(stored_events(run))
    restartable_redis.restart(down_for=1.5)
    watcher.join(timeout=200)
    run = wait_for_final(run, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    stored = stored_events(run)
    assert len(stored) > seen_before_restart  # the run went on after the restart
    received = watched["events"]
    assert [e["seq"] for e in received] == list(range(1, len(stored) + 1))  # each once, in order, no gap
    assert [{k: e[k] for k in ("seq", "kind", "payload")} for e in received] == stored
    assert received[-1]["payload"]["final"] is True


def test_a_run_whose_queue_message_was_lost_is_queued_again_and_runs(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash("echo hello"), submit_reply("done")])
    run_stack.kill_worker()
    try:
        run = submit(team, endpoint)
        redis.Redis.from_url(run_stack.redis_url).delete("celery")  # the broker forgot it, as a Redis crash would
    finally:
        run_stack.start_worker()
    run = wait_for_final(run, timeout=90, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    assert run.started_at is not None
    assert [e["payload"]["status"] for e in stored_events(run) if e["kind"] == "status"][-1] == "succeeded"
