"""Which workspace a command works in when none is named: the caller's personal one."""

from __future__ import annotations

from atelier_cli.answers import WORKSPACES
from atelier_cli.api_client import ApiClient
from atelier_cli.errors import CliError
from atelier_cli.exit_status import ExitStatus


def default_workspace_slug(client: ApiClient) -> str:
    workspaces = client.get("/workspaces", WORKSPACES)
    personal = [w.slug for w in workspaces if w.is_personal]
    if personal:
        return personal[0]
    if workspaces:
        return workspaces[0].slug
    raise CliError(
        "You belong to no workspace yet; create one on the web, or name one with --workspace.",
        exit_status=ExitStatus.NOT_FOUND,
    )
