"""`python manage.py build_sandbox_image [--offline] [--force]`."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandboxes.image import ImageBuildError, build_sandbox_image


class Command(BaseCommand):
    help = "Build the sandbox image (skipped when an image with the same inputs exists)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--offline",
            action="store_true",
            help="Base the image on an mmdebstrap bookworm imported into Docker (no registry needed).",
        )
        parser.add_argument("--force", action="store_true", help="Rebuild even when up to date.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        try:
            outcome = build_sandbox_image(
                offline=options["offline"], force=options["force"], log=lambda line: self.stdout.write(line)
            )
        except ImageBuildError as exc:
            raise CommandError(str(exc)) from exc
        verb = "Built" if outcome.built else "Up to date:"
        self.stdout.write(self.style.SUCCESS(f"{verb} {outcome.tag} ({time.monotonic() - started:.0f} s)"))
