"""What each role gets from every URL the platform serves (the live stream: test_role_matrix_websocket.py).

The URLs come from the URLconf itself (tests.support.urlconf), so a new view with
no row in tests/config/role_matrix/ fails `test_every_url_has_a_row_in_the_matrix`
until someone writes down who may use it. Each row says, per HTTP method, what each
role gets, on a workspace with one creation that is public, workspace-visible or
private.

Read a row's cell as what the person notices: a page (200), the login page (302
to login), "not found" (404: the platform hides what you may not see), "forbidden"
(403), "method not allowed" (405), or a redirect to a named page. For a write,
`done` means the change took place and `refused` that the page explains why it
did not; either way the row's `changed` check confirms it in the database.

The world each case starts from, and how URL arguments address its objects, are in
tests.support.role_world; the outcomes and the per-role rules the rows use, in
tests.support.role_outcomes. The rows are kept by area of the product, one module each
under tests/config/role_matrix/, and gathered here into one table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import Resolver404, resolve, reverse

from tests.config.role_matrix import (
    accounts_and_workspaces,
    creations_and_runs,
    sharing_and_conversation,
    webhooks_schedules_and_evaluations,
)
from tests.config.role_matrix.rows import POST, Row
from tests.support.role_outcomes import Outcome
from tests.support.role_world import (
    ROLES,
    TITLE,
    VISIBILITIES,
    WORKSPACE,
    World,
    sign_in_as,
    url_kwargs,
    world_for_case,
)
from tests.support.urlconf import Route, http_routes, served_urlconfs

pytestmark = pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")

# Includes that have no row, and why: neither serves workspace data, and both are Django's own.
NOT_IN_THE_MATRIX = {
    "admin": "Django's admin site: for staff accounts only, guarded by Django's is_staff check, not by workspace roles",
    "django.contrib.auth.urls": "Django's login, logout and password pages: open to everyone by design",
    "api.urls": "the API has a matrix of its own, with token auth, over every operation: tests/api/test_role_matrix.py",
}

# Every URL's row, whichever area's module lists it: what the tests run and what the check that
# every URL has a row reads.
ROWS: list[Row] = [
    *accounts_and_workspaces.ROWS,
    *creations_and_runs.ROWS,
    *sharing_and_conversation.ROWS,
    *webhooks_schedules_and_evaluations.ROWS,
]

# Cases where the platform contradicts the rules in ROWS: each must fail until it is fixed.
KNOWN_BUGS: dict[tuple[str, str, str, str], str] = {}


# --- the tests ----------------------------------------------------------------------------


@functools.cache  # the URLconfs do not change while the tests run
def _routes_by_name() -> dict[str, Route]:
    return {r.name: r for r in http_routes(skip_includes=frozenset(NOT_IN_THE_MATRIX))}


def test_every_url_has_a_row_in_the_matrix() -> None:
    routes = http_routes(skip_includes=frozenset(NOT_IN_THE_MATRIX))
    names = [r.name for r in routes]
    assert len(names) == len(set(names)), f"URL names used twice (reverse() would pick one): {sorted(names)}"
    rows = {row.name for row in ROWS}
    missing = sorted(f"{r.name} ({r.route})" for r in routes if r.name not in rows)
    assert not missing, f"no row in ROWS says who may use these URLs; add one each: {missing}"
    stale = sorted(rows - set(names))
    assert not stale, f"ROWS names URLs the URLconf no longer has; remove or rename them: {stale}"


@dataclass(frozen=True)
class Case:
    row: Row
    method: str
    who: str
    visibility: str

    @property
    def expected(self) -> Outcome:
        return self.row.expect[self.method](self.who, self.visibility)

    @property
    def id(self) -> str:
        label = f"({self.row.label})" if self.row.label else ""
        on = f"-{self.visibility}" if self.row.per_creation else ""
        return f"{self.row.name}{label}-{self.method}-{self.who}{on}"


def _cases() -> list[Any]:
    cases = []
    for row in ROWS:
        for method in row.expect:
            for who in ROLES:
                for visibility in VISIBILITIES if row.per_creation else (WORKSPACE,):
                    case = Case(row, method, who, visibility)
                    bug = KNOWN_BUGS.get((row.name, method, who, visibility))
                    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
                    cases.append(pytest.param(case, id=case.id, marks=marks))
    return cases


def _redirect_target(location: str) -> str:
    path = urlsplit(location).path
    try:
        return resolve(path).url_name or path
    except Resolver404:
        return path


def _body(response: Any) -> bytes:
    """The whole body: a streamed one is read to its end, so an error half-way fails the case."""
    return b"".join(response) if response.streaming else response.content


@pytest.mark.django_db
@pytest.mark.parametrize("case", _cases())
def test_role_matrix(
    case: Case, client: Client, kept_world: World, kept_world_media: Path, settings: Any, request: pytest.FixtureRequest
) -> None:
    if case.row.name in ("healthz", "healthz-workers"):  # they report on Redis: give them one that is surely up
        request.getfixturevalue("platform_on_own_redis")
    settings.MEDIA_ROOT = kept_world_media
    world = world_for_case(kept_world, case.visibility)
    actor = world.people.get(case.who)
    if actor is not None:
        sign_in_as(client, world, case.who)
    route = _routes_by_name()[case.row.name]
    kwargs = url_kwargs(route, world, actor=actor, target=case.row.target)
    url = reverse(route.name, urlconf=route.urlconf, kwargs=kwargs)
    host = served_urlconfs()[route.urlconf]
    headers = {"host": host} if host else {}
    if case.method == POST:
        response = client.post(url, case.row.data, headers=headers)
    else:
        response = client.get(url, headers=headers)
    body = _body(response)
    expected = case.expected
    got = Outcome(
        response.status_code,
        to=_redirect_target(response["Location"]) if 300 <= response.status_code < 400 else None,
        changed=case.row.changed(world, actor) if case.row.changed else False,
        listed=TITLE.encode() in body if expected.listed is not None else None,
    )
    on = f" on a {case.visibility} creation" if case.row.per_creation else ""
    assert got == expected, f"{case.who} {case.method} {url}{on}: expected {expected}, got {got}"
