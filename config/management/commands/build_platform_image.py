"""`python manage.py build_platform_image [--offline] [--force]`."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.platform_image import build_platform_images
from sandboxes.image import ImageBuildError


class Command(BaseCommand):
    help = (
        "Build the platform image (web, worker, beat) and the S3 store's image for docker-compose.yml"
        " (each skipped when an image with the same inputs exists)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--offline",
            action="store_true",
            help="Base the images on an mmdebstrap bookworm imported into Docker (no registry needed).",
        )
        parser.add_argument("--force", action="store_true", help="Rebuild even when up to date.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        try:
            images = build_platform_images(
                offline=options["offline"], force=options["force"], log=lambda line: self.stdout.write(line)
            )
        except ImageBuildError as exc:
            raise CommandError(str(exc)) from exc
        for outcome in (images.platform, images.store):
            verb = "Built" if outcome.built else "Up to date:"
            self.stdout.write(self.style.SUCCESS(f"{verb} {outcome.tag} (also tagged latest)"))
        self.stdout.write(f"{time.monotonic() - started:.0f} s")
