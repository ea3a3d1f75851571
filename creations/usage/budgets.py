"""A workspace's monthly budgets (model tokens, sandbox time), checked twice:

- before anything of a new run is written (`check_can_submit`, called by the
  run services): a workspace that has used a budget up starts nothing until
  it renews, and the person is told which budget and when;
- while a run works (`RunBudgetWatch`, the agent loop's once-a-step question):
  a run that crosses a budget is told to submit, then stopped (quota_exceeded).

Its storage quota counts every file the workspace keeps (creations.usage.storage). It
is checked before anything is added (`storage_room_check`: files given with a brief,
copied by a fork, uploaded ahead of a run, and any new run once the quota is full),
under the workspace's row lock, so parallel submissions and uploads cannot pass it
together; and where a run's files are stored (`storage_allowance`, which the runs
layer hands to the artifacts' ingest and the snapshot).

Monthly budgets are soft at the edge: runs already going may finish their step, and
two submissions at the same moment may both start. What bounds the overshoot
is the per-step check, not a lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime

from django.core.exceptions import ValidationError
from django.template.defaultfilters import filesizeformat
from django.utils import dateformat

from creations.models import IN_FLIGHT_STATUSES, Run
from creations.usage.selectors import MonthUsage, workspace_month_usage, workspace_storage_bytes
from workspaces.models import Workspace

log = logging.getLogger(__name__)

# How stale a running run's view of its workspace's usage may get: other runs
# of the workspace are seen at most this late (its own usage is counted at once).
RECHECK_SECONDS = 5.0


def duration_text(seconds: float) -> str:
    """`5400` -> "1 hour 30 minutes": a quota as a person reads it."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    units = ((hours, "hour"), (minutes, "minute"), (secs, "second"))
    return " ".join(f"{n:,} {unit}{'' if n == 1 else 's'}" for n, unit in units if n) or "0 seconds"


def exhausted_budget_message(*, workspace: Workspace, usage: MonthUsage) -> str | None:
    """The sentence naming the monthly budget `workspace` has used up, and when it renews; None while both last."""
    if usage.tokens >= workspace.quota_month_tokens:
        spent = f"{workspace.quota_month_tokens:,} model tokens"
    elif usage.sandbox_seconds >= workspace.quota_month_sandbox_seconds:
        spent = f"{duration_text(workspace.quota_month_sandbox_seconds)} of sandbox time"
    else:
        return None
    month = dateformat.format(usage.month_start, "F")
    renews = dateformat.format(usage.renews_at, "j F")
    return f"This workspace has used its {spent} for {month}; it renews on {renews} (UTC)."


def check_can_submit(workspace: Workspace, now: datetime | None = None) -> None:
    """Refuse a new run (a submission, a re-run, a fork) while a monthly budget of
    `workspace` is used up: raises ValidationError naming it. Called before anything is written."""
    message = exhausted_budget_message(workspace=workspace, usage=workspace_month_usage(workspace=workspace, now=now))
    if message is not None:
        raise ValidationError(message, code="budget_exhausted")


def storage_room_check(*, workspace_id: int, adding: int = 0) -> None:
    """Refuse what would pass the workspace's storage quota: `adding` more bytes, or a new run
    once the quota is full (it could keep none of its files). Raises ValidationError saying
    what the workspace keeps and what frees space.

    Takes the workspace's row lock, held until the caller's transaction ends: call it in
    the transaction that writes what is added, before writing it. Checks of parallel
    submissions and uploads then take turns, each counting what the one before it
    committed. (FOR NO KEY UPDATE: rows that merely point at the workspace, an artifact
    being stored, are not held up by it.)"""
    quota = (
        Workspace.objects.select_for_update(no_key=True)
        .values_list("quota_storage_bytes", flat=True)
        .get(pk=workspace_id)
    )
    kept = workspace_storage_bytes(workspace=workspace_id)
    if kept < quota and kept + adding <= quota:
        return
    held = f"it keeps {filesizeformat(kept)} of its {filesizeformat(quota)}"
    frees = "Deleting creations the workspace no longer needs frees space."
    if adding:
        message = f"These files ({filesizeformat(adding)}) do not fit in this workspace's storage: {held}. {frees}"
    else:
        message = f"This workspace's storage is full ({held}): a new run could keep none of its files. {frees}"
    raise ValidationError(message.replace("\xa0", " "), code="storage_full")


def storage_allowance(*, workspace_id: int) -> int:
    """Bytes a run of the workspace may still store: its storage quota less everything it keeps."""
    quota = Workspace.objects.values_list("quota_storage_bytes", flat=True).get(pk=workspace_id)
    return max(quota - workspace_storage_bytes(workspace=workspace_id), 0)


class RunBudgetWatch:
    """The agent loop's `over_budget` for one run: the exhausted budget's message, or None.

    The database is asked at most every RECHECK_SECONDS. In between, the run's
    own tokens (`add_tokens`, from its usage events) and its own time are
    counted against the headroom the last answer left, and crossing it asks
    again at once, so a run sees its own crossing at its next step, however
    fast its steps are, and other runs' crossings within seconds."""

    def __init__(
        self,
        *,
        workspace_id: int,
        recheck_seconds: float = RECHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        store_pending: Callable[[], None] = lambda: None,
    ) -> None:
        self._workspace_id = workspace_id
        # Stores this run's usage not yet written (its step's events wait to be stored together),
        # so the database's answer counts every token `add_tokens` was told of.
        self._store_pending = store_pending
        self._recheck_seconds = recheck_seconds
        self._clock = clock
        self._checked_at: float | None = None
        self._message: str | None = None
        self._token_headroom = 0.0
        self._seconds_headroom = 0.0
        self._tokens_since = 0

    def add_tokens(self, tokens: int) -> None:
        """This run's model tokens, as they are reported (on its row by the time the database is next asked)."""
        self._tokens_since += max(tokens, 0)

    def __call__(self) -> str | None:
        now = self._clock()
        if self._checked_at is None or now - self._checked_at >= self._recheck_seconds or self._crossed(now):
            self._check(now)
        return self._message

    def _crossed(self, now: float) -> bool:
        assert self._checked_at is not None
        if self._message is not None:
            return False
        return self._tokens_since >= self._token_headroom or now - self._checked_at >= self._seconds_headroom

    def _check(self, now: float) -> None:
        self._checked_at = now
        try:
            self._store_pending()
            workspace = Workspace.objects.only("quota_month_tokens", "quota_month_sandbox_seconds").get(
                pk=self._workspace_id
            )
            usage = workspace_month_usage(workspace=workspace)
        except Exception:  # the database away for a moment must not stop the run: keep the last answer
            log.warning("Could not check workspace %s's budgets; trying again later", self._workspace_id, exc_info=True)
            return
        self._tokens_since = 0
        self._message = exhausted_budget_message(workspace=workspace, usage=usage)
        self._token_headroom = workspace.quota_month_tokens - usage.tokens
        self._seconds_headroom = workspace.quota_month_sandbox_seconds - usage.sandbox_seconds


def quota_below_use_warnings(workspace: Workspace) -> list[str]:
    """For staff who just changed quotas: each quota now below what the workspace uses.
    They take effect for new runs; nothing running is stopped by the change itself."""
    usage = workspace_month_usage(workspace=workspace)
    going = Run.objects.filter(creation__workspace=workspace, status__in=IN_FLIGHT_STATUSES).count()
    checks = [
        ("concurrent runs", going > workspace.quota_concurrent_runs, f"{going} runs are going now"),
        ("model tokens per month", usage.tokens > workspace.quota_month_tokens, f"{usage.tokens:,} used this month"),
        (
            "sandbox time per month",
            usage.sandbox_seconds > workspace.quota_month_sandbox_seconds,
            f"{duration_text(usage.sandbox_seconds)} used this month",
        ),
        (
            "storage",
            usage.storage_bytes > workspace.quota_storage_bytes,
            f"{usage.storage_bytes:,} bytes stored",
        ),
    ]
    return [
        f"The {name} quota is below current use ({use}): it applies to new runs; nothing running was stopped."
        for name, below, use in checks
        if below
    ]
