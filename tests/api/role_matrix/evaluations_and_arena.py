"""The API role matrix's rows for evaluations and their suites, and for the arena: comparisons,
their votes and the leaderboard."""

from __future__ import annotations

from typing import Any

from creations.arena.models import Comparison, Vote
from creations.evaluations.models import Evaluation, Suite
from tests.api.role_matrix.rows import (
    DELETE,
    FORBIDDEN,
    GET,
    NOT_FOUND,
    POST,
    UNAUTHORIZED,
    Answer,
    Row,
    Rule,
    creators_only,
    members_only,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, SPARE_SUITE, World, sees


def comparison(for_creators: Answer, for_viewers: Answer) -> Rule:
    """The world's comparison (its contestant A is the world's creation): for the workspace's members
    who see the creation, a public one's outsiders excepted; those who may start runs vote."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if who not in MEMBERS or not sees(who, visibility):
            return NOT_FOUND
        return for_creators if who in CREATORS else for_viewers

    return rule


def _contestant_models(world: World) -> dict[str, Any]:
    return {
        "brief": "a poster",
        "model_endpoint_ids": [c.model_endpoint_id for c in world.comparison.contestants.all()],
    }


def cancel_comparison(who: str, visibility: str) -> Answer:
    """Owners and admins may cancel any comparison, members the ones they made (this one is the
    author's); every contestant of the world's has ended, so those who may are told so (409)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS or not sees(who, visibility):
        return NOT_FOUND
    return Answer(409) if who in MANAGERS else FORBIDDEN


def _more_comparisons(world: World) -> bool:
    return Comparison.objects.exclude(pk=world.comparison.pk).exists()


def _voted(world: World) -> bool:
    return Vote.objects.filter(comparison=world.comparison).exists()


ROWS = [
    # Evaluations: every member reads; those who may start runs upload suites and start evaluations;
    # the world's evaluation is the member's, so the member, owners and admins cancel it.
    Row(GET, "/api/v1/workspaces/{slug}/suites", members_only(Answer(200))),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/suites",
        creators_only(Answer(422)),  # a CSV is no task file: refused, saying which line
        body={"tasks": "suite.jsonl"},
        multipart=True,
        writes=True,
        changed=lambda world: Suite.objects.count() > 1,
    ),
    # The spare suite is the member's, with no evaluation: the member, owners and admins delete it.
    Row(
        DELETE,
        "/api/v1/workspaces/{slug}/suites/{suite_id}",
        creators_only(Answer(204, changed=True)),
        writes=True,
        changed=lambda world: not Suite.objects.filter(name=SPARE_SUITE).exists(),
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/evaluations",
        creators_only(Answer(201, changed=True)),
        body=lambda world: {
            "suite_id": world.evaluation.suite_id,
            "model_endpoint_ids": [world.endpoint.pk],
            "modes": "plain",
        },
        writes=True,
        changed=lambda world: Evaluation.objects.count() > 1,
    ),
    Row(GET, "/api/v1/evaluations/{evaluation_id}", members_only(Answer(200))),
    Row(GET, "/api/v1/evaluations/{evaluation_id}/results", members_only(Answer(200))),
    Row(
        POST,
        "/api/v1/evaluations/{evaluation_id}/cancel",
        creators_only(Answer(202, changed=True)),
        writes=True,
        changed=lambda world: Evaluation.objects.filter(pk=world.evaluation.pk, status="cancelled").exists(),
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/comparisons",
        creators_only(Answer(201, changed=True)),
        body=_contestant_models,
        writes=True,
        changed=_more_comparisons,
    ),
    Row(GET, "/api/v1/comparisons/{comparison_id}", comparison(Answer(200), Answer(200)), per_creation=True),
    Row(
        POST,
        "/api/v1/comparisons/{comparison_id}/votes",
        comparison(Answer(201, changed=True), FORBIDDEN),
        body={"winner": "A"},
        writes=True,
        per_creation=True,
        changed=_voted,
    ),
    Row(POST, "/api/v1/comparisons/{comparison_id}/cancel", cancel_comparison, writes=True, per_creation=True),
    Row(GET, "/api/v1/workspaces/{slug}/leaderboard", members_only(Answer(200))),
]
