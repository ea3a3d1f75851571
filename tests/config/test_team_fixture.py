"""The `team` fixture inserts its people and workspaces at once; what it leaves must be what the
platform's own sign-up and workspace services leave, or thousands of tests would start from a world
no person could reach."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.db import transaction
from django.db.models import Model

from tests.support.fixtures.accounts import PASSWORD, Team, team_inserted_at_once, team_made_by_the_services

# Set from the clock or the sequences: never the same twice.
VOLATILE = {"created_at", "updated_at", "date_joined", "last_login"}


def _value(row: Model, field: Any) -> object:
    if field.name == "password":
        return row.check_password(PASSWORD)  # type: ignore[attr-defined]  # hashes are salted
    if field.is_relation:
        return str(getattr(row, field.name))
    return getattr(row, field.attname)


def _every_row() -> dict[str, list[str]]:
    """Every row of every table, without its ids and times, related rows by name."""
    rows = {}
    for model in apps.get_models():
        fields = [f for f in model._meta.concrete_fields if not f.primary_key and f.name not in VOLATILE]
        rows[model._meta.label] = sorted(repr([_value(row, f) for f in fields]) for row in model._default_manager.all())
    return rows


def _who(team: Team) -> dict[str, object]:
    return {
        "workspace": team.workspace.slug,
        "people": [team.owner.username, team.member.username, team.viewer.username, team.outsider.username],
        "roles": {m.user.username: m.role for m in team.workspace.memberships.select_related("user")},
    }


@pytest.mark.django_db
def test_the_team_fixture_leaves_exactly_what_the_services_leave() -> None:
    with transaction.atomic():
        by_services = team_made_by_the_services()
        expected_rows, expected_team = _every_row(), _who(by_services)
        transaction.set_rollback(True)
    assert _every_row()["auth.User"] == [], "the services' team was not rolled back"

    at_once = team_inserted_at_once()

    assert _who(at_once) == expected_team
    assert _every_row() == expected_rows
    assert expected_team["roles"] == {"alice": "owner", "bob": "member", "vera": "viewer"}


@pytest.mark.django_db
def test_a_team_whose_names_are_taken_is_made_by_the_services() -> None:
    from tests.support.factories import WorkspaceFactory

    WorkspaceFactory.create(name="Studio", slug="studio")

    team = team_inserted_at_once()

    assert team.workspace.slug == "studio-2"
    assert team.owner.check_password(PASSWORD)
