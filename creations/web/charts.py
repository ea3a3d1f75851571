"""Charts drawn on the server as SVG: no script, no outside library, readable in
a screenshot and by a screen reader.

The builders here only compute geometry and words (pure Python, easy to test);
templates/workspaces/_bar_chart.html and _quota_meter.html turn them into SVG,
so every name a person typed is escaped by the template engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Okabe-Ito colours: told apart with the common kinds of colour blindness.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00")
OTHERS_COLOUR = "#8a8a8a"
TOTAL_COLOUR = "#3d5afe"

WIDTH = 800
LEGEND_ROW = 22
LEGEND_COLUMNS = 3
LEGEND_NAME_CHARS = 22
PLOT_HEIGHT = 220
LEFT, RIGHT, TOP_GAP, BOTTOM = 70, 16, 22, 56


@dataclass(frozen=True)
class Segment:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str  # what hovering (and a screen reader) tells: "3 March · bob: 12.4k tokens"


@dataclass(frozen=True)
class Column:
    centre: float
    segments: list[Segment]
    total_text: str  # "" for an empty day
    total_y: float
    tick_text: str  # the day's number under the axis


@dataclass(frozen=True)
class Tick:
    y: float
    text: str


@dataclass(frozen=True)
class LegendItem:
    x: float
    y: float
    colour: str
    name: str  # shortened to fit; `full_name` in its <title>
    full_name: str
    total_text: str


@dataclass(frozen=True)
class BarChart:
    chart_id: str
    title: str
    desc: str
    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    columns: list[Column]
    ticks: list[Tick]
    legend: list[LegendItem]
    x_label: str
    y_label: str
    empty_text: str  # shown across the plot when there is nothing to draw; "" otherwise

    @property
    def y_label_x(self) -> float:
        return 16

    @property
    def y_label_y(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def x_label_y(self) -> float:
        return self.bottom + 40

    @property
    def centre_x(self) -> float:
        return (self.left + self.right) / 2


def nice_top(value: float, ticks: int = 4, *, min_step: float = 0.0) -> tuple[float, float]:
    """An axis maximum at or above `value` and its step, in steps of 1, 2, 2.5 or 5 times a power of ten,
    and at least `min_step` (1 for what only comes whole, such as tokens: no "0.25 tokens" tick)."""
    if value <= 0:
        step = max(0.25, min_step)
        return max(1.0, step), step
    raw = max(value / ticks, min_step)
    magnitude = 10 ** math.floor(math.log10(raw))
    steps = [m * magnitude for m in (1, 2, 2.5, 5, 10, 20)]
    # A step that is not a whole number of `min_step`s (2.5 tokens) would draw ticks between them.
    step = next(s for s in steps if s >= raw and (not min_step or _whole(s / min_step)))
    return step * math.ceil(value / step - 1e-9), step


def _whole(number: float) -> bool:
    return abs(number - round(number)) < 1e-9


def step_decimals(step: float) -> int:
    """How many decimals show every multiple of `step` exactly (0.25: 2, 2.5: 1, 20: 0)."""
    for decimals in range(7):
        if abs(round(step, decimals) - step) < 1e-9:
            return decimals
    return 6


def decimal_axis_text(value: float, step: float) -> str:
    """A tick as a plain number, every tick of the axis with the same decimals: 0.25, 0.50, 0.75."""
    return f"{value:,.{step_decimals(step)}f}"


def _short(name: str) -> str:
    return name if len(name) <= LEGEND_NAME_CHARS else name[: LEGEND_NAME_CHARS - 1] + "…"


def stacked_bar_chart(
    *,
    chart_id: str,
    title: str,
    x_label: str,
    y_label: str,
    categories: Sequence[str],
    category_names: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    fmt: Callable[[float], str],
    unit: str,
    empty_text: str,
    grey: str | None = None,
    min_step: float = 0.0,
    axis_fmt: Callable[[float, float], str] | None = None,
) -> BarChart:
    """One column per category (a day), each stacking its series' values bottom-up.

    `categories` label the axis ("1".."31"); `category_names` name them in full for the
    hover text and the description ("3 March"). A single series is drawn in the accent
    colour; several get the palette, and the series named `grey` (the rest of them
    summed, say) grey. The axis's ticks are `fmt`'s words for their values unless `axis_fmt`
    (given the value and the step) says them otherwise: a formatter that rounds (to one decimal,
    say) would show two ticks alike, or a tick that is not where it is drawn."""
    colours = [TOTAL_COLOUR] if len(series) == 1 else [PALETTE[n % len(PALETTE)] for n in range(len(series))]
    colours = [OTHERS_COLOUR if name == grey else colour for (name, _), colour in zip(series, colours, strict=True)]
    legend_rows = math.ceil(len(series) / LEGEND_COLUMNS) if len(series) > 1 else 0
    top = TOP_GAP + legend_rows * LEGEND_ROW + (8 if legend_rows else 0)
    bottom = top + PLOT_HEIGHT
    left, right = LEFT, WIDTH - RIGHT
    totals = [sum(values[n] for _, values in series) for n in range(len(categories))]
    axis_top, step = nice_top(max(totals, default=0), min_step=min_step)
    scale = (bottom - top) / axis_top
    slot = (right - left) / max(len(categories), 1)
    bar = slot * 0.7

    columns = []
    for n, (tick_text, name) in enumerate(zip(categories, category_names, strict=True)):
        centre = left + slot * (n + 0.5)
        y: float = bottom
        segments = []
        for (series_name, values), colour in zip(series, colours, strict=True):
            value = values[n]
            if value <= 0:
                continue
            height = value * scale
            y -= height
            who = f" · {series_name}" if len(series) > 1 else ""
            segments.append(
                Segment(
                    x=round(centre - bar / 2, 1),
                    y=round(y, 1),
                    width=round(bar, 1),
                    height=round(height, 1),
                    colour=colour,
                    label=f"{name}{who}: {fmt(value)} {unit}",
                )
            )
        columns.append(
            Column(
                centre=round(centre, 1),
                segments=segments,
                total_text=fmt(totals[n]) if totals[n] > 0 else "",
                total_y=round(y - 4, 1),
                tick_text=tick_text,
            )
        )

    ticks = []
    for k in range(round(axis_top / step) + 1):
        value = k * step
        text = axis_fmt(value, step) if axis_fmt is not None else fmt(value)
        ticks.append(Tick(y=round(bottom - value * scale, 1), text=text))

    legend = []
    if len(series) > 1:
        width = (right - left) / LEGEND_COLUMNS
        for n, ((name, values), colour) in enumerate(zip(series, colours, strict=True)):
            row, column = divmod(n, LEGEND_COLUMNS)
            legend.append(
                LegendItem(
                    x=round(left + column * width, 1),
                    y=TOP_GAP + row * LEGEND_ROW - 12,
                    colour=colour,
                    name=_short(name),
                    full_name=name,
                    total_text=f"{fmt(sum(values))} {unit}",
                )
            )

    total = sum(totals)
    if total > 0:
        busiest = max(range(len(totals)), key=lambda n: totals[n])
        parts = [f"{title}: {fmt(total)} {unit} in all; the busiest day was {category_names[busiest]}"]
        parts.append(f"with {fmt(totals[busiest])} {unit}.")
        if len(series) > 1:
            parts.append("By " + ", ".join(f"{name}: {fmt(sum(values))} {unit}" for name, values in series) + ".")
        desc = " ".join(parts)
    else:
        desc = f"{title}: {empty_text}"
    return BarChart(
        chart_id=chart_id,
        title=title,
        desc=desc,
        width=WIDTH,
        height=int(bottom + BOTTOM),
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        columns=columns,
        ticks=ticks,
        legend=legend,
        x_label=x_label,
        y_label=y_label,
        empty_text="" if total > 0 else empty_text,
    )


@dataclass(frozen=True)
class QuotaMeter:
    """One quota as a bar: how much of it is used."""

    key: str
    label: str
    used_text: str
    quota_text: str
    used: float
    quota: float
    note: str = ""

    @property
    def percent(self) -> int:
        """Used, as a whole percentage of the quota (a zero quota is full at once)."""
        if self.quota <= 0:
            return 100 if self.used > 0 else 0
        return math.floor(100 * self.used / self.quota)

    @property
    def drawn_percent(self) -> int:
        return min(self.percent, 100)

    @property
    def over(self) -> bool:
        return self.used > self.quota

    @property
    def level(self) -> str:
        """How the bar is coloured: fine, close (from 80 %), or at or over the quota."""
        if self.percent >= 100:
            return "full"
        return "close" if self.percent >= 80 else "fine"
