"""The evaluation pages' forms: they parse and explain; creations.evaluations.services decides."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from creations.evaluations.models import MAX_MODELS, Modes, Suite
from workspaces.models import ModelEndpoint, Workspace

DEMO_CHOICE = "demo"


class SuiteUploadForm(forms.Form):
    name = forms.CharField(label="Name", max_length=200)
    tasks = forms.FileField(
        label="Task file (JSON Lines)",
        help_text=(
            "One task per line: id, prompt, rule, expected, and files it needs from the zip. "
            f"At most {settings.EVALUATION_SUITE_MAX_TASKS:,} tasks and "
            f"{filesizeformat(settings.EVALUATION_SUITE_MAX_BYTES)}."
        ),
    )
    input_files = forms.FileField(
        label="Input files (zip, optional)",
        required=False,
        help_text="The files the tasks name, at most "
        f"{filesizeformat(settings.EVALUATION_SUITE_FILES_MAX_BYTES)} unpacked.",
    )


class EvaluationForm(forms.Form):
    suite = forms.ModelChoiceField(label="Suite", queryset=Suite.objects.none(), empty_label=None)
    models = forms.MultipleChoiceField(
        label="Models",
        widget=forms.CheckboxSelectMultiple,
        help_text=f"One to {MAX_MODELS}. The demo model replays recordings and cannot be evaluated.",
    )
    modes = forms.ChoiceField(label="Mode", choices=Modes.choices, widget=forms.RadioSelect, initial=Modes.BOTH)

    def __init__(self, *args: object, workspace: Workspace, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        suites = self.fields["suite"]
        assert isinstance(suites, forms.ModelChoiceField)
        suites.queryset = Suite.objects.filter(workspace=workspace)
        self.endpoints = list(
            ModelEndpoint.objects.filter(workspace=workspace, retired_at__isnull=True, is_enabled=True).order_by("name")
        )
        models = self.fields["models"]
        assert isinstance(models, forms.MultipleChoiceField)
        models.choices = [(str(e.pk), f"{e.name} ({e.model})") for e in self.endpoints] + [
            (DEMO_CHOICE, "Demo model (answers only its recorded briefs)")
        ]

    def chosen_endpoints(self) -> list[ModelEndpoint | None]:
        """The picked models; None stands for the demo model (the service refuses it, saying why)."""
        by_id = {str(endpoint.pk): endpoint for endpoint in self.endpoints}
        return [None if value == DEMO_CHOICE else by_id[value] for value in self.cleaned_data["models"]]
