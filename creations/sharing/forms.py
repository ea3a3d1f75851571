"""The share dialog's form: it parses and explains; creations.sharing.services decides."""

from __future__ import annotations

from typing import Any

from django import forms

from creations.models import Run
from creations.sharing.services import LABEL_MAX_CHARS

SHOWN = "shown"
EXPIRY_CHOICES = [("", "Never (until revoked)"), ("1", "1 day"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days")]


class ShareLinkForm(forms.Form):
    version = forms.ChoiceField(label="What it shows")
    expires_in_days = forms.TypedChoiceField(
        label="Expires", choices=EXPIRY_CHOICES, coerce=int, empty_value=None, required=False
    )
    label = forms.CharField(
        max_length=LABEL_MAX_CHARS,
        required=False,
        help_text="Optional: who it is for, so that you know which link to revoke later.",
    )

    def __init__(self, *args: Any, runs: list[Run], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.runs = {str(run.pk): run for run in runs}
        version = self.fields["version"]
        assert isinstance(version, forms.ChoiceField)
        version.choices = [
            (SHOWN, "The version the creation shows (it follows a restore)"),
            *[(str(run.pk), f"v{run.version} only ({run.get_status_display().lower()})") for run in runs],
        ]

    def pinned_run(self) -> Run | None:
        return self.runs.get(self.cleaned_data["version"])
