"""A run's usage as one value: it adds up field by field, is never negative, and a step's
`usage` event says its part."""

from __future__ import annotations

import pytest

from sandboxes.agent.events import UsageReport
from sandboxes.agent.model import Usage
from sandboxes.agent.usage import RunUsage


def test_usage_adds_up_field_by_field() -> None:
    first = RunUsage(steps=1, prompt_tokens=1200, completion_tokens=80)
    second = RunUsage(steps=1, prompt_tokens=1500, completion_tokens=20)
    ended = RunUsage(sandbox_seconds=42.5, output_bytes=2048)

    total = first + second + ended

    assert total == RunUsage(
        steps=2, prompt_tokens=2700, completion_tokens=100, sandbox_seconds=42.5, output_bytes=2048
    )
    assert total.total_tokens == 2800
    assert total + RunUsage() == total
    assert (first, second) == (RunUsage(steps=1, prompt_tokens=1200, completion_tokens=80), second)  # unchanged


def test_usage_is_never_negative() -> None:
    with pytest.raises(ValueError, match="prompt_tokens"):
        RunUsage(prompt_tokens=-1)
    with pytest.raises(ValueError, match="sandbox_seconds"):
        RunUsage(sandbox_seconds=-0.5)


def test_a_step_reports_its_reply_and_counts_as_one_step_of_the_run() -> None:
    report = UsageReport.of_reply(3, Usage(prompt_tokens=900, completion_tokens=45, estimated=True))

    assert report.model_dump() == {
        "step": 3,
        "prompt_tokens": 900,
        "completion_tokens": 45,
        "total_tokens": 945,
        "estimated": True,
    }
    assert report.run_usage() == RunUsage(steps=1, prompt_tokens=900, completion_tokens=45)


def test_a_count_an_endpoint_gave_below_zero_counts_as_none() -> None:
    report = UsageReport.of_reply(1, Usage(prompt_tokens=-5, completion_tokens=7))

    assert report.prompt_tokens == -5  # the event says what the endpoint said
    assert report.run_usage() == RunUsage(steps=1, prompt_tokens=0, completion_tokens=7)
