"""Shared by the page tests (tests/creations/web/): a signed-in client, and a finished run with files."""

from typing import Any

from django.test import Client

from creations.models import Run
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.media_samples import png_bytes


def signed_in(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def a_run(team: Team, **kwargs: Any) -> Run:
    outputs = kwargs.pop(
        "outputs", [Output("poster.png", png_bytes()), Output("notes.md", b"# Notes\n\nHello *there*")]
    )
    return finished_run(workspace=team.workspace, author=team.owner, outputs=outputs, **kwargs)
