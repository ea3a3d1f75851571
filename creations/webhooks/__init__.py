"""Webhooks: a workspace's receivers, told by a signed POST when its runs end and its versions are made."""
