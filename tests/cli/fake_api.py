"""An API answered in memory (httpx's MockTransport), for the client's parts whose
failures a real server will not produce on demand: a connection dropped mid-stream,
an answer lost after the request arrived. The end-to-end test uses the real server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import Credentials

SERVER = "http://atelier.test"
Handler = Callable[[httpx.Request], httpx.Response]


class DroppedStream(httpx.SyncByteStream):
    """A body that sends `data`, then loses the connection."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __iter__(self) -> Iterator[bytes]:
        yield self.data
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


class FakeApi:
    """Routes by (method, path under /api/v1); records every request."""

    def __init__(self, routes: dict[tuple[str, str], Handler]) -> None:
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path.removeprefix("/api/v1")
        handler = self.routes.get((request.method, path))
        if handler is None:
            return httpx.Response(404, json={"title": "Not found", "status": 404, "detail": "No such thing."})
        return handler(request)

    def client(self) -> ApiClient:
        credentials = Credentials(url=SERVER, token="atl_test")
        return ApiClient(credentials, transport=httpx.MockTransport(self), sleep=lambda seconds: None)

    def sent(self, method: str, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == method and r.url.path == "/api/v1" + path]
