"""Following a run's events over Server-Sent Events until its final status.

Each event is shown once, in order: the last one shown is remembered and a new
connection resumes after it (`Last-Event-ID`), so a dropped connection, a server
restart or a pause for a question loses nothing and repeats nothing. The stream
ends after the final status; a stream that ends early is reopened.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Protocol

from httpx_sse import EventSource
from pydantic import ValidationError

from atelier_cli.answers import RUN, RUN_EVENT, Run, RunEvent
from atelier_cli.api_client import ApiClient
from atelier_cli.errors import Unreachable
from atelier_cli.output import notice

# How long to keep trying to reconnect while no event arrives, before giving up.
RECONNECT_PATIENCE_SECONDS = 120.0
LONGEST_PAUSE = 5.0


class EventSink(Protocol):
    """Where followed events go: the trajectory for a person, or JSON Lines for a script."""

    def show_event(self, event: RunEvent) -> None: ...

    def end_line(self) -> None: ...


class RunFollower:
    def __init__(
        self,
        client: ApiClient,
        run_id: int,
        printer: EventSink,
        *,
        after: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.printer = printer
        self.last_seq = after
        self.sleep = sleep
        self.clock = clock
        self.reconnects = 0

    def follow(self) -> Run:
        """Show events until the run is final; returns the final run (GET /runs/{id})."""
        trouble_since: float | None = None
        pause = 0.5
        while True:
            seq_before = self.last_seq
            try:
                self._read_stream()
            except Unreachable as error:
                now = self.clock()
                if self.last_seq > seq_before or trouble_since is None:
                    trouble_since, pause = now, 0.5
                if now - trouble_since > RECONNECT_PATIENCE_SECONDS:
                    raise
                self.printer.end_line()
                notice(f"Connection lost ({error.reason}); reconnecting after event {self.last_seq}…")
                self.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
                self.reconnects += 1
                continue
            trouble_since = None
            run = self.client.get(f"/runs/{self.run_id}", RUN)
            if run.is_final:
                self.printer.end_line()
                return run
            # The stream closed before the run ended (a restart, a proxy's time limit): open it again.
            self.reconnects += 1
            if self.last_seq == seq_before:
                self.sleep(1.0)

    def _read_stream(self) -> None:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self.last_seq:
            headers["Last-Event-ID"] = str(self.last_seq)
        path = f"/runs/{self.run_id}/events/stream"
        with self.client.stream("GET", path, params={"after": self.last_seq}, headers=headers) as response:
            for message in EventSource(response).iter_sse():
                self._show(message.event, message.data)

    def _show(self, event_name: str, data: str) -> None:
        """Each event once, in order; data that is not an event this client can read is
        left out rather than ending the watch."""
        try:
            fields = json.loads(data) if data else None
            if not isinstance(fields, dict):
                return
            event = RUN_EVENT.validate_python({"kind": event_name, **fields})
        except (ValueError, ValidationError):
            return
        if event.seq <= self.last_seq:
            return
        self.printer.show_event(event)
        self.last_seq = event.seq
