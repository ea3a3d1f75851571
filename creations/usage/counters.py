"""A run's usage counters (the Run row's columns) as one `RunUsage`, and back.

The row's counters are live while the run works (each step's usage is added as it
is reported) and final once it ended; the usage ledger records them then.
"""

from __future__ import annotations

from creations.models import Run
from sandboxes.agent.usage import RunUsage


def run_usage(run: Run) -> RunUsage:
    return RunUsage(
        steps=run.steps,
        prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens,
        sandbox_seconds=run.sandbox_seconds,
        output_bytes=run.output_bytes,
    )


def usage_columns(usage: RunUsage) -> dict[str, int | float]:
    """The values of the row's counters that say `usage` (for an UPDATE)."""
    return {
        "steps": usage.steps,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "sandbox_seconds": usage.sandbox_seconds,
        "output_bytes": usage.output_bytes,
    }


USAGE_COLUMNS = tuple(usage_columns(RunUsage()))
