"""The results chart, drawn on the server as SVG like the usage page's (creations.web.charts): per
model, one bar per mode for its accuracy, with its 95% interval as a whisker. Geometry and words
only; templates/evaluations/_accuracy_chart.html draws it, escaping every name."""

from __future__ import annotations

from dataclasses import dataclass

from creations.evaluations.results import ModelResult, percent
from creations.web.charts import PALETTE

WIDTH, PLOT_HEIGHT = 800, 240
LEFT, RIGHT, TOP, BOTTOM = 70, 16, 40, 50
MODE_COLOURS = {"sandbox": PALETTE[0], "plain": PALETTE[1]}


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str  # "model · sandbox: 80.0% (95% interval 49.0 to 94.3%), 8 of 10"
    value_text: str
    whisker_top: float
    whisker_bottom: float

    @property
    def centre(self) -> float:
        return round(self.x + self.width / 2, 1)


@dataclass(frozen=True)
class Group:
    centre: float
    name: str
    bars: list[Bar]


@dataclass(frozen=True)
class AccuracyChart:
    title: str
    desc: str
    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    groups: list[Group]
    ticks: list[tuple[float, str]]
    legend: list[tuple[float, str, str]]  # x, colour, mode

    @property
    def centre_x(self) -> float:
        return (self.left + self.right) / 2


def accuracy_chart(results: list[ModelResult]) -> AccuracyChart:
    bottom = TOP + PLOT_HEIGHT
    right = WIDTH - RIGHT
    scale = PLOT_HEIGHT  # accuracy 1.0 is the plot's height
    slot = (right - LEFT) / max(len(results), 1)
    groups = []
    sentences = []
    for n, model in enumerate(results):
        centre = LEFT + slot * (n + 0.5)
        bar_width = min(80.0, slot * 0.7 / max(len(model.modes), 1))
        start = centre - bar_width * len(model.modes) / 2
        bars = []
        for m, result in enumerate(model.modes):
            accuracy = result.accuracy or 0.0
            low, high = result.interval if result.counted else (0.0, 0.0)
            shown = f"{percent(result.accuracy)}%" if result.counted else "no results yet"
            label = f"{model.model_name} · {result.mode}: {shown}" + (
                f" (95% interval {percent(low)}% to {percent(high)}%), {result.correct} of {result.counted}"
                if result.counted
                else ""
            )
            sentences.append(label)
            bars.append(
                Bar(
                    x=round(start + m * bar_width, 1),
                    y=round(bottom - accuracy * scale, 1),
                    width=round(bar_width - 4, 1),
                    height=round(accuracy * scale, 1),
                    colour=MODE_COLOURS.get(result.mode, PALETTE[2]),
                    label=label,
                    value_text=shown if result.counted else "\u2013",
                    whisker_top=round(bottom - high * scale, 1),
                    whisker_bottom=round(bottom - low * scale, 1),
                )
            )
        groups.append(Group(centre=round(centre, 1), name=model.model_name, bars=bars))
    modes = list(dict.fromkeys(result.mode for model in results for result in model.modes))
    legend = [(float(LEFT + 140 * n), MODE_COLOURS.get(mode, PALETTE[2]), mode) for n, mode in enumerate(modes)]
    ticks = [(round(bottom - fraction * scale, 1), f"{int(fraction * 100)}%") for fraction in (0, 0.25, 0.5, 0.75, 1)]
    return AccuracyChart(
        title="Accuracy per model and mode, with 95% intervals",
        desc="; ".join(sentences) + "." if sentences else "No results yet.",
        width=WIDTH,
        height=bottom + BOTTOM,
        left=LEFT,
        right=right,
        top=TOP,
        bottom=bottom,
        groups=groups,
        ticks=ticks,
        legend=legend,
    )
