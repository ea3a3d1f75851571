from __future__ import annotations

from django import forms

from api.models import TokenScope
from api.tokens import EXPIRY_MAX_DAYS, NAME_MAX_CHARS


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=NAME_MAX_CHARS, help_text="Where it will be used, say “laptop” or “nightly reports”."
    )
    scope = forms.ChoiceField(
        choices=TokenScope.choices,
        initial=TokenScope.READ,
        widget=forms.RadioSelect,
        help_text="Read: see runs, events, artifacts and usage. Read and write: also start and cancel runs.",
    )
    expires_in_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=EXPIRY_MAX_DAYS,
        label="Expires after (days)",
        help_text="Leave empty for a token that lasts until you revoke it.",
    )
