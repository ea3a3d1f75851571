"""Invitations: a link that lets one person into a workspace with a role, once, before it expires.

The token is 32 random bytes shown once (and mailed when an address is
given); the database keeps its SHA-256 only. Accepting is one conditional
UPDATE, so a link used twice at the same moment admits one person.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from workspaces.announcements import invitation_created
from workspaces.models import Invitation, Membership, Role, Workspace
from workspaces.services import WorkspaceRuleError, require_manager


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class NewInvitation:
    invitation: Invitation
    url: str  # shown once: the token is not stored


TOKEN_BYTES = 32
# What secrets.token_urlsafe(TOKEN_BYTES) gives: 43 characters of the URL-safe base64 alphabet.
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
MALFORMED_LINK = (
    "This is not a whole invitation link: part of it may have been cut off or changed on the way. "
    "Open the link exactly as it was sent, or ask for a new one."
)


def looks_like_a_token(token: str) -> bool:
    """Whether a link's last part has the shape of an invitation token (known or not)."""
    return _TOKEN_SHAPE.fullmatch(token) is not None


def invitation_url(token: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}{reverse('invitation_accept', args=[token])}"


@transaction.atomic
def invitation_create(*, workspace: Workspace, actor: User, role: str, email: str = "") -> NewInvitation:
    actor_membership = require_manager(workspace, actor)
    if workspace.is_personal:
        raise WorkspaceRuleError("A personal workspace has no other members: create a team workspace to invite people.")
    if role not in Role.values:
        raise WorkspaceRuleError("Choose one of the roles.", field="role")
    if role == Role.OWNER and actor_membership.role != Role.OWNER:
        raise WorkspaceRuleError("Only an owner can invite another owner.", field="role")
    email = email.strip().lower()
    if email and Membership.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise WorkspaceRuleError(f"{email} is already a member of this workspace.", field="email")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    invitation = Invitation.objects.create(
        workspace=workspace,
        role=role,
        email=email,
        token_hash=_hash(token),
        created_by=actor,
        expires_at=timezone.now() + timedelta(seconds=settings.INVITATION_MAX_AGE_SECONDS),
    )
    url = invitation_url(token)
    if email:
        transaction.on_commit(lambda: _send(invitation, url, actor))
        invitation_created.send(sender=Invitation, invitation=invitation, actor=actor)
    return NewInvitation(invitation=invitation, url=url)


def _send(invitation: Invitation, url: str, actor: User) -> None:
    send_mail(
        subject=f"{actor.get_username()} invites you to {invitation.workspace.name} on Atelier",
        message=(
            f"{actor.get_username()} invites you to join the workspace “{invitation.workspace.name}” on Atelier "
            f"as {invitation.get_role_display().lower()}.\n\nAccept: {url}\n\n"
            f"The link works once and expires on {invitation.expires_at:%Y-%m-%d %H:%M} UTC."
        ),
        from_email=None,
        recipient_list=[invitation.email],
    )


def invitation_revoke(*, invitation: Invitation, actor: User) -> None:
    require_manager(invitation.workspace, actor)
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def invitation_for_token(token: str) -> Invitation | None:
    return Invitation.objects.select_related("workspace").filter(token_hash=_hash(token)).first()


def invitation_problem(invitation: Invitation | None) -> str | None:
    """Why the link cannot be used, or None when it can."""
    if invitation is None:
        return "This invitation link is not valid. Ask for a new one."
    if invitation.revoked_at is not None:
        return "This invitation was withdrawn. Ask for a new one."
    if invitation.accepted_at is not None:
        return "This invitation has already been used. Ask for a new one."
    if invitation.expires_at <= timezone.now():
        return "This invitation has expired. Ask for a new one."
    return None


@transaction.atomic
def invitation_accept(*, token: str, user: User) -> Membership:
    invitation = invitation_for_token(token)
    problem = invitation_problem(invitation)
    if problem or invitation is None:
        raise WorkspaceRuleError(problem or "This invitation link is not valid.")
    existing = Membership.objects.filter(workspace=invitation.workspace, user=user).first()
    if existing is not None:
        raise WorkspaceRuleError(f"You are already a member of {invitation.workspace.name}.")
    claimed = Invitation.objects.filter(
        pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    ).update(accepted_at=timezone.now(), accepted_by=user)
    if not claimed:  # used (or withdrawn) a moment ago
        raise WorkspaceRuleError("This invitation has already been used. Ask for a new one.")
    return Membership.objects.create(workspace=invitation.workspace, user=user, role=invitation.role)
