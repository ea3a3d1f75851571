"""Writes for a workspace's model endpoints: add, edit, enable or disable,
delete, and "Test connection". Owners and admins only.

The key is write-only: it is stored encrypted, only its last four characters
are ever shown, and a new base URL needs the key entered again, so a stored
key is never sent to a host it was not typed for. Addresses are checked
against the platform's rules here for an early answer, and again on every
connection the worker makes (`sandboxes.agent.endpoint_addresses`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from sandboxes.agent.endpoint_addresses import EndpointAddressRefused, check_base_url_host
from workspaces.fields import SealedSecret
from workspaces.models import ModelEndpoint, Workspace
from workspaces.rate_limits import workspace_over_limit
from workspaces.services import WorkspaceRuleError, require_manager

if TYPE_CHECKING:
    from sandboxes.agent.endpoint_check import Verdict

EXTRA_BODY_MAX_BYTES = 16 * 1024
# The agent owns these: an endpoint's extra body may tune a request, not replace it.
EXTRA_BODY_RESERVED_KEYS = frozenset({"model", "messages", "tools", "tool_choice", "stream", "stream_options"})
KEY_HINT_MIN_LENGTH = 12  # shorter keys would give away too much of themselves
# Why a model whose stored key no configured key opens cannot be used, and what mends it.
KEY_UNREADABLE = (
    "Its stored API key cannot be decrypted (the key that encrypted it is no longer in FIELD_ENCRYPTION_KEYS); "
    "an owner or admin must enter the API key again on the workspace's Models page."
)


@dataclass(frozen=True)
class EndpointFields:
    """What a person typed; `api_key` empty means "keep the stored key"."""

    name: str
    base_url: str
    model: str
    api_key: str = ""
    extra_body: str = ""
    temperature: float | None = None
    max_tokens: int | None = None


def clean_base_url(raw: str) -> str:
    base_url = raw.strip()
    if len(base_url) > 500:
        raise WorkspaceRuleError("The address has at most 500 characters.", field="base_url")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WorkspaceRuleError(
            "Enter an http:// or https:// address, e.g. https://api.openai.com/v1.", field="base_url"
        )
    if parts.username or parts.password:
        raise WorkspaceRuleError(
            "Leave credentials out of the address; put the key in the API key field.", field="base_url"
        )
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise WorkspaceRuleError("The port in this address is not a number.", field="base_url") from None
    try:
        check_base_url_host(base_url, allow_private=settings.MODEL_ENDPOINT_ALLOW_PRIVATE)
    except EndpointAddressRefused as refused:
        raise WorkspaceRuleError(f"{refused}", field="base_url") from None
    return base_url.rstrip("/")


def clean_extra_body(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        if len(raw.encode()) > EXTRA_BODY_MAX_BYTES:
            raise WorkspaceRuleError("The extra request body is limited to 16 KB.", field="extra_body")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            raise WorkspaceRuleError(
                f"This is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno}).",
                field="extra_body",
            ) from None
    else:
        value = raw
    if not isinstance(value, dict):
        raise WorkspaceRuleError('Write a JSON object, e.g. {"top_p": 0.9}.', field="extra_body")
    reserved = sorted(EXTRA_BODY_RESERVED_KEYS & value.keys())
    if reserved:
        raise WorkspaceRuleError(f"The agent sets {', '.join(reserved)} itself; remove it here.", field="extra_body")
    return value


def _clean_text(value: str, *, field: str, label: str, max_length: int) -> str:
    value = (value or "").strip()
    if not value:
        raise WorkspaceRuleError(f"Enter the {label}.", field=field)
    if len(value) > max_length:
        raise WorkspaceRuleError(f"The {label} has at most {max_length} characters.", field=field)
    return value


def _apply(endpoint: ModelEndpoint, fields: EndpointFields) -> None:
    new_url = clean_base_url(fields.base_url)
    key = fields.api_key.strip()
    if endpoint.pk and new_url != endpoint.base_url and endpoint.api_key and not key:
        raise WorkspaceRuleError(
            "The address changed: enter the API key again, so the stored key is never sent to a new host.",
            field="api_key",
        )
    endpoint.name = _clean_text(fields.name, field="name", label="name", max_length=80)
    endpoint.model = _clean_text(fields.model, field="model", label="model name", max_length=200)
    endpoint.base_url = new_url
    endpoint.extra_body = clean_extra_body(fields.extra_body)
    if fields.temperature is not None and not 0 <= fields.temperature <= 2:
        raise WorkspaceRuleError("The temperature is between 0 and 2.", field="temperature")
    endpoint.temperature = 0.7 if fields.temperature is None else fields.temperature
    if fields.max_tokens is not None and not 1 <= fields.max_tokens <= 1_000_000:
        raise WorkspaceRuleError("Max tokens per reply is between 1 and 1,000,000.", field="max_tokens")
    endpoint.max_tokens = fields.max_tokens
    if key:
        endpoint.api_key = key
        endpoint.api_key_hint = key[-4:] if len(key) >= KEY_HINT_MIN_LENGTH else ""
    endpoint.checked_at, endpoint.check_verdict, endpoint.check_message = None, "", ""


def _save(endpoint: ModelEndpoint) -> ModelEndpoint:
    try:
        with transaction.atomic():
            endpoint.save()
    except IntegrityError:
        raise WorkspaceRuleError(
            f"This workspace already has a model called “{endpoint.name}”; choose another name.", field="name"
        ) from None
    return endpoint


def endpoint_create(*, workspace: Workspace, actor: User, fields: EndpointFields) -> ModelEndpoint:
    require_manager(workspace, actor)
    endpoint = ModelEndpoint(workspace=workspace)
    _apply(endpoint, fields)
    return _save(endpoint)


def endpoint_update(*, endpoint: ModelEndpoint, actor: User, fields: EndpointFields) -> ModelEndpoint:
    require_manager(endpoint.workspace, actor)
    _apply(endpoint, fields)
    return _save(endpoint)


def endpoint_set_enabled(*, endpoint: ModelEndpoint, actor: User, enabled: bool) -> ModelEndpoint:
    """A disabled endpoint leaves the model picker; runs already going finish with it."""
    require_manager(endpoint.workspace, actor)
    endpoint.is_enabled = enabled
    endpoint.save(update_fields=["is_enabled"])
    return endpoint


@transaction.atomic
def endpoint_delete(*, endpoint: ModelEndpoint, actor: User) -> None:
    """Delete it; if creations were made with it, retire it instead: the key is
    erased and it leaves every list, while those creations keep its name."""
    require_manager(endpoint.workspace, actor)
    if not endpoint.creations.exists():
        endpoint.delete()
        return
    endpoint.api_key, endpoint.api_key_hint = "", ""
    endpoint.is_enabled = False
    endpoint.retired_at = timezone.now()
    endpoint.save(update_fields=["api_key", "api_key_hint", "is_enabled", "retired_at"])


def endpoint_test_connection(*, endpoint: ModelEndpoint, actor: User) -> Verdict:
    """Call the endpoint for real and keep the verdict on it for the list. A test holds the web
    thread until the endpoint answers (at most MODEL_ENDPOINT_CHECK_DEADLINE), so a workspace
    starts at most MODEL_ENDPOINT_CHECKS_PER_MINUTE of them a minute."""
    require_manager(endpoint.workspace, actor)
    if isinstance(endpoint.api_key, SealedSecret):
        raise WorkspaceRuleError(f"{endpoint.name} cannot be tested. {KEY_UNREADABLE}")
    per_minute = settings.MODEL_ENDPOINT_CHECKS_PER_MINUTE
    if workspace_over_limit(group="endpoint-test", workspace_id=endpoint.workspace_id, per_minute=per_minute):
        raise WorkspaceRuleError(
            f"Test connection was used {per_minute} times in this workspace in the last minute. "
            "Wait a minute and test again."
        )
    # Here, not at the top: the OpenAI client library takes half a second to import, which every web,
    # worker and management process would pay at start for a button that is seldom pressed.
    from sandboxes.agent.endpoint_check import EndpointUnderTest, check_endpoint

    verdict = check_endpoint(
        EndpointUnderTest(
            base_url=endpoint.base_url,
            model=endpoint.model,
            api_key=endpoint.api_key or "",
            extra_body=endpoint.extra_body or {},
            temperature=endpoint.temperature,
            allow_private=settings.MODEL_ENDPOINT_ALLOW_PRIVATE,
            timeout=settings.MODEL_ENDPOINT_CHECK_TIMEOUT,
            deadline=settings.MODEL_ENDPOINT_CHECK_DEADLINE,
        )
    )
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(
        checked_at=timezone.now(), check_verdict=verdict.code, check_message=verdict.message[:500]
    )
    return verdict
