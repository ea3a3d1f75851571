"""`python manage.py sandbox_janitor [--dry-run]`: remove orphaned sandboxes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sandboxes.janitor import default_run_active_check, sweep


class Command(BaseCommand):
    help = "Remove sandboxes whose run has ended or is unknown, and stale pool members."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Only list what would be removed.")

    def handle(self, *args: Any, **options: Any) -> None:
        removals = sweep(default_run_active_check(), dry_run=options["dry_run"])
        verb = "Would remove" if options["dry_run"] else "Removed"
        for removal in removals:
            self.stdout.write(f"{verb} {removal.name}: {removal.reason}")
        self.stdout.write(self.style.SUCCESS(f"{verb} {len(removals)} sandbox(es)."))
