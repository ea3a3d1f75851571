"""Counting how often a creation is looked at, for the gallery's "most viewed" order."""

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import F

from creations.models import Creation


def count_creation_view(*, creation: Creation, viewer: User | AnonymousUser) -> None:
    """One more view of the creation, unless its author is looking at their own work.

    One UPDATE with F(): concurrent views all count, and nothing is read first."""
    if viewer.is_authenticated and viewer.pk == creation.author_id:
        return
    Creation.objects.filter(pk=creation.pk).update(view_count=F("view_count") + 1)
