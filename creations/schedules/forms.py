"""The schedule page's form: it parses and explains; creations.schedules.services decides."""

from __future__ import annotations

from django import forms
from django.conf import settings

from creations.schedules.cadence import WEEKDAYS, Cadence


class ScheduleForm(forms.Form):
    cadence = forms.ChoiceField(label="How often", choices=Cadence.choices, widget=forms.RadioSelect)
    at = forms.TimeField(label="At (UTC)", required=False, help_text="For daily and weekly, e.g. 06:00.")
    weekday = forms.TypedChoiceField(
        label="On", choices=list(enumerate(WEEKDAYS)), coerce=int, required=False, empty_value=None
    )
    cron = forms.CharField(
        label="Cron line (UTC)", required=False, max_length=100, help_text="Five fields, e.g. 0 6 * * 1-5."
    )
    instruction = forms.CharField(
        label="Standing instruction",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=settings.RUN_INSTRUCTION_MAX_CHARS,
        help_text="What each refresh should do, e.g. “update the figures with today's data”.",
    )
