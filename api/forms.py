from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User

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
    # A token acts as its person everywhere, for as long as it lasts: a browser left signed in is not
    # enough to make one.
    password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        label="Your password",
        help_text="Asked again: a token acts as you.",
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password.")
        return password
