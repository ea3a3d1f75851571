"""Calling the API as a script would: a personal access token in the Authorization header."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from api.models import TokenScope
from api.tokens import token_create


def token_for(user: User, *, scope: str = TokenScope.WRITE, expires_in_days: int | None = None) -> str:
    return token_create(user=user, name="tests", scope=scope, expires_in_days=expires_in_days).raw


class ApiClient:
    """Django's test client with a bearer token and no session: what a script sends."""

    def __init__(self, raw_token: str | None) -> None:
        self.client = Client(enforce_csrf_checks=True)
        self.headers = {"Authorization": f"Bearer {raw_token}"} if raw_token else {}

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, headers={**self.headers, **kwargs.pop("headers", {})}, **kwargs)

    def post(self, path: str, data: Any = None, *, multipart: bool = False, **kwargs: Any) -> Any:
        """JSON unless `multipart` (file uploads)."""
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if not multipart:
            kwargs.setdefault("content_type", "application/json")
        return self.client.post(path, data, headers=headers, **kwargs)

    def send(self, method: str, path: str, data: Any = None, **kwargs: Any) -> Any:
        """PUT, PATCH or DELETE, with a JSON body if `data` is given."""
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if data is not None:
            kwargs.setdefault("content_type", "application/json")
        return getattr(self.client, method.lower())(path, data, headers=headers, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Any:
        return self.client.delete(path, headers={**self.headers, **kwargs.pop("headers", {})}, **kwargs)


def api_as(user: User, *, scope: str = TokenScope.WRITE) -> ApiClient:
    return ApiClient(token_for(user, scope=scope))

