"""What each role gets from every API operation, with a personal access token
(the browser's matrix: tests/config/test_role_matrix.py).

The operations come from the API's own OpenAPI schema, so a new operation with no
row in tests/api/role_matrix/ fails `test_every_operation_has_a_row` until someone
writes down who may call it. Each row says what each role gets, on the role matrix's
world (a workspace with one creation that is public, workspace-visible or private,
written by another member: tests.support.role_world): a status code, whether a list
names the world's creation or workspace, and, for a write, whether the change took
place. Write operations are also tried with a read-only token: refused (403)
whoever holds it, before anything is looked up, and nothing changed.

The rows are kept by area of the product, one module each, and gathered into cases in
tests.api.role_matrix.cases; here each case's request is made and its answer checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from api.models import TokenScope
from api.v1 import api
from tests.api.role_matrix.cases import ROWS, Case, matrix_cases, url_for
from tests.api.role_matrix.rows import DELETE, GET, PATCH, PUT, Answer
from tests.support.api import ApiClient
from tests.support.role_world import World, token_of, world_for_case


def _schema_operations() -> set[tuple[str, str]]:
    paths = api.get_openapi_schema()["paths"]
    return {(method, path) for path, operations in paths.items() for method in operations}


def test_every_operation_has_a_row() -> None:
    operations = _schema_operations()
    rows = {(row.method, row.path) for row in ROWS}
    missing = sorted(f"{m.upper()} {p}" for m, p in operations - rows)
    assert not missing, f"no row says who may call these operations; add one each: {missing}"
    stale = sorted(f"{m.upper()} {p}" for m, p in rows - operations)
    assert not stale, f"rows name operations the API no longer has: {stale}"


@pytest.mark.django_db
@pytest.mark.parametrize("case", matrix_cases(needs_commits=False))
def test_api_role_matrix(case: Case, kept_world: World, kept_world_media: Path, settings: Any) -> None:
    settings.MEDIA_ROOT = kept_world_media
    check_case(case, world_for_case(kept_world, case.visibility), settings)


def _client(world: World, who: str, *, read_token: bool) -> ApiClient:
    if who not in world.people:
        return ApiClient(None)
    return ApiClient(token_of(world, who, TokenScope.READ if read_token else TokenScope.WRITE))


def check_case(case: Case, world: World, settings: Any) -> None:
    """The row's request as the case's person, and what they got against what the row expects."""
    settings.API_RATE_LIMIT_PER_MINUTE = 10_000
    settings.RATE_LIMIT_SUBMISSIONS_PER_MINUTE = 10_000
    if case.row.prepare is not None:
        case.row.prepare(world)
    client = _client(world, case.who, read_token=case.read_token)
    url = url_for(case.row, world)
    if case.row.method == GET:
        response = client.get(url)
    elif case.row.method in (PUT, PATCH, DELETE):
        sent = case.row.body(world) if callable(case.row.body) else case.row.body
        response = client.send(case.row.method, url, sent)
    elif case.row.multipart:
        assert isinstance(case.row.body, dict)
        files = {name: SimpleUploadedFile(value, b"a,b\n1,2\n") for name, value in case.row.body.items()}
        response = client.post(url, files, multipart=True)
    else:
        sent = case.row.body(world) if callable(case.row.body) else case.row.body
        response = client.post(url, sent or {})
    body = b"".join(response) if response.streaming else response.content
    expected = case.expected
    got = Answer(
        response.status_code,
        listed=case.row.mark(world).encode() in body if expected.listed is not None else None,
        changed=case.row.changed(world) if case.row.changed else False,
    )
    assert got == expected, f"{case.id}: expected {expected}, got {got}: {body[:300]!r}"
