"""The API role matrix's event-stream rows (tables in tests/api/role_matrix/, the check in
tests/api/test_role_matrix.py): the stream reads what was committed, from another thread, so each
case builds and commits a world of its own."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_role_matrix import Case, check_case, matrix_cases
from tests.support.role_world import build_world


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", matrix_cases(needs_commits=True))
def test_api_role_matrix_of_streams(case: Case, settings: Any) -> None:
    check_case(case, build_world(case.visibility), settings)
