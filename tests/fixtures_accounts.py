"""People for tests: an owner, a team member and an outsider (as healthchecks does)."""

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User

from workspaces.models import Role, Workspace
from workspaces.services import membership_add, workspace_create


@dataclass
class Team:
    workspace: Workspace
    owner: User
    member: User
    viewer: User
    outsider: User


PASSWORD = "correct horse battery"


def make_user(username: str, password: str = PASSWORD) -> User:
    return User.objects.create_user(username=username, email=f"{username}@example.com", password=password)


@pytest.fixture
def team(db: None) -> Team:
    owner = make_user("alice")
    member = make_user("bob")
    viewer = make_user("vera")
    outsider = make_user("mallory")
    workspace = workspace_create(name="Studio", owner=owner)
    membership_add(workspace=workspace, user=member, role=Role.MEMBER)
    membership_add(workspace=workspace, user=viewer, role=Role.VIEWER)
    return Team(workspace=workspace, owner=owner, member=member, viewer=viewer, outsider=outsider)
