"""The SVG chart builders: bars in proportion, axes a person can read, words for screen readers."""

from __future__ import annotations

import itertools

import pytest

from creations.templatetags.humanize_atelier import short_duration
from creations.web.charts import (
    OTHERS_COLOUR,
    PALETTE,
    TOTAL_COLOUR,
    BarChart,
    QuotaMeter,
    nice_top,
    stacked_bar_chart,
)


def chart(series: list[tuple[str, list[float]]], **kwargs: object) -> BarChart:
    days = len(series[0][1]) if series else 3
    options: dict[str, object] = {
        "chart_id": "c",
        "title": "Tokens per day",
        "x_label": "Day",
        "y_label": "Tokens",
        "categories": [str(n + 1) for n in range(days)],
        "category_names": [f"{n + 1} March" for n in range(days)],
        "series": series,
        "fmt": lambda v: f"{v:g}",
        "unit": "tokens",
        "empty_text": "nothing yet.",
        **kwargs,
    }
    return stacked_bar_chart(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "top", "step"),
    [(0, 1, 0.25), (7, 8, 2), (48_000, 60_000, 20_000), (100, 100, 25), (0.3, 0.3, 0.1), (51_000, 60_000, 20_000)],
)
def test_the_axis_ends_on_a_round_number_above_the_tallest_bar(value: float, top: float, step: float) -> None:
    assert nice_top(value) == pytest.approx((top, step))


def test_bars_stack_each_days_series_in_proportion_from_the_axis() -> None:
    built = chart([("alice", [30, 0, 10]), ("bob", [10, 20, 0])])

    heights = [[s.height for s in column.segments] for column in built.columns]
    scale = (built.bottom - built.top) / 40
    assert heights == [[30 * scale, 10 * scale], [20 * scale], [10 * scale]]
    first = built.columns[0].segments
    assert first[0].y + first[0].height == built.bottom
    assert first[1].y + first[1].height == pytest.approx(first[0].y)
    assert [c.total_text for c in built.columns] == ["40", "20", "10"]
    assert [t.text for t in built.ticks] == ["0", "10", "20", "30", "40"]
    assert first[1].label == "1 March · bob: 10 tokens"


def test_several_series_get_a_legend_and_the_rest_is_grey() -> None:
    built = chart([("alice", [5]), ("bob", [3]), ("Others", [1])], grey="Others")

    legend = built.legend
    assert [(i.full_name, i.colour, i.total_text) for i in legend] == [
        ("alice", PALETTE[0], "5 tokens"),
        ("bob", PALETTE[1], "3 tokens"),
        ("Others", OTHERS_COLOUR, "1 tokens"),
    ]
    assert "the busiest day was 1 March with 9 tokens" in built.desc
    assert "By alice: 5 tokens, bob: 3 tokens, Others: 1 tokens." in built.desc


def test_a_long_name_is_shortened_in_the_legend_and_kept_whole_in_its_title() -> None:
    name = "a-very-long-model-name-from-a-self-hosted-endpoint"
    built = chart([(name, [1]), ("b", [1])])
    item = built.legend[0]
    assert item.full_name == name
    assert len(item.name) <= 22
    assert item.name.endswith("…")


def test_one_series_is_drawn_in_the_accent_colour_without_a_legend() -> None:
    built = chart([("All runs", [4, 2])])
    assert built.legend == []
    assert {s.colour for c in built.columns for s in c.segments} == {TOTAL_COLOUR}
    assert built.columns[0].segments[0].label == "1 March: 4 tokens"


def test_an_empty_month_says_so_instead_of_drawing_bars() -> None:
    built = chart([], categories=["1", "2"], category_names=["1 March", "2 March"])
    assert [c.segments for c in built.columns] == [[], []]
    assert built.empty_text == "nothing yet."
    assert built.desc == "Tokens per day: nothing yet."


@pytest.mark.parametrize(
    ("used", "quota", "percent", "level", "over"),
    [(0, 10, 0, "fine", False), (8, 10, 80, "close", False), (10, 10, 100, "full", False), (25, 10, 250, "full", True)],
)
def test_a_quota_meter_says_how_full_it_is(used: float, quota: float, percent: int, level: str, over: bool) -> None:
    meter = QuotaMeter(key="k", label="L", used_text="", quota_text="", used=used, quota=quota)
    assert (meter.percent, meter.level, meter.over, meter.drawn_percent) == (percent, level, over, min(percent, 100))


def test_a_zero_quota_is_full_as_soon_as_anything_is_used() -> None:
    assert QuotaMeter(key="k", label="L", used_text="", quota_text="", used=0, quota=0).percent == 0
    assert QuotaMeter(key="k", label="L", used_text="", quota_text="", used=1, quota=0).level == "full"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0 s"), (45.4, "45 s"), (900, "15 min"), (3900, "1 h 5 min"), (7200, "2 h")]
)
def test_spans_of_time_read_naturally(seconds: float, text: str) -> None:
    assert short_duration(seconds) == text


def _minutes(value: float) -> str:  # as the usage page says minutes beside a bar: one decimal under 10
    return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.1f}"


@pytest.mark.parametrize("tallest", [0, 0.2, 0.9, 1, 3, 7, 9.6, 24, 99, 1_000, 1_234, 12_345, 2_000_001])
def test_the_usage_charts_ticks_are_distinct_evenly_spaced_and_say_where_they_are(tallest: float) -> None:
    from creations.templatetags.humanize_atelier import compact_number
    from creations.web.charts import decimal_axis_text

    tokens = chart([("alice", [tallest])], fmt=compact_number, min_step=1)
    minutes = chart([("alice", [tallest / 7])], fmt=_minutes, axis_fmt=decimal_axis_text)
    for built in (tokens, minutes):
        texts = [t.text for t in built.ticks]
        assert len(set(texts)) == len(texts), texts
        values = [_read(text) for text in texts]
        steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
        assert len(steps) == 1, texts  # each tick says the value it is drawn at: evenly spaced
    assert all(float(_read(t.text)).is_integer() for t in tokens.ticks)  # no fraction of a token


def _read(text: str) -> float:
    multiplier = {"k": 1e3, "M": 1e6, "G": 1e9}.get(text[-1], 1)
    return float(text.rstrip("kMG").replace(",", "")) * multiplier
