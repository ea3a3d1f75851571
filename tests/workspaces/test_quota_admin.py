"""Staff set a workspace's quotas in the admin: absurd values are refused on
their field, and a quota below current use is saved with a warning."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from creations.usage.ledger import usage_record_write
from tests.support.factories import make_run
from tests.support.fixtures.accounts import Team
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def staff_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def form(workspace: Workspace, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": workspace.name,
        "slug": workspace.slug,
        "quota_concurrent_runs": workspace.quota_concurrent_runs,
        "quota_month_tokens": workspace.quota_month_tokens,
        "quota_month_sandbox_seconds": workspace.quota_month_sandbox_seconds,
        "quota_storage_bytes": workspace.quota_storage_bytes,
        "run_max_steps": workspace.run_max_steps,
        "run_max_seconds": workspace.run_max_seconds,
        "run_max_tokens": workspace.run_max_tokens,
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("quota_concurrent_runs", "0", "positive"),
        ("quota_concurrent_runs", "5000", "zero too many"),
        ("quota_month_tokens", "-5", "greater than or equal to 0"),
        ("quota_month_tokens", str(10**13), "zero too many"),
        ("quota_storage_bytes", "abc", "whole number"),
    ],
)
def test_absurd_quotas_are_refused_on_their_field(team: Team, field: str, value: str, message: str) -> None:
    url = reverse("admin:workspaces_workspace_change", args=[team.workspace.pk])

    response = staff_client().post(url, form(team.workspace, **{field: value}))

    assert response.status_code == 200  # the form again, with its errors
    errors = response.context["adminform"].form.errors
    assert message in " ".join(errors[field])
    team.workspace.refresh_from_db()
    assert str(getattr(team.workspace, field)) != value


def test_a_quota_below_current_use_is_saved_with_a_warning(team: Team) -> None:
    run = make_run(team, status="succeeded", finished_at=timezone.now(), prompt_tokens=4000, completion_tokens=1000)
    usage_record_write(run_id=run.pk)
    url = reverse("admin:workspaces_workspace_change", args=[team.workspace.pk])

    response = staff_client().post(url, form(team.workspace, quota_month_tokens="1000"), follow=True)

    team.workspace.refresh_from_db()
    assert team.workspace.quota_month_tokens == 1000
    page = response.content.decode()
    assert "The model tokens per month quota is below current use (5,000 used this month)" in page
    assert "it applies to new runs" in page
