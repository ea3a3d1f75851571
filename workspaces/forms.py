from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from workspaces.models import Role


class SignUpForm(UserCreationForm[User]):
    email = forms.EmailField(required=True, help_text="Used for password resets.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        # An email already in use is no mistake to point out here: the sign-up view answers it as
        # it answers any other, so the form does not tell strangers who has an account.
        return str(self.cleaned_data["email"]).strip().lower()


class WorkspaceCreateForm(forms.Form):
    name = forms.CharField(max_length=100)
    slug = forms.CharField(
        max_length=60,
        required=False,
        label="Address",
        help_text="Lowercase letters, digits and hyphens; from the name when empty.",
    )


class WorkspaceRenameForm(forms.Form):
    name = forms.CharField(max_length=100)
    viewers_may_comment = forms.BooleanField(
        required=False,
        label="Viewers may comment",
        help_text="Viewers watch and do not start runs; with this on they also comment on the creations they see.",
    )


class WorkspaceDeleteForm(forms.Form):
    confirm = forms.CharField(max_length=60, label="Type the workspace's address to confirm")


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)
    email = forms.EmailField(required=False, help_text="Optional: we mail the link there. Either way you get the link.")


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class ModelEndpointForm(forms.Form):
    """What a person types; the rules (address, key, JSON) are the service's,
    so the admin, this form and any other caller get the same answers."""

    name = forms.CharField(max_length=80, help_text="Shown in the model picker, e.g. “GPT-4.1 (team key)”.")
    base_url = forms.CharField(
        max_length=500, label="Base URL", help_text="The OpenAI-compatible API root, e.g. https://api.openai.com/v1."
    )
    model = forms.CharField(max_length=200, help_text="The model name the endpoint expects, e.g. gpt-4.1.")
    # Write-only: never rendered back, not even after an error elsewhere on the form.
    api_key = forms.CharField(
        required=False, max_length=2000, label="API key", widget=forms.PasswordInput(render_value=False)
    )
    extra_body = forms.CharField(
        required=False,
        label="Extra request body (JSON)",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text='Merged into each request, e.g. {"top_p": 0.9}.',
    )
    temperature = forms.FloatField(required=False, min_value=0, max_value=2, help_text="0 to 2; 0.7 when empty.")
    max_tokens = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1_000_000,
        label="Max tokens per reply",
        help_text="Empty: the model's own limit.",
    )
