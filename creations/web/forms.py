"""Forms for the creation pages: they parse and explain; the services decide."""

from typing import Any

from django import forms
from django.conf import settings
from django.core import validators
from django.core.files.uploadedfile import UploadedFile

from creations.comments.models import COMMENT_MAX_CHARS
from creations.models import TITLE_MAX_CHARS, ArtifactKind, Visibility
from creations.runs.inputs import allowed_extensions, input_rules_text
from creations.runs.limits import run_ceilings
from creations.web.gallery import DEMO_MODEL, SHOW_CREATIONS, SHOW_FILES, SORT_MOST_VIEWED, SORT_NEWEST, GalleryQuery
from workspaces.models import EndpointVerdict, ModelEndpoint, Workspace
from workspaces.selectors import workspace_endpoints

DEMO_MODEL_CHOICE = ""
# The demo model among the models to compare: accepted by the field, refused by the arena with its reason.
DEMO_CONTESTANT_CHOICE = "demo"
DEMO_MODEL_LABEL_TEXT = "Demo model (replay of bundled trajectories, no API key)"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one <input type=file multiple>. The run service checks them
    (creations.runs.inputs); this field only collects them."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        uploads = data if isinstance(data, list | tuple) else ([data] if data else [])
        return list(uploads)


class TypedTextField(forms.CharField):
    """Text as the person typed it, with line ends as the browser shows them: a textarea's lines end in
    CR LF when sent, but in LF in the browser, where the field's live counter counts them."""

    def to_python(self, value: Any) -> str:
        return str(super().to_python(value)).replace("\r\n", "\n")


def limit_length(field: forms.Field, limit: int, what: str) -> None:
    """At most `limit` characters, said when refused and counted live as typed (static/js/char_limits.js),
    never cut: without `maxlength`, which makes a browser drop silently what a paste has beyond it."""

    def within_limit(value: str) -> None:
        if len(value) > limit:
            message = f"{what} is {len(value):,} characters long, over its limit of {limit:,}: shorten it."
            raise forms.ValidationError(message, code="max_length")

    field.validators.append(within_limit)
    field.widget.attrs.pop("maxlength", None)
    field.widget.attrs["data-max-chars"] = str(limit)


def endpoint_choice_label(endpoint: ModelEndpoint) -> str:
    """How the model picker names an endpoint: marked when its last connection test failed, so nobody
    starts a run on a model that answered "wrong key" without being told."""
    label = f"{endpoint.name} ({endpoint.model})"
    if endpoint.check_verdict and endpoint.check_verdict != EndpointVerdict.WORKS:
        label += f" \u2014 last connection test failed: {endpoint.get_check_verdict_display()}"
    return label


class CreationForm(forms.Form):
    brief = TypedTextField(
        widget=forms.Textarea(attrs={"rows": 6, "placeholder": "A 3-day Tokyo food map, with one pin per meal…"}),
        help_text="Say what you would like made. The agent reads it, works in its own sandboxed computer, "
        "and leaves the result as files.",
    )
    title = forms.CharField(required=False, help_text="Optional; the brief's start is used otherwise.")
    uploads = MultipleFileField(required=False, label="Input files")
    model = forms.ChoiceField(label="Model", required=False)
    visibility = forms.ChoiceField(
        choices=Visibility.choices, initial=Visibility.WORKSPACE, widget=forms.RadioSelect, label="Who can see it"
    )
    max_steps = forms.IntegerField(required=False, min_value=1, label="Maximum steps")
    max_seconds = forms.IntegerField(required=False, min_value=1, label="Maximum time (seconds)")
    max_tokens = forms.IntegerField(required=False, min_value=1, label="Maximum model tokens")
    starter = forms.CharField(required=False, widget=forms.HiddenInput)
    # "Compare models": the same brief run with each of these (creations.arena).
    compare_models = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Models to compare",
        error_messages={"invalid_choice": "A model you chose is not one of this workspace's: choose among its models."},
    )
    blind = forms.BooleanField(
        required=False,
        label="Blind: hide which model made what until each person has voted",
        initial=True,
    )

    def __init__(self, *args: Any, workspace: Workspace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.workspace = workspace
        self.endpoints = {str(e.pk): e for e in workspace_endpoints(workspace=workspace).filter(is_enabled=True)}
        model_field = self.fields["model"]
        assert isinstance(model_field, forms.ChoiceField)
        model_field.choices = [(DEMO_MODEL_CHOICE, DEMO_MODEL_LABEL_TEXT)] + [
            (pk, endpoint_choice_label(e)) for pk, e in self.endpoints.items()
        ]
        compare_field = self.fields["compare_models"]
        assert isinstance(compare_field, forms.MultipleChoiceField)
        compare_field.choices = [(pk, endpoint_choice_label(e)) for pk, e in self.endpoints.items()] + [
            (DEMO_CONTESTANT_CHOICE, DEMO_MODEL_LABEL_TEXT)
        ]
        limit_length(self.fields["brief"], settings.RUN_BRIEF_MAX_CHARS, "The brief")
        limit_length(self.fields["title"], TITLE_MAX_CHARS, "The title")
        for name, ceiling in run_ceilings(workspace).as_dict().items():
            field = self.fields[name]
            assert isinstance(field, forms.IntegerField)
            field.max_value = ceiling
            field.validators.append(validators.MaxValueValidator(ceiling))
            field.widget.attrs.update({"max": str(ceiling), "placeholder": f"workspace limit: {ceiling}"})
        self.fields["uploads"].help_text = input_rules_text()
        self.fields["uploads"].widget.attrs["accept"] = ",".join(f".{e}" for e in allowed_extensions())

    def clean_model(self) -> ModelEndpoint | None:
        value = self.cleaned_data.get("model") or DEMO_MODEL_CHOICE
        return None if value == DEMO_MODEL_CHOICE else self.endpoints.get(value)

    def clean_compare_models(self) -> list[ModelEndpoint | None]:
        """The chosen models in the order listed, as given (duplicates too): the arena says what is wrong."""
        values = self.cleaned_data.get("compare_models") or []
        return [None if value == DEMO_CONTESTANT_CHOICE else self.endpoints[value] for value in values]

    def contestant_fields(self) -> list[Any]:
        """The workspace's models as checkboxes; the demo model is left out (and said why beside them)."""
        return [box for box in self["compare_models"] if box.data["value"] != DEMO_CONTESTANT_CHOICE]


class ForkForm(forms.Form):
    brief = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Edited brief",
        help_text="A new creation with this brief and the same input files starts at once.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["brief"], settings.RUN_BRIEF_MAX_CHARS, "The brief")


class RenameForm(forms.Form):
    title = forms.CharField(label="New title", help_text="What the gallery, the lists and the pages call it.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["title"], TITLE_MAX_CHARS, "The title")


class RefineForm(forms.Form):
    instruction = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        label="What should change?",
        help_text="The agent continues from this version's files and conversation; the result is the next version.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["instruction"], settings.RUN_INSTRUCTION_MAX_CHARS, "What should change")


class RunMessageForm(forms.Form):
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Tell the agent",
        help_text="It reads this before its next step.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["text"], settings.RUN_MESSAGE_MAX_CHARS, "The message")


class CommentForm(forms.Form):
    """A comment on a creation, or on the version shown (`on_version`); the service decides who may."""

    text = TypedTextField(
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "The logo is too small, @alice…"}),
        label="Comment",
        help_text="Mention a member with @ and their username: they are told.",
    )
    on_version = forms.BooleanField(required=False, label="About this version only")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["text"], COMMENT_MAX_CHARS, "The comment")


class CommentEditForm(forms.Form):
    text = TypedTextField(widget=forms.Textarea(attrs={"rows": 4}), label="Comment")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_length(self.fields["text"], COMMENT_MAX_CHARS, "The comment")


DELETE_WORD = "delete"


class DeleteCreationForm(forms.Form):
    """Deleting cannot be undone, so the person types a word first (no script needed)."""

    confirm = forms.CharField(
        label=f"Type “{DELETE_WORD}” to confirm",
        max_length=20,
        help_text="The creation, all its runs and their files are deleted for good.",
    )

    def clean_confirm(self) -> str:
        value = str(self.cleaned_data.get("confirm", "")).strip()
        if value.lower() != DELETE_WORD:
            raise forms.ValidationError(f"Type “{DELETE_WORD}” to delete this creation; nothing was deleted.")
        return value


SEARCH_MAX_CHARS = 200


class GalleryFilterForm(forms.Form):
    """Search, filters and order of a gallery. A value that is not one of the field's choices is said
    beside the field and left out; the rest still apply."""

    q = forms.CharField(
        required=False,
        max_length=SEARCH_MAX_CHARS,
        label="Search",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Title, brief or file name"}),
    )
    kind = forms.ChoiceField(choices=[("", "All kinds"), *ArtifactKind.choices], required=False)
    person = forms.ChoiceField(required=False, label="Person")
    model = forms.ChoiceField(required=False, label="Model")
    sort = forms.ChoiceField(
        required=False, label="Order", choices=[(SORT_NEWEST, "Newest first"), (SORT_MOST_VIEWED, "Most viewed")]
    )
    show = forms.ChoiceField(
        required=False, label="Show", choices=[(SHOW_FILES, "Every file"), (SHOW_CREATIONS, "One tile per creation")]
    )

    def __init__(self, *args: Any, people: list[str], models: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        person, model = self.fields["person"], self.fields["model"]
        assert isinstance(person, forms.ChoiceField)
        assert isinstance(model, forms.ChoiceField)
        person.choices = [("", "Anyone"), *((name, name) for name in people)]
        model.choices = [("", "Any model"), (DEMO_MODEL, "Demo model"), *((name, name) for name in models)]

    def query(self) -> GalleryQuery:
        """What the valid fields ask for (an unbound form: the whole gallery, newest first)."""
        if self.is_bound:
            self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return GalleryQuery(
            text=data.get("q", "").strip(),
            kind=data.get("kind", ""),
            person=data.get("person", ""),
            model=data.get("model", ""),
            sort=data.get("sort") or SORT_NEWEST,
            show=data.get("show") or SHOW_FILES,
        )

    def chosen(self) -> dict[str, str]:
        """The query as URL parameters, defaults left out: what the pager's links carry."""
        query = self.query()
        values = {"q": query.text, "kind": query.kind, "person": query.person, "model": query.model}
        values |= {"sort": query.sort if query.sort != SORT_NEWEST else ""}
        values |= {"show": query.show if query.show != SHOW_FILES else ""}
        return {name: value for name, value in values.items() if value}
