"""`python manage.py create "brief" [--input DIR] [--model NAME] [--output DIR]`:
one creation from the terminal, with its trajectory printed live.

The default model is the demo (a bundled replay); any OpenAI-compatible
endpoint works with --model NAME --base-url URL [--api-key KEY].
Ctrl-C cancels the run (a second one aborts at once); the sandbox is always
removed. Exit status: 0 when the run ended (submitted or a limit), 1 when it
failed (model or sandbox error) or the arguments are wrong, 130 when cancelled.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandboxes.agent import (
    DEMO_MODEL_LABEL,
    DEMO_MODEL_NAME,
    AgentLimits,
    ModelClient,
    OutcomeReason,
    demo_model_client,
    model_client_for,
)
from sandboxes.agent.one_shot import FAILED_REASONS, InputError, OneShotResult, new_run_id, read_input_dir, run_one_shot
from sandboxes.agent.session import SandboxSession, SandboxStartError
from sandboxes.agent.terminal import TrajectoryPrinter
from sandboxes.pool import ColdStartProvider

CANCELLED_EXIT_STATUS = 130  # the shell convention for "stopped by Ctrl-C"


class Command(BaseCommand):
    help = "Run one creation in a gVisor sandbox, print the trajectory live and copy the files out."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("brief", help="What to make, in plain words.")
        parser.add_argument("--input", metavar="DIR", help="A directory whose files are given to the model.")
        parser.add_argument(
            "--model",
            default=DEMO_MODEL_NAME,
            help=f"Model name at --base-url, or {DEMO_MODEL_NAME!r} for the bundled replay (default).",
        )
        parser.add_argument("--output", metavar="DIR", help="Where the files go (default: ./atelier-output/<run id>).")
        parser.add_argument(
            "--base-url",
            default=os.environ.get("OPENAI_BASE_URL", ""),
            help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: $OPENAI_BASE_URL).",
        )
        parser.add_argument(
            "--api-key", default=os.environ.get("OPENAI_API_KEY", ""), help="API key (default: $OPENAI_API_KEY)."
        )
        parser.add_argument("--max-steps", type=int, default=None, help="Step limit (default: AGENT_MAX_STEPS).")
        parser.add_argument(
            "--max-seconds", type=float, default=None, help="Wall-time limit (default: AGENT_MAX_WALL_SECONDS)."
        )
        parser.add_argument("--max-tokens", type=int, default=None, help="Token budget for the run (default: none).")

    def handle(self, *args: Any, **options: Any) -> None:
        brief = str(options["brief"]).strip()
        if not brief:
            raise CommandError("The brief is empty: say what to make.")
        limits = _limits(options)
        model, bundled_inputs = self._model(brief, options)
        input_files = self._input_files(options.get("input"), bundled_inputs)
        run_id = new_run_id()
        output_dir = Path(options.get("output") or Path("atelier-output") / run_id).resolve()
        if output_dir.exists() and not output_dir.is_dir():
            raise CommandError(f"--output {output_dir} is a file, not a directory.")

        model_label = DEMO_MODEL_LABEL if options["model"] == DEMO_MODEL_NAME else options["model"]
        self.stdout.write(self.style.MIGRATE_HEADING(f"Run {run_id} · model: {model_label}"))
        self.stdout.write(f"Brief: {brief}")
        if input_files:
            self.stdout.write(f"Inputs: {', '.join(sorted(input_files))}")
        result = self._run(
            brief=brief, model=model, limits=limits, input_files=input_files, output_dir=output_dir, run_id=run_id
        )
        self._report(result, output_dir)

    # --- arguments ------------------------------------------------------------

    def _model(self, brief: str, options: dict[str, Any]) -> tuple[ModelClient, dict[str, bytes]]:
        name = str(options["model"]).strip()
        if name == DEMO_MODEL_NAME:
            demo = demo_model_client(brief)
            return demo, dict(demo.trajectory.inputs)
        base_url = str(options.get("base_url") or "").strip()
        if not name:
            raise CommandError("--model is empty.")
        if not base_url:
            raise CommandError(f"--base-url is required for the model {name!r} (or set OPENAI_BASE_URL).")
        if not base_url.startswith(("http://", "https://")):
            raise CommandError(f"--base-url must start with http:// or https://, not {base_url!r}.")
        return model_client_for(base_url=base_url, model=name, api_key=str(options.get("api_key") or "")), {}

    def _input_files(self, directory: str | None, bundled: dict[str, bytes]) -> dict[str, bytes]:
        if directory is None:
            if bundled:
                self.stdout.write("No --input given: using the demo's bundled input files.")
            return bundled
        try:
            return read_input_dir(Path(directory), max_bytes=settings.SANDBOX_COPY_IN_MAX_BYTES)
        except (InputError, OSError) as error:
            raise CommandError(f"--input: {error}") from None

    # --- the run --------------------------------------------------------------

    def _run(self, **run: Any) -> OneShotResult:
        cancel = threading.Event()
        sessions: list[SandboxSession] = []

        def on_interrupt(_signum: int, _frame: FrameType | None) -> None:
            cancel.set()
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C aborts at once
            for session in sessions:  # interrupts a running command; the release is then a no-op
                threading.Thread(target=session.stop_sandbox, name="cli-stop", daemon=True).start()

        in_main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, on_interrupt) if in_main_thread else None
        printer = TrajectoryPrinter(self._write_live, self.style)
        try:
            return run_one_shot(
                provider=ColdStartProvider(),  # a one-off process has no warm pool to draw from
                emit=printer,
                cancel=cancel,
                on_session=sessions.append,
                **run,
            )
        except SandboxStartError as error:
            raise CommandError(f"The sandbox could not be prepared: {error}") from None
        except KeyboardInterrupt:
            raise CommandError("Aborted; the sandbox was removed.", returncode=CANCELLED_EXIT_STATUS) from None
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, previous or signal.default_int_handler)

    def _write_live(self, text: str) -> None:
        self.stdout.write(text, ending="")
        self.stdout.flush()

    def _report(self, result: OneShotResult, output_dir: Path) -> None:
        outcome, usage = result.outcome, result.outcome.usage
        self.stdout.write(
            f"Tokens: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion, {usage.steps} step(s)."
        )
        copied = result.copied
        if copied is not None:
            self.stdout.write(self.style.MIGRATE_HEADING(f"Files in {output_dir}:"))
            for file in copied.files:
                self.stdout.write(f"  {file.path}  ({_size(file.size)})")
            if not copied.files:
                self.stdout.write("  (none: /testbed/output was empty)")
            for name, reason in copied.rejected:
                self.stdout.write(self.style.WARNING(f"  not copied: {name} — {reason}"))
            if copied.rejected_unlisted:
                more = f"{'at least ' if not copied.counted_all else ''}{copied.rejected_unlisted:,} more"
                self.stdout.write(self.style.WARNING(f"  and {more} not copied"))
            if copied.truncated:
                self.stdout.write(
                    self.style.WARNING("  the size or file-count limit was reached: the top of the folder came first")
                )
        elif result.copy_error:
            self.stdout.write(self.style.WARNING(f"No files were copied: {result.copy_error}"))
        if outcome.reason is OutcomeReason.CANCELLED:
            raise CommandError("Cancelled; the sandbox was removed.", returncode=CANCELLED_EXIT_STATUS)
        if outcome.reason in FAILED_REASONS:
            raise CommandError(f"The run failed ({outcome.reason}): {outcome.message}")


def _limits(options: dict[str, Any]) -> AgentLimits:
    steps = options.get("max_steps")
    seconds = options.get("max_seconds")
    tokens = options.get("max_tokens")
    if steps is not None and steps < 1:
        raise CommandError("--max-steps must be at least 1.")
    if seconds is not None and seconds <= 0:
        raise CommandError("--max-seconds must be more than 0.")
    if tokens is not None and tokens < 1:
        raise CommandError("--max-tokens must be at least 1.")
    return AgentLimits(
        max_steps=steps or settings.AGENT_MAX_STEPS,
        max_tokens=tokens,
        max_wall_seconds=seconds or settings.AGENT_MAX_WALL_SECONDS,
        command_timeout=float(settings.SANDBOX_COMMAND_TIMEOUT),
    )


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"
