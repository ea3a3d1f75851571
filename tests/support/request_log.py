"""A tiny HTTP server on loopback that records which paths were requested (to catch beacons)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from tests.support.tls import self_signed_server_context


class RequestLog:
    def __init__(self, *, tls: bool = False, page: bytes = b"") -> None:
        """`page`: HTML to answer every request with (no Content-Security-Policy); else 204."""
        self.paths: list[str] = []
        log = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                log.append(self.path)
                self.send_response(200 if page else 204)
                if page:
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                if page:
                    self.wfile.write(page)

            do_POST = do_GET

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        if tls:  # with a self-signed certificate: the client must be told to accept it
            context = self_signed_server_context()
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.url = self.url.replace("http://", "https://")

    def __enter__(self) -> "RequestLog":
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
