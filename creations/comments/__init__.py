"""Comments under a creation (and on one of its versions), with @mentions of the workspace's members.

Members talk about the work where it is; who may write, edit and delete is
workspaces.permissions'. A new comment, and a mention added by an edit, are announced with
the `comment_posted` signal (creations.comments.signals), which notifications listen to."""
