from __future__ import annotations

from datetime import date
from typing import Literal

from ninja import Schema


class Quotas(Schema):
    concurrent_runs: int
    month_tokens: int
    month_sandbox_seconds: int
    storage_bytes: int


class Totals(Schema):
    """What runs that ended in the month spent (the ledger)."""

    runs: int
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    sandbox_seconds: float
    bytes_stored: int


class DailySeries(Schema):
    name: str  # a person, a model, or "Everyone"
    tokens: list[int]
    sandbox_seconds: list[float]


class CostlyCreationOut(Schema):
    title: str  # said only to those who may see the creation
    runs: int
    tokens: int
    sandbox_seconds: float


class UsageOut(Schema):
    workspace: str
    month: str  # YEAR-MONTH
    days: list[date]
    quotas: Quotas
    totals: Totals
    by: Literal["person", "model"] | None  # viewers see the workspace's totals only
    daily: list[DailySeries]
    costliest: list[CostlyCreationOut]
