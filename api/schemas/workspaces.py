from __future__ import annotations

from datetime import datetime

from ninja import Schema


class QuotaUse(Schema):
    """This calendar month (UTC) against the workspace's quotas; runs in flight counted live."""

    month_start: datetime
    renews_at: datetime
    tokens_used: int
    tokens_quota: int
    sandbox_seconds_used: float
    sandbox_seconds_quota: int
    storage_bytes_used: int
    storage_bytes_quota: int
    concurrent_runs_quota: int


class WorkspaceOut(Schema):
    slug: str
    name: str
    is_personal: bool
    role: str
    quota: QuotaUse
