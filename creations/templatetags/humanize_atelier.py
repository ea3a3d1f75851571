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
