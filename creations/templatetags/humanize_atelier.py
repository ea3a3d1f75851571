"""Small display filters for Atelier pages."""

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def compact_number(value: int | float | None) -> str:
    """12_345 -> '12.3k', 2_000_000 -> '2M'."""
    number = float(value or 0)
    for threshold, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(number) >= threshold:
            return f"{number / threshold:.1f}".rstrip("0").rstrip(".") + suffix
    return str(int(number))


@register.filter
def seconds_between(start: datetime | None, end: datetime | None) -> int:
    if start is None:
        return 0
    return max(0, int(((end or timezone.now()) - start).total_seconds()))


@register.filter
def clock(seconds: int | float | None) -> str:
    """Elapsed seconds as m:ss or h:mm:ss."""
    total = int(seconds or 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@register.filter
def short_duration(seconds: int | float | None) -> str:
    """Seconds as a person reads a span of time: '45 s', '15 min', '2 h 5 min'."""
    total = round(float(seconds or 0))
    if total < 60:
        return f"{total} s"
    hours, minutes = divmod(round(total / 60), 60)
    if not hours:
        return f"{minutes} min"
    return f"{hours:,} h {minutes} min" if minutes else f"{hours:,} h"
