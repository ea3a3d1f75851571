"""How a delivery proves it comes from this platform: an HMAC-SHA256, with the webhook's secret,
of the timestamp, a dot and the body, exactly as sent. The receiver computes the same and compares,
and refuses a timestamp too far from its clock, so a delivery captured on the way cannot be replayed
later (platform/README.md, Webhooks, has the receiver's side in Python).

Each attempt is signed anew, with the time it is sent: a retry an hour later is not stale."""

from __future__ import annotations

import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix that tells what the secret is, not one
SIGNATURE_VERSION = "v1"

HEADER_ID = "Atelier-Webhook-Id"  # the delivery's id: the same at every attempt of it
HEADER_EVENT = "Atelier-Webhook-Event"
HEADER_TIMESTAMP = "Atelier-Webhook-Timestamp"  # seconds since 1970 (UTC), when this attempt was sent
HEADER_SIGNATURE = "Atelier-Webhook-Signature"  # "v1=" and the hex digest
HEADER_ATTEMPT = "Atelier-Webhook-Attempt"


def secret_new() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


def signed_headers(*, secret: str, delivery_id: str, event: str, timestamp: int, body: bytes, attempt: int) -> dict:
    return {
        "Content-Type": "application/json",
        "User-Agent": "Atelier-Webhooks/1",
        HEADER_ID: delivery_id,
        HEADER_EVENT: event,
        HEADER_TIMESTAMP: str(timestamp),
        HEADER_SIGNATURE: signature(secret=secret, timestamp=timestamp, body=body),
        HEADER_ATTEMPT: str(attempt),
    }
