"""The API role matrix's cases: every area's rows in one table, a case per row, role, visibility
and token scope, and the URL a row's path names in the role matrix's world."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.api.role_matrix import (
    comments_and_notifications,
    evaluations_and_arena,
    sharing_webhooks_and_schedules,
    workspaces_and_runs,
)
from tests.api.role_matrix.rows import FORBIDDEN, Answer, Row
from tests.support.role_world import (
    ANONYMOUS,
    MEMBER,
    ROLES,
    VISIBILITIES,
    WORKSPACE,
    World,
    spare_suite,
)

# Every operation's row, whichever area's module lists it: what the tests run and what the check
# that every operation has a row reads.
ROWS: list[Row] = [
    *workspaces_and_runs.ROWS,
    *sharing_webhooks_and_schedules.ROWS,
    *evaluations_and_arena.ROWS,
    *comments_and_notifications.ROWS,
]


# --- addressing the world's objects ---------------------------------------------------------

ARGUMENTS: dict[tuple[str, str] | str, Callable[[World], Any]] = {
    ("runs", "run_id"): lambda w: w.run.pk,
    ("artifacts", "artifact_id"): lambda w: w.artifact.pk,
    ("compare", "other_run_id"): lambda w: w.run.pk,  # the world's one run, with itself: nothing changed
    ("share-links", "share_link_id"): lambda w: w.share_link.pk,
    ("webhooks", "webhook_id"): lambda w: w.webhook.pk,
    ("comments", "comment_id"): lambda w: w.comment.pk,
    ("notifications", "notification_id"): lambda w: w.notification.pk,
    ("evaluations", "evaluation_id"): lambda w: w.evaluation.pk,
    ("suites", "suite_id"): lambda w: spare_suite(w.workspace, w.people[MEMBER]).pk,
    ("comparisons", "comparison_id"): lambda w: w.comparison.pk,
    "slug": lambda w: w.workspace.slug,
}


def url_for(row: Row, world: World) -> str:
    def value(match: re.Match[str]) -> str:
        segment, name = match.group(1), match.group(2)
        argument = ARGUMENTS.get((segment, name)) or ARGUMENTS.get(name)
        if argument is None:
            pytest.fail(f"{row.path}: no value for {{{name}}} (after {segment!r}/); add it to ARGUMENTS.")
        return f"{segment}/{argument(world)}"

    return re.sub(r"([^/{}]*)/\{(\w+)\}", value, row.path)


@dataclass(frozen=True)
class Case:
    row: Row
    who: str
    visibility: str
    read_token: bool = False

    @property
    def expected(self) -> Answer:
        if self.read_token:  # decided by the token before anything is looked up: it tells nothing
            return FORBIDDEN
        return self.row.expect(self.who, self.visibility)

    @property
    def id(self) -> str:
        on = f"-{self.visibility}" if self.row.per_creation else ""
        token = "-read-token" if self.read_token else ""
        return f"{self.row.id}-{self.who}{on}{token}"


def matrix_cases(*, needs_commits: bool) -> list[Any]:
    cases = []
    for row in ROWS:
        if row.needs_commits != needs_commits:
            continue
        for visibility in VISIBILITIES if row.per_creation else (WORKSPACE,):
            for who in ROLES:
                cases.append(Case(row, who, visibility))
                if row.writes and who != ANONYMOUS:
                    cases.append(Case(row, who, visibility, read_token=True))
    return [pytest.param(case, id=case.id) for case in cases]
