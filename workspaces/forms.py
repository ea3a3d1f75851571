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
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this email already exists. Try logging in.")
        return email


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


class WorkspaceDeleteForm(forms.Form):
    confirm = forms.CharField(max_length=60, label="Type the workspace's address to confirm")


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)
    email = forms.EmailField(required=False, help_text="Optional: we mail the link there. Either way you get the link.")


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)
