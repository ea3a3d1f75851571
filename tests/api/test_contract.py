"""The API against its own OpenAPI schema (schemathesis): for every operation, examples
that fit the schema and examples that break it, sent with a real token through the
real Django stack. No answer may be a 5xx, and every answer must be one the schema
declares, with the declared body and content type; so a client generated from
/api/v1/openapi.json can trust it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from creations.models import Run
from tests.support.api import token_for
from tests.support.factories import ModelEndpointFactory, RunFactory
from tests.support.fixtures.accounts import Team

EXAMPLES_PER_OPERATION = 30


# Loaded when the tests are collected: the schema view needs no database.
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


# The event stream reads on threads of its own, so it sees only committed rows. Every other
# operation is tried inside a transaction rolled back after it, which is much quicker than emptying
# every table after each one.
READS_ON_THREADS_OF_ITS_OWN = "/events/stream"


@pytest.fixture
def _connection_kept_between_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Django closes the database connection when a request ends; inside a test that
    would end the test's own transaction, so (as Django's test client does) not now."""
    label = getattr(request.node, "operation_label", None) or ""
    if label.endswith(READS_ON_THREADS_OF_ITS_OWN):
        request.node.add_marker(pytest.mark.django_db(transaction=True))  # read as the database is set up
    request.getfixturevalue("db")
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(
    _connection_kept_between_requests: None, team: Team, settings: Any, platform_on_own_redis: str
) -> dict[str, Any]:
    """A workspace with a finished run in it, and a token of a member who may write there. Runs it
    starts are committed, so their wake-ups go out: to a Redis of this test's own."""
    settings.API_RATE_LIMIT_PER_MINUTE = 100_000
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 100_000
    settings.RATE_LIMIT_SUBMISSIONS_PER_ADDRESS_PER_MINUTE = 100_000
    # Schemathesis tries every operation with made-up tokens too; past ten a minute from one address
    # the API rightly answers 429 to them (tests/api/test_auth.py), not the 401 this check expects.
    settings.API_INVALID_TOKENS_PER_ADDRESS_PER_MINUTE = 100_000
    # With a model of the workspace, so a refine of it queues a version (the demo model refines
    # only what it has recordings of).
    run = RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__model_endpoint=ModelEndpointFactory.create(workspace=team.workspace),
        finished=True,
    )
    return {"token": token_for(team.member), "slug": team.workspace.slug, "run": run}


def _aim_at_real_objects(case: Any, world: dict[str, Any]) -> None:
    """Random slugs and ids only ever find nothing: half the time, address the world's own
    objects instead, so the operations' real work is exercised too."""
    parameters = case.path_parameters or {}
    if "slug" in parameters and isinstance(parameters["slug"], str) and len(parameters["slug"]) % 2 == 0:
        parameters["slug"] = world["slug"]
    for name in ("id", "run_id", "artifact_id"):
        value = parameters.get(name)
        if isinstance(value, int) and value % 2 == 0:
            run: Run = world["run"]
            parameters[name] = run.pk


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation_keeps_to_its_schema(case: Any, world: dict[str, Any]) -> None:
    _aim_at_real_objects(case, world)
    case.call_and_validate(
        headers={"Authorization": f"Bearer {world['token']}"},
        # A request that fits the schema may still be refused for what it means (a blank brief,
        # a model id or cursor that names nothing): that is a 4xx with a problem, not a defect.
        excluded_checks=[positive_data_acceptance],
    )
