"""A tiny HTTP server on loopback that records which paths were requested (to catch beacons)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


class RequestLog:
    def __init__(self) -> None:
        self.paths: list[str] = []
        log = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                log.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "RequestLog":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
