"""A scripted OpenAI-compatible chat completions server, for tests and benchmarks.

It listens on 127.0.0.1 on a free port, in threads of this process from
`start()` (or the start of a `with` block) until `stop()` (or the block's
end), and answers each request with the next entry of its script, over real HTTP, so the real `openai` client (and
everything above it) is exercised. Script entries:

- `reply(text=..., tool_calls=[call(...)], reasoning=...)`: an assistant reply;
  streamed as server-sent events when the request asks for `stream: true`.
- `call("execute_bash", {"command": "ls"})` or `call("x", raw='{"bad json')`:
  a tool call; `raw` sends the arguments text verbatim (malformed on purpose).
- `http_error(500)`, `http_error(400, message=..., code=...)`: an error response.
- `drop()`: close the connection without answering; `drop(after_chunks=2)`
  breaks a stream halfway.
- `raw(b"<html>…", content_type="text/html")`: a body sent as is; `events({...}, '{"cut', done=False)`
  a stream of server-sent events as given (`delta_chunk(delta, finish_reason)` makes a well-formed one):
  what a broken endpoint or a proxy says.
- any entry takes `delay=` seconds before answering.
- a callable `entry(request_body) -> entry` decides from the request.

Every request is recorded (`requests`: body, headers, received/finished
times on the monotonic clock), which is what the benchmark measures.
When the script runs out, the server answers `exhausted` (default: HTTP 500
with a clear message) so an over-long run fails loudly.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from devstack.model_replies import completion, stream_chunks
from devstack.model_script import (
    CONTEXT_OVERFLOW,
    Drop,
    HttpError,
    Raw,
    Reply,
    ScriptEntry,
    ToolCallSpec,
    bash,
    call,
    delta_chunk,
    drop,
    events,
    http_error,
    raw,
    reply,
    submit,
)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    finished_at: float = 0.0
    answered_with: str = ""
    client_port: int = 0  # tells which TCP connection carried the request

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


class ScriptedModel:
    """The server. Use as a context manager or call start()/stop()."""

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        model: str = "scripted",
        api_key: str | None = None,
        exhausted: ScriptEntry | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script: list[ScriptEntry] = list(script)
        self.model = model
        self.api_key = api_key  # when set, other keys get HTTP 401
        self.tools_supported = True  # when False, a request with tools gets HTTP 400, as from Ollama
        self.tls = tls  # serve HTTPS with this server-side context
        self.exhausted: ScriptEntry = exhausted or HttpError(500, "the scripted model has no more replies")
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._cursor = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------

    def start(self) -> ScriptedModel:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        # It looks for shutdown() every poll_interval: the default 0.5 s would end each test half a second late.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1"

    # --- script ---------------------------------------------------------

    def play(self, script: Iterable[ScriptEntry]) -> ScriptedModel:
        """Replace the script (and forget earlier requests)."""
        with self._lock:
            self.script = list(script)
            self._cursor = 0
            self.requests = []
        return self

    def add(self, *entries: ScriptEntry) -> None:
        with self._lock:
            self.script.extend(entries)

    @property
    def remaining(self) -> int:
        return len(self.script) - self._cursor

    def _next_entry(self, body: dict[str, Any]) -> Reply | HttpError | Drop | Raw:
        with self._lock:
            if self._cursor < len(self.script):
                entry = self.script[self._cursor]
                self._cursor += 1
            else:
                entry = self.exhausted
        while callable(entry) and not isinstance(entry, Reply | HttpError | Drop | Raw):
            entry = entry(body)
        return entry

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]


def _make_handler(server: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Like real model servers (uvicorn sets TCP_NODELAY): without it, Nagle's
        # algorithm holds each streamed chunk until the client's delayed ACK, 40 ms
        # per reply on a kept-alive connection.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class names it so
            return

        def do_GET(self) -> None:
            if self._refuse_wrong_key():
                return
            if self.path.rstrip("/").endswith("/models"):
                self._json(
                    200, {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "tests"}]}
                )
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            received = time.monotonic()
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_invalid_json": raw.decode("utf-8", "replace")}
            record = RecordedRequest(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                received_at=received,
                client_port=int(self.client_address[1]),
            )
            with server._lock:
                server.requests.append(record)
            try:
                record.answered_with = self._answer(body)
            finally:
                record.finished_at = time.monotonic()

        def _answer(self, body: dict[str, Any]) -> str:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return "404"
            if self._refuse_wrong_key():
                return "401"
            if body.get("model") != server.model:
                self._json(
                    404,
                    {
                        "error": {
                            "message": f"The model `{body.get('model')}` does not exist.",
                            "type": "invalid_request_error",
                            "code": "model_not_found",
                        }
                    },
                )
                return "404"
            if body.get("tools") and not server.tools_supported:
                message = f"registry.ollama.ai/library/{server.model} does not support tools"
                self._json(400, {"error": {"message": message, "type": "api_error"}})
                return "400"
            entry = server._next_entry(body)
            if entry.delay:
                time.sleep(entry.delay)
            if isinstance(entry, HttpError):
                error = {"message": entry.message, "type": entry.error_type, "code": entry.code}
                self._json(entry.status, {"error": error}, headers=entry.headers)
                return str(entry.status)
            if isinstance(entry, Raw):
                self._send(entry.status, entry.content_type, entry.body)
                return "raw"
            if isinstance(entry, Drop) and entry.after_chunks == 0:
                self._abort()
                return "drop"
            reply_entry = entry if isinstance(entry, Reply) else Reply(text="partial answer " * 20)
            cut_after = entry.after_chunks if isinstance(entry, Drop) else None
            if body.get("stream"):
                self._stream(body, reply_entry, cut_after)
            else:
                self._json(200, completion(body, reply_entry, server.model))
            return "stream" if body.get("stream") else "json"

        def _refuse_wrong_key(self) -> bool:
            if server.api_key is None or self.headers.get("authorization") == f"Bearer {server.api_key}":
                return False
            message = "Incorrect API key provided."
            self._json(401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}})
            return True

        def _stream(self, body: dict[str, Any], entry: Reply, cut_after: int | None) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            for index, chunk in enumerate(stream_chunks(body, entry, server.model, include_usage)):
                if cut_after is not None and index >= cut_after:
                    self._abort()
                    return
                self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
            self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send(status, "application/json", json.dumps(payload).encode(), headers)

        def _send(self, status: int, content_type: str, data: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def _abort(self) -> None:
            self.close_connection = True
            try:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    return Handler


__all__ = [
    "CONTEXT_OVERFLOW",
    "Drop",
    "HttpError",
    "Raw",
    "RecordedRequest",
    "Reply",
    "ScriptEntry",
    "ScriptedModel",
    "ToolCallSpec",
    "bash",
    "call",
    "delta_chunk",
    "drop",
    "events",
    "http_error",
    "raw",
    "reply",
    "submit",
]
