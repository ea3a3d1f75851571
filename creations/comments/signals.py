"""What the comments tell the rest of the platform, without knowing who listens.

`comment_posted` is sent inside the transaction that saved a comment, with `comment` and
`newly_mentioned` (the ids of the people its text mentions for the first time; on an edit, only
those the edit added), and `edited` (False for a new comment)."""

from django.dispatch import Signal

comment_posted = Signal()
