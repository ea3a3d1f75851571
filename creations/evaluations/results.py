"""Reads of an evaluation's results: per model by mode, the accuracy with its 95% Wilson interval,
mean tokens and mean time, and per model the sandbox minus plain difference; per task, each answer.

A task counts once it has an outcome: scored, or failed (no answer: the run or the model failed,
which is a wrong answer). Tasks cancelled or not yet answered are not counted, and the table says
how many are still to come.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import QuerySet

from creations.evaluations.models import Evaluation, EvaluationItem, ItemStatus, Mode, Modes

Z_95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


def wilson_interval(correct: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: unlike the normal approximation it stays within
    0..1 and says something about 0 of 10 or 10 of 10. (0, 1) when nothing was counted."""
    if total <= 0:
        return 0.0, 1.0
    p = correct / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class ModeResult:
    model_name: str
    mode: str
    counted: int  # tasks with an outcome
    correct: int
    to_come: int  # waiting or going
    mean_tokens: float | None
    mean_seconds: float | None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.counted if self.counted else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.correct, self.counted)

    @property
    def accuracy_text(self) -> str:
        return f"{percent(self.accuracy)}%" if self.counted else "\u2013"

    @property
    def interval_text(self) -> str:
        low, high = self.interval
        return f"{percent(low)}% to {percent(high)}%" if self.counted else "\u2013"


@dataclass(frozen=True)
class ModelResult:
    model_name: str
    modes: list[ModeResult]

    def mode(self, mode: str) -> ModeResult | None:
        return next((result for result in self.modes if result.mode == mode), None)

    @property
    def difference(self) -> float | None:
        """Sandbox accuracy minus plain accuracy: what the computer added (None unless both have results)."""
        sandbox, plain = self.mode(Mode.SANDBOX), self.mode(Mode.PLAIN)
        if sandbox is None or plain is None or sandbox.accuracy is None or plain.accuracy is None:
            return None
        return sandbox.accuracy - plain.accuracy

    @property
    def difference_text(self) -> str:
        """In percentage points: "+80.0 points"; "\u2013" until both modes have results."""
        return f"{signed_points(self.difference)} points" if self.difference is not None else "\u2013"


def _items(evaluation: Evaluation) -> QuerySet[EvaluationItem]:
    return EvaluationItem.objects.filter(evaluation=evaluation)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def evaluation_results(evaluation: Evaluation) -> list[ModelResult]:
    """One row per model (in the order they were picked), each with its modes."""
    rows = list(
        _items(evaluation)
        .order_by("position")
        .values_list("model_name", "mode", "status", "correct", "prompt_tokens", "completion_tokens", "seconds")
    )
    names = list(dict.fromkeys(row[0] for row in rows))
    results = []
    for name in names:
        modes = []
        for mode in Modes.expand(evaluation.modes):
            mine = [row for row in rows if row[0] == name and row[1] == mode]
            counted = [row for row in mine if row[2] in (ItemStatus.SCORED, ItemStatus.FAILED)]
            modes.append(
                ModeResult(
                    model_name=name,
                    mode=mode,
                    counted=len(counted),
                    correct=sum(1 for row in counted if row[3]),
                    to_come=sum(1 for row in mine if row[2] in (ItemStatus.PENDING, ItemStatus.IN_FLIGHT)),
                    mean_tokens=_mean([row[4] + row[5] for row in counted]),
                    mean_seconds=_mean([row[6] for row in counted if row[6] is not None]),
                )
            )
        results.append(ModelResult(model_name=name, modes=modes))
    return results


def evaluation_items(evaluation: Evaluation) -> QuerySet[EvaluationItem]:
    """Every task's answer, in the order they were released, with what the page shows of each."""
    return _items(evaluation).select_related("task", "run").order_by("position")


def evaluation_progress(evaluation: Evaluation) -> tuple[int, int]:
    """(tasks with an outcome or cancelled, all tasks)."""
    items = _items(evaluation)
    return items.exclude(status__in=(ItemStatus.PENDING, ItemStatus.IN_FLIGHT)).count(), items.count()


def percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def signed_points(value: float | None) -> str:
    """A difference of accuracies in percentage points: "+80.0", "-10.0", "0.0"."""
    if value is None:
        return ""
    points = 100 * value
    return f"{points:+.1f}" if round(points, 1) else "0.0"


RESULTS_CSV_HEADER = [
    "model",
    "mode",
    "tasks_counted",
    "correct",
    "accuracy_percent",
    "ci95_low_percent",
    "ci95_high_percent",
    "mean_tokens",
    "mean_seconds",
    "sandbox_minus_plain_points",
    "tasks_to_come",
]
ANSWERS_CSV_HEADER = ["task", "model", "mode", "status", "correct", "answer_from", "read", "why", "tokens", "seconds"]


def results_csv_rows(evaluation: Evaluation) -> Iterator[list[str]]:
    for model in evaluation_results(evaluation):
        for result in model.modes:
            low, high = result.interval
            yield [
                model.model_name,
                result.mode,
                str(result.counted),
                str(result.correct),
                percent(result.accuracy),
                percent(low) if result.counted else "",
                percent(high) if result.counted else "",
                "" if result.mean_tokens is None else f"{result.mean_tokens:.0f}",
                "" if result.mean_seconds is None else f"{result.mean_seconds:.2f}",
                signed_points(model.difference),
                str(result.to_come),
            ]


def answers_csv_rows(evaluation: Evaluation) -> Iterator[list[str]]:
    for item in evaluation_items(evaluation):
        yield [
            item.task.task_id,
            item.model_name,
            item.mode,
            item.status,
            "" if item.correct is None else ("yes" if item.correct else "no"),
            item.answer_source,
            item.read,
            item.why,
            str(item.tokens),
            "" if item.seconds is None else f"{item.seconds:.2f}",
        ]
