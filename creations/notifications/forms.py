from __future__ import annotations

from typing import Any

from django import forms

from creations.notifications.selectors import Choice


class NotificationSettingsForm(forms.Form):
    """Two boxes per kind: in the page, by e-mail (none for the kinds that are never mailed)."""

    def __init__(self, *args: Any, choices: list[Choice], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kinds = choices
        for choice in choices:
            self.fields[f"{choice.kind}_in_page"] = forms.BooleanField(
                required=False, initial=choice.in_page, label=f"{choice.label}: in the page"
            )
            if choice.mailed:
                self.fields[f"{choice.kind}_email"] = forms.BooleanField(
                    required=False, initial=choice.email, label=f"{choice.label}: by e-mail"
                )

    def rows(self) -> list[tuple[Choice, forms.BoundField, forms.BoundField | None]]:
        return [
            (choice, self[f"{choice.kind}_in_page"], self[f"{choice.kind}_email"] if choice.mailed else None)
            for choice in self.kinds
        ]

    def chosen(self) -> list[Choice]:
        data = self.cleaned_data
        return [
            Choice(
                kind=choice.kind,
                in_page=bool(data.get(f"{choice.kind}_in_page")),
                email=bool(data.get(f"{choice.kind}_email")),
            )
            for choice in self.kinds
        ]
