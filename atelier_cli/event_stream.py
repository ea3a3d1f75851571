"""Following a run's events over Server-Sent Events until its final status.

Each event is shown once, in order: the last one shown is remembered and a new
connection resumes after it (`Last-Event-ID`), so a dropped connection, a server
restart or a pause for a question loses nothing and repeats nothing. The stream
ends after the final status; a stream that ends early is reopened.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from httpx_sse import EventSource

from atelier_cli.api_client import ApiClient
from atelier_cli.errors import Unreachable
from atelier_cli.trajectory import TrajectoryPrinter

# How long to keep trying to reconnect while no event arrives, before giving up.
RECONNECT_PATIENCE_SECONDS = 120.0
LONGEST_PAUSE = 5.0


class RunFollower:
    def __init__(
        self,
        client: ApiClient,
        run_id: int,
        printer: TrajectoryPrinter,
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

    def follow(self) -> dict[str, Any]:
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
                print(
                    f"Connection lost ({error.reason}); reconnecting after event {self.last_seq}…",
                    file=sys.stderr,
                    flush=True,
                )
                self.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
                self.reconnects += 1
                continue
            trouble_since = None
            run: dict[str, Any] = self.client.get(f"/runs/{self.run_id}")
            if run.get("is_final"):
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

    def _show(self, event: str, data: str) -> None:
        try:
            event_data = _event_data(data)
        except ValueError:
            return
        seq = event_data.get("seq")
        if not isinstance(seq, int) or seq <= self.last_seq:
            return
        kind = event_data.get("kind") or event
        payload = event_data.get("payload")
        if isinstance(kind, str) and isinstance(payload, dict):
            self.printer.show(kind, payload)
        self.last_seq = seq


def _event_data(data: str) -> dict[str, Any]:
    value = json.loads(data) if data else None
    if not isinstance(value, dict):
        raise ValueError("an event's data is a JSON object")
    return value
