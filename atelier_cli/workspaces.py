"""Which workspace a command works in when none is named: the caller's personal one."""

from __future__ import annotations

from atelier_cli.api_client import ApiClient
from atelier_cli.errors import CliError


def default_workspace_slug(client: ApiClient) -> str:
    workspaces = client.get("/workspaces")
    personal = [w["slug"] for w in workspaces if w.get("is_personal")]
    if personal:
        return str(personal[0])
    if workspaces:
        return str(workspaces[0]["slug"])
    raise CliError("You belong to no workspace yet; create one on the web, or name one with --workspace.")
