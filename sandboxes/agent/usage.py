"""What a run uses, as one value: its steps, its model tokens, its time in the
sandbox and the bytes of output it leaves.

The agent loop counts the steps and tokens, the platform adds the sandbox
time and the output's size, and stores the whole on the run, in its final
status event and in the usage ledger. Usage adds up field by field (a step's
to the run's so far) and is never negative.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class RunUsage:
    steps: int = 0
    prompt_tokens: int = 0  # tokens in
    completion_tokens: int = 0  # tokens out
    sandbox_seconds: float = 0.0  # from the sandbox acquired to released
    output_bytes: int = 0  # the files kept from /testbed/output

    def __post_init__(self) -> None:
        negative = [field.name for field in fields(self) if getattr(self, field.name) < 0]
        if negative:
            raise ValueError(f"usage is never negative: {', '.join(negative)} of {self}")

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: RunUsage) -> RunUsage:
        return RunUsage(
            steps=self.steps + other.steps,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            sandbox_seconds=self.sandbox_seconds + other.sandbox_seconds,
            output_bytes=self.output_bytes + other.output_bytes,
        )
