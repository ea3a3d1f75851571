"""Who may see a creation or run: members of its workspace, or anyone when it is public."""

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404

from creations.models import Creation, Visibility
from workspaces.models import Membership
from workspaces.selectors import membership_get


def can_view_creation(*, creation: Creation, user: User | AnonymousUser) -> bool:
    if creation.visibility == Visibility.PUBLIC:
        return True
    membership = membership_get(workspace=creation.workspace_id, user=user)
    if membership is None:
        return False
    if creation.visibility == Visibility.PRIVATE:
        return creation.author_id == user.pk
    return True


def creation_viewable_or_404(*, creation: Creation, user: User | AnonymousUser) -> None:
    if not can_view_creation(creation=creation, user=user):
        raise Http404("No such creation.")


def membership_for_creation(*, creation: Creation, user: User | AnonymousUser) -> Membership | None:
    return membership_get(workspace=creation.workspace_id, user=user)
