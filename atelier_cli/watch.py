"""Watching a run to its end: its trajectory live at the terminal (or, with --json, its
events as JSON Lines), Ctrl-C to ask whether to cancel it, its files downloaded at the
end, and the exit status that says whether it succeeded.

The JSON Lines a script reads, one object a line, each with its `type`:
`run` (the run as it started), `event` (each event as the API streams it),
`files` (what was downloaded, with --output) and `final` (the run as it ended).
"""

from __future__ import annotations

from pathlib import Path

from atelier_cli.answers import RUN, Run, RunEvent
from atelier_cli.api_client import ApiClient
from atelier_cli.downloads import ArtifactDownloader
from atelier_cli.errors import ApiError, Detached, RunFailed
from atelier_cli.event_stream import EventSink, RunFollower
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import notice, print_record
from atelier_cli.terminal import ask_yes
from atelier_cli.trajectory import TrajectoryPrinter


class EventLines:
    """Followed events for a script: one JSON object a line on stdout."""

    def show_event(self, event: RunEvent) -> None:
        print_record("event", event=event.as_json())

    def end_line(self) -> None:
        """Nothing to finish: every record is a whole line."""


def follow_again_hint(run_id: int, output: Path | None) -> str:
    command = f"atelier follow {run_id}" + (f" --output {output}" if output else "")
    return f"Follow it again with: {command}"


def _follow(client: ApiClient, run: Run, sink: EventSink, *, output: Path | None, as_json: bool) -> Run:
    """The run, followed to its end; Ctrl-C asks a person whether to cancel it (a script's
    Ctrl-C stops following at once, leaving the run going)."""
    follower = RunFollower(client, run.id, sink)
    cancelling = False
    while True:
        try:
            return follower.follow()
        except KeyboardInterrupt:
            sink.end_line()
            if cancelling:
                raise Detached(f"Stopped following; run {run.id} is being cancelled.") from None
            try:
                cancel = not as_json and ask_yes("\nCancel the run? [y/N] ")
            except KeyboardInterrupt:
                cancel = False
            if not cancel:
                notice(f"Run {run.id} goes on: {run.web_url}")
                raise Detached(follow_again_hint(run.id, output)) from None
            try:
                client.post(f"/runs/{run.id}/cancel", RUN)
            except ApiError as error:  # it ended meanwhile, say: following it shows how
                notice(f"Could not cancel run {run.id}: {error}")
            else:
                notice(f"Cancelling run {run.id}…  (Ctrl-C again to stop following)")
            cancelling = True


def watch_run(client: ApiClient, run: Run, *, output: Path | None, as_json: bool = False) -> ExitStatus:
    """OK when the run succeeded; RunFailed (after downloading what it made) when it did not."""
    if as_json:
        print_record("run", run=run.as_json())
    sink: EventSink = EventLines() if as_json else TrajectoryPrinter()
    final = _follow(client, run, sink, output=output, as_json=as_json)
    if output is not None:
        downloader = ArtifactDownloader(client, output, for_people=not as_json)
        downloaded = downloader.download_files(run.id)
        if as_json:
            print_record("files", folder=str(output), files=[file.as_json() for file in downloaded])
    if as_json:
        print_record("final", run=final.as_json())
    if final.status == "succeeded":
        return ExitStatus.OK
    raise RunFailed(f"Run {run.id} ended {final.status}: {final.reason or 'no reason given'}")
