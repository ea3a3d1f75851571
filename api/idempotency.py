"""`Idempotency-Key`: a client that retries a create (after a timeout, a dropped
connection) gets the run its first attempt made, never a second one.

Keys are per person. Requests with one person's keys are made one at a time (a
lock on their user row, held for the create's transaction), so two copies of a
request sent at once also make one run: the second waits, then finds the key.

A request is its body and the workspace it is sent to: the same key and body sent
to another workspace is another request, refused. A replay answers only someone who
may still see the run and start runs in its workspace (the checks of
creations/access.py and workspaces/permissions.py), as a fresh request would: a
member removed since gets 404 (403 where the run is public, or they became a viewer).
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
from django.http import Http404

from api.models import IdempotentRequest
from creations.access import creation_visible
from creations.models import Run
from workspaces.models import Workspace
from workspaces.permissions import membership_to_start_runs
from workspaces.selectors import membership_get

KEY_MAX_CHARS = 255


@dataclass(frozen=True)
class Created:
    run: Run
    replayed: bool  # the key was seen before: this is the first request's run


def fingerprint(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _may_replay(*, run: Run, user: User) -> None:
    """Http404 or PermissionDenied, as a fresh request would get, for who may no longer have this run."""
    membership = membership_get(workspace=run.creation.workspace_id, user=user)
    if not creation_visible(creation=run.creation, user=user, membership=membership):
        raise Http404("No such run.")
    membership_to_start_runs(workspace=run.creation.workspace_id, user=user)


def create_once(
    *, user: User, workspace: Workspace, key: str | None, payload: dict[str, Any], create: Callable[[], Run]
) -> Created:
    """`create()` in a transaction, unless this person already made a run with `key` (in `workspace`)."""
    if key is None:
        with transaction.atomic():
            return Created(run=create(), replayed=False)
    key = key.strip()
    if not key or len(key) > KEY_MAX_CHARS:
        raise ValidationError({"Idempotency-Key": f"Send 1 to {KEY_MAX_CHARS} characters, e.g. a fresh UUID."})
    digest = fingerprint({"workspace": workspace.pk, **payload})
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()
        seen = IdempotentRequest.objects.select_related("run__creation__workspace").filter(user=user, key=key).first()
        if seen is not None:
            if seen.fingerprint != digest:
                raise ValidationError(
                    {"Idempotency-Key": "This key was used for a different request; send a new key for a new run."}
                )
            _may_replay(run=seen.run, user=user)
            return Created(run=seen.run, replayed=True)
        run = create()
        IdempotentRequest.objects.create(user=user, key=key, fingerprint=digest, run=run)
        return Created(run=run, replayed=False)
