"""`{% schedule_panel creation %}`: what the creation page says of its schedule (when it refreshes
next, or why it paused), by template only, so the pages below import nothing of schedules."""

from __future__ import annotations

from typing import Any

from django import template

from creations.models import Creation
from creations.schedules.models import Schedule

register = template.Library()


@register.inclusion_tag("schedules/_panel.html")
def schedule_panel(creation: Creation) -> dict[str, Any]:
    return {"creation": creation, "schedule": Schedule.objects.filter(creation=creation).first()}
