"""Watching a run to its end at the terminal: its trajectory live, Ctrl-C to ask
whether to cancel it, its files downloaded at the end, and an exit code that says
whether it succeeded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from atelier_cli.api_client import ApiClient
from atelier_cli.downloads import ArtifactDownloader
from atelier_cli.errors import ApiError, CliError
from atelier_cli.event_stream import RunFollower
from atelier_cli.terminal import ask_yes
from atelier_cli.trajectory import TrajectoryPrinter

EXIT_DETACHED = 130  # what a shell reports for a command ended by Ctrl-C


class Detached(CliError):
    """The person stopped watching; the run goes on."""

    exit_code = EXIT_DETACHED
    prefix = ""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def follow_again_hint(run_id: int, output: Path | None) -> str:
    command = f"atelier follow {run_id}" + (f" --output {output}" if output else "")
    return f"Follow it again with: {command}"


def watch_run(client: ApiClient, run: dict[str, Any], *, output: Path | None) -> int:
    run_id = int(run["id"])
    printer = TrajectoryPrinter()
    follower = RunFollower(client, run_id, printer)
    cancelling = False
    while True:
        try:
            final = follower.follow()
            break
        except KeyboardInterrupt:
            printer.end_line()
            if cancelling:
                raise Detached(f"Stopped following; run {run_id} is being cancelled.") from None
            try:
                cancel = ask_yes("\nCancel the run? [y/N] ")
            except KeyboardInterrupt:
                cancel = False
            if not cancel:
                _say(f"Run {run_id} goes on: {run.get('web_url', '')}")
                raise Detached(follow_again_hint(run_id, output)) from None
            try:
                client.post(f"/runs/{run_id}/cancel")
            except ApiError as error:  # it ended meanwhile, say: following it shows how
                _say(f"Could not cancel run {run_id}: {error}")
            else:
                _say(f"Cancelling run {run_id}…  (Ctrl-C again to stop following)")
            cancelling = True
    if output is not None:
        ArtifactDownloader(client, output).download_run(run_id)
    if final.get("status") == "succeeded":
        return 0
    reason = final.get("reason") or "no reason given"
    _say(f"Run {run_id} ended {final.get('status')}: {reason}")
    return 1
