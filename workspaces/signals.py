"""Every new user gets a personal workspace, whichever way the account was made."""

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from workspaces.services import workspace_create_personal


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="workspaces_personal_workspace")
def create_personal_workspace(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if created and not raw:
        workspace_create_personal(user=instance)
