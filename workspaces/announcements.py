"""What the workspaces tell the rest of the platform, without knowing who listens.

`invitation_created(invitation, actor)` is sent inside the transaction that made an invitation
addressed to someone (one with an e-mail address): a person who already has an account there
can be told in the platform too."""

from django.dispatch import Signal

invitation_created = Signal()
