from typing import Any

from django.http import HttpRequest

from workspaces.selectors import workspaces_for_user


def workspaces(request: HttpRequest) -> dict[str, Any]:
    """The signed-in user's workspaces, for the navigation's switcher."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_workspaces": []}
    return {"nav_workspaces": list(workspaces_for_user(user=user))}
