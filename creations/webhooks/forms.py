"""The webhook pages' forms: they parse and explain; creations.webhooks.services decides."""

from __future__ import annotations

from django import forms

from creations.webhooks.events import WebhookEvent
from creations.webhooks.services import DESCRIPTION_MAX_CHARS, URL_MAX_CHARS


class WebhookForm(forms.Form):
    url = forms.CharField(
        label="Receiver's address",
        max_length=URL_MAX_CHARS,
        help_text="An https:// address that accepts a POST of JSON. Each delivery is signed: see how to check it.",
    )
    events = forms.MultipleChoiceField(
        label="Events it receives", choices=WebhookEvent.choices, widget=forms.CheckboxSelectMultiple
    )
    description = forms.CharField(
        max_length=DESCRIPTION_MAX_CHARS, required=False, help_text="Optional: what receives them, e.g. “team chat”."
    )
    is_active = forms.BooleanField(label="Switched on", required=False, initial=True)
