"""`manage.py rotate_field_keys`: every stored secret re-encrypted under the first of
FIELD_ENCRYPTION_KEYS (workspaces/key_rotation.py); exits 1 naming the values no key opens."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from workspaces.key_rotation import stored_secrets_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret (model endpoint API keys) under the first key of FIELD_ENCRYPTION_KEYS. "
        "Afterwards the keys after the first can be removed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report = stored_secrets_rotate()
        self.stdout.write(f"Re-encrypted {report.reencrypted} stored secret(s) under the first key.")
        if report.unreadable:
            listed = "\n  ".join(report.unreadable)
            raise CommandError(
                f"{len(report.unreadable)} stored secret(s) open with none of FIELD_ENCRYPTION_KEYS and were left "
                f"as they are:\n  {listed}\nAdd the key they were encrypted with back to the list and run this "
                "again, or have them entered again (the Models page asks for it)."
            )
        self.stdout.write("Every stored secret opens with the first key alone: the other keys may be removed.")
