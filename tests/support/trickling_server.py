"""An HTTP server on 127.0.0.1 that answers as slowly as it can without ever going silent: one
byte every `every` seconds, of its status line or of a JSON body it promises to be large. A
per-read timeout longer than `every` never fires against it."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

ANSWER_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"


@contextmanager
def trickling_server(*, part: str, every: float, for_seconds: float = 30) -> Iterator[str]:
    """Its base URL (http://127.0.0.1:PORT/v1). `part`: "status line" (the answer's first line a
    byte at a time) or "body" (its head at once, then the body a byte at a time). Each connection
    trickles for at most `for_seconds`, then the server closes it."""
    assert part in ("status line", "body")
    stopping = threading.Event()

    class Trickle(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            connection: socket.socket = self.request
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                received += chunk
            trickled = ANSWER_HEAD if part == "status line" else b" " * 1_000_000
            if part == "body":
                connection.sendall(ANSWER_HEAD)
            until = time.monotonic() + for_seconds
            for byte in trickled:
                if stopping.wait(every) or time.monotonic() > until:
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return  # the client gave up

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Trickle)
    serving = threading.Thread(target=server.serve_forever, name="trickling-server", daemon=True)
    serving.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
