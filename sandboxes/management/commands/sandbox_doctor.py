"""`python manage.py sandbox_doctor [--fix] [--quick]`: is the sandbox machinery healthy?"""

from __future__ import annotations

from typing import Any

import docker
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandboxes.container_spec import SandboxConfig
from sandboxes.cpu_priority import TIERS, configured, current_engine, prepare_sandbox_cgroup
from sandboxes.doctor import run_checks
from sandboxes.firewall import policy_runner
from sandboxes.network import apply_egress_policy, ensure_network


class Command(BaseCommand):
    help = (
        "Check the Docker engine, the gVisor runtime, the sandboxes' CPU priority, the sandbox image"
        " and the network policy."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--fix",
            action="store_true",
            help="Prepare the sandboxes' weighed cgroups, create the sandbox network and apply its policy.",
        )
        parser.add_argument("--quick", action="store_true", help="Do not start a test sandbox.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["fix"]:
            engine = current_engine()
            if engine is not None:
                for tier in TIERS:
                    self.stdout.write(prepare_sandbox_cgroup(configured(tier), engine, tier=tier).summary() + ".")
            config = SandboxConfig.from_settings()
            if config.network_mode == "internet":
                client = docker.from_env()
                ensure_network(client, config.network)
                runner = policy_runner(client, config.image)
                apply_egress_policy(config.network, runner)
                self.stdout.write(f"Network and egress policy applied in {runner.where}.")
        failed = 0
        for check in run_checks(start_one=not options["quick"]):
            if check.ok and not check.warning:
                self.stdout.write(self.style.SUCCESS(f"OK    {check.name}: {check.detail}"))
            elif check.ok:
                self.stdout.write(self.style.WARNING(f"WARN  {check.name}: {check.detail}\n      fix: {check.fix}"))
            else:
                failed += 1
                self.stdout.write(self.style.ERROR(f"FAIL  {check.name}: {check.detail}\n      fix: {check.fix}"))
        if failed:
            raise CommandError(f"{failed} check(s) failed.")
