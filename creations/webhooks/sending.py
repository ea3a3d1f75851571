"""One attempt at a delivery: a signed POST, through the endpoint address rules, bounded in time
and in what is read back.

The connection goes through `sandboxes.agent.endpoint_addresses.GuardedTransport`, as a model
endpoint's do: the host is resolved at connect time and every address it gives is checked
(`address_rules`: never link-local or cloud metadata; private and loopback only when the operator
allows them, WEBHOOK_ALLOW_PRIVATE), so a name that resolves elsewhere than when the webhook was
saved (DNS rebinding) gains nothing. Redirects are not followed, proxies from the environment
are not used, and of the answer only the status counts: at most WEBHOOK_RESPONSE_MAX_BYTES of its
body are read. WEBHOOK_DEADLINE_SECONDS bounds the whole attempt, however slowly a receiver answers.
"""

from __future__ import annotations

import ssl
import time
from dataclasses import dataclass

import httpx2
from django.conf import settings

from creations.webhooks.signing import signed_headers
from sandboxes.agent.endpoint_addresses import GuardedTransport, find_cause, refused_in_chain
from sandboxes.agent.endpoint_deadline import deadline_passed, overall_deadline
from sandboxes.per_process import per_process

LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20)


@per_process
def webhook_http_client(*, allow_private: bool) -> httpx2.Client:
    """One client per process (and address rule): no cookies kept, no redirects followed."""
    return httpx2.Client(
        transport=GuardedTransport(allow_private=allow_private, limits=LIMITS),
        follow_redirects=False,
        trust_env=False,
    )


@dataclass(frozen=True)
class AttemptResult:
    status_code: int | None  # None: no answer
    error: str  # why it failed, in our words; blank when it was delivered
    refused: bool  # the address is one the platform does not send to: trying again will not help
    duration_ms: int

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _read_at_most(response: httpx2.Response, limit: int) -> None:
    seen = 0
    for chunk in response.iter_raw():
        seen += len(chunk)
        if seen >= limit:
            break


def post_signed(*, url: str, secret: str, delivery_id: str, event: str, body: bytes, attempt: int) -> AttemptResult:
    started = time.monotonic()
    headers = signed_headers(
        secret=secret, delivery_id=delivery_id, event=event, timestamp=int(time.time()), body=body, attempt=attempt
    )
    client = webhook_http_client(allow_private=settings.WEBHOOK_ALLOW_PRIVATE)

    def result(status_code: int | None, error: str = "", *, refused: bool = False) -> AttemptResult:
        return AttemptResult(status_code, error[:300], refused, int((time.monotonic() - started) * 1000))

    try:
        with overall_deadline(settings.WEBHOOK_DEADLINE_SECONDS):
            try:
                with client.stream(
                    "POST", url, content=body, headers=headers, timeout=httpx2.Timeout(settings.WEBHOOK_TIMEOUT_SECONDS)
                ) as response:
                    _read_at_most(response, settings.WEBHOOK_RESPONSE_MAX_BYTES)
            except httpx2.TimeoutException:
                if deadline_passed():
                    return result(None, f"No complete answer within {settings.WEBHOOK_DEADLINE_SECONDS:g} s.")
                return result(None, f"No answer within {settings.WEBHOOK_TIMEOUT_SECONDS:g} s.")
    except httpx2.TransportError as error:
        refused = refused_in_chain(error)
        if refused is not None:
            return result(None, f"Not sent: {refused}", refused=True)
        if find_cause(error, ssl.SSLError) is not None:
            return result(
                None, "The TLS connection failed: its certificate is not trusted, expired, or for another name."
            )
        return result(None, "Could not connect: check the address and that the receiver is up.")
    if 200 <= response.status_code < 300:
        return result(response.status_code)
    if 300 <= response.status_code < 400:
        return result(response.status_code, f"Answered HTTP {response.status_code}: redirects are not followed.")
    return result(response.status_code, f"Answered HTTP {response.status_code}.")
