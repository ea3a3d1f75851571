"""A webhook receiver on loopback: it keeps every delivery it gets (headers, body, when) and answers
each with the next status of its script (the last one repeated), so a test scripts 500, 500, 200."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.time() when it arrived


class WebhookReceiver:
    """`hold`: while it is clear, each delivery is kept (received, not answered), as a slow receiver does."""

    def __init__(self, statuses: Sequence[int] = (200,), *, hold: threading.Event | None = None) -> None:
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.arrived:
                    receiver.received.append(Received(dict(self.headers.items()), body, time.time()))
                    status = statuses[min(len(receiver.received), len(statuses)) - 1]
                    receiver.arrived.notify_all()
                if hold is not None:
                    hold.wait(timeout=30)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/atelier"

    def wait_for(self, count: int, *, timeout: float = 30) -> list[Received]:
        """The first `count` deliveries, once they have arrived (fails after `timeout` seconds)."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.received) >= count, timeout), (
                f"{len(self.received)} deliveries arrived, not {count}"
            )
            return self.received[:count]

    def __enter__(self) -> WebhookReceiver:
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
