"""Forms for the creation pages: they parse and explain; the services decide."""

from typing import Any

from django import forms
from django.conf import settings
from django.core import validators
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

from creations.models import ArtifactKind, Visibility
from workspaces.models import ModelEndpoint, Workspace

DEMO_MODEL_CHOICE = ""
DEMO_MODEL_LABEL_TEXT = "Demo model (replay of bundled trajectories, no API key)"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one <input type=file multiple>, each checked for size and type."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        uploads = data if isinstance(data, list | tuple) else ([data] if data else [])
        errors: list[str] = []
        allowed = {ext.lower().lstrip(".") for ext in settings.UPLOAD_ALLOWED_EXTENSIONS}
        for upload in uploads:
            name = getattr(upload, "name", "") or ""
            extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            if extension not in allowed:
                errors.append(f"{name or 'A file'}: this type of file is not accepted.")
            elif (upload.size or 0) > settings.UPLOAD_MAX_FILE_BYTES:
                errors.append(f"{name}: too large (at most {filesizeformat(settings.UPLOAD_MAX_FILE_BYTES)} per file).")
        if len(uploads) > settings.RUN_INPUT_MAX_FILES:
            errors.append(f"Attach at most {settings.RUN_INPUT_MAX_FILES} files.")
        if sum(u.size or 0 for u in uploads) > settings.RUN_INPUT_MAX_BYTES:
            errors.append(f"The files are too large together (at most {filesizeformat(settings.RUN_INPUT_MAX_BYTES)}).")
        if errors:
            raise forms.ValidationError(errors)
        return list(uploads)


class CreationForm(forms.Form):
    brief = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "placeholder": "A 3-day Tokyo food map, with one pin per meal…"}),
        help_text="Say what you would like made. The agent reads it, works in its own sandboxed computer, "
        "and leaves the result as files.",
    )
    title = forms.CharField(max_length=200, required=False, help_text="Optional; the brief's start is used otherwise.")
    uploads = MultipleFileField(required=False, label="Input files")
    model = forms.ChoiceField(label="Model", required=False)
    visibility = forms.ChoiceField(
        choices=Visibility.choices, initial=Visibility.WORKSPACE, widget=forms.RadioSelect, label="Who can see it"
    )
    max_steps = forms.IntegerField(required=False, min_value=1, label="Maximum steps")
    max_seconds = forms.IntegerField(required=False, min_value=1, label="Maximum time (seconds)")
    max_tokens = forms.IntegerField(required=False, min_value=1, label="Maximum model tokens")
    starter = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.workspace = workspace
        self.endpoints = {str(e.pk): e for e in ModelEndpoint.objects.filter(workspace=workspace, is_enabled=True)}
        model_field = self.fields["model"]
        assert isinstance(model_field, forms.ChoiceField)
        model_field.choices = [(DEMO_MODEL_CHOICE, DEMO_MODEL_LABEL_TEXT)] + [
            (pk, f"{e.name} ({e.model})") for pk, e in self.endpoints.items()
        ]
        brief_field = self.fields["brief"]
        brief_field.validators.append(validators.MaxLengthValidator(settings.RUN_BRIEF_MAX_CHARS))
        brief_field.widget.attrs["maxlength"] = str(settings.RUN_BRIEF_MAX_CHARS)
        for name, ceiling in (
            ("max_steps", workspace.run_max_steps),
            ("max_seconds", min(workspace.run_max_seconds, settings.RUN_MAX_SECONDS_CEILING)),
            ("max_tokens", workspace.run_max_tokens),
        ):
            field = self.fields[name]
            assert isinstance(field, forms.IntegerField)
            field.max_value = ceiling
            field.validators.append(validators.MaxValueValidator(ceiling))
            field.widget.attrs.update({"max": str(ceiling), "placeholder": f"workspace limit: {ceiling}"})
        self.fields["uploads"].help_text = (
            f"Up to {settings.RUN_INPUT_MAX_FILES} files, {filesizeformat(settings.UPLOAD_MAX_FILE_BYTES)} each "
            f"({filesizeformat(settings.RUN_INPUT_MAX_BYTES)} together); they appear in /testbed/input. "
            f"Accepted: {', '.join(sorted(settings.UPLOAD_ALLOWED_EXTENSIONS))}."
        )
        self.fields["uploads"].widget.attrs["accept"] = ",".join(f".{e}" for e in settings.UPLOAD_ALLOWED_EXTENSIONS)

    def clean_model(self) -> ModelEndpoint | None:
        value = self.cleaned_data.get("model") or DEMO_MODEL_CHOICE
        return None if value == DEMO_MODEL_CHOICE else self.endpoints.get(value)


class ForkForm(forms.Form):
    brief = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Edited brief",
        help_text="A new creation with this brief and the same input files starts at once.",
    )


class GalleryFilterForm(forms.Form):
    kind = forms.ChoiceField(choices=[("", "All kinds"), *ArtifactKind.choices], required=False)
