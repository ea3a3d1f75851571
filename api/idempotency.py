"""`Idempotency-Key`: a client that retries a create (after a timeout, a dropped
connection) gets the run its first attempt made, never a second one.

Keys are per person. Requests with one person's keys are made one at a time (a
lock on their user row, held for the create's transaction), so two copies of a
request sent at once also make one run: the second waits, then finds the key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from api.models import IdempotentRequest
from creations.models import Run

KEY_MAX_CHARS = 255


@dataclass(frozen=True)
class Created:
    run: Run
    replayed: bool  # the key was seen before: this is the first request's run


def fingerprint(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def create_once(*, user: User, key: str | None, payload: dict[str, Any], create: Callable[[], Run]) -> Created:
    """`create()` in a transaction, unless this person already made a run with `key`."""
    if key is None:
        with transaction.atomic():
            return Created(run=create(), replayed=False)
    key = key.strip()
    if not key or len(key) > KEY_MAX_CHARS:
        raise ValidationError({"Idempotency-Key": f"Send 1 to {KEY_MAX_CHARS} characters, e.g. a fresh UUID."})
    digest = fingerprint(payload)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        seen = IdempotentRequest.objects.select_related("run__creation__workspace").filter(user=user, key=key).first()
        if seen is not None:
            if seen.fingerprint != digest:
                raise ValidationError(
                    {"Idempotency-Key": "This key was used for a different request; send a new key for a new run."}
                )
            return Created(run=seen.run, replayed=True)
        run = create()
        IdempotentRequest.objects.create(user=user, key=key, fingerprint=digest, run=run)
        return Created(run=run, replayed=False)
