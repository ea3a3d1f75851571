"""An API answered in memory (httpx's MockTransport), for the client's parts whose
failures a real server will not produce on demand: a connection dropped mid-stream,
an answer lost after the request arrived. The end-to-end test uses the real server."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import Credentials
from tests.cli.recorded import numbered, sse_body

SERVER = "http://atelier.test"
Handler = Callable[[httpx.Request], httpx.Response]


def run_answer(run_id: int, **fields: Any) -> dict[str, Any]:
    """A run as the API answers it, every field of its schema (held to it by
    tests/cli/test_answers.py); `fields` replace the defaults."""
    api = f"{SERVER}/api/v1/runs/{run_id}"
    return {
        "id": run_id,
        "creation_id": 3,
        "version": 1,
        "parent_id": None,
        "instruction": "",
        "summary": "",
        "workspace": "ana",
        "title": "A poster",
        "brief": "a poster for the fair",
        "visibility": "workspace",
        "status": "queued",
        "reason": "",
        "is_final": False,
        "model": "demo",
        "model_endpoint_id": None,
        "model_hidden": False,
        "started_by": "ana",
        "created_at": "2026-03-01T10:00:00+00:00",
        "started_at": None,
        "finished_at": None,
        "steps": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "sandbox_seconds": 0.0,
        "last_seq": 0,
        "forked_from_creation_id": None,
        "web_url": f"{SERVER}/runs/{run_id}/",
        "events_url": f"{api}/events",
        "stream_url": f"{api}/events/stream",
        "artifacts_url": f"{api}/artifacts",
        **fields,
    }


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

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def client(self) -> ApiClient:
        credentials = Credentials(url=SERVER, token="atl_test")
        return ApiClient(credentials, transport=self.transport(), sleep=lambda seconds: None)

    def sent(self, method: str, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == method and r.url.path == "/api/v1" + path]


def followed_run(
    run_id: int,
    events: list[tuple[str, dict[str, Any]]],
    final: dict[str, Any],
    *,
    artifacts: dict[str, bytes] | None = None,
) -> FakeApi:
    """A run whose stream sends `events` (numbered from 1) and then ends as `final` says,
    having made `artifacts` (path: bytes)."""
    made = artifacts or {}
    routes: dict[tuple[str, str], Handler] = {
        ("GET", f"/runs/{run_id}"): lambda request: httpx.Response(200, json=final),
        ("GET", f"/runs/{run_id}/events/stream"): lambda request: httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content=sse_body(numbered(events))
        ),
        ("GET", f"/runs/{run_id}/artifacts"): lambda request: httpx.Response(
            200, json=[artifact_answer(index, path, data) for index, (path, data) in enumerate(made.items(), 1)]
        ),
    }
    for index, data in enumerate(made.values(), 1):
        routes["GET", f"/artifacts/{index}/download"] = _answering_bytes(data)
    return FakeApi(routes)


def _answering_bytes(data: bytes) -> Handler:
    return lambda request: httpx.Response(200, content=data)


def artifact_answer(artifact_id: int, path: str, data: bytes) -> dict[str, Any]:
    """An artifact as the API lists it."""
    url = f"{SERVER}/api/v1/artifacts/{artifact_id}"
    return {
        "id": artifact_id,
        "path": path,
        "name": path.rsplit("/", 1)[-1],
        "kind": "text",
        "size": len(data),
        "content_type": "text/plain",
        "sha256": hashlib.sha256(data).hexdigest(),
        "preview_url": None,
        "download_url": f"{url}/download",
    }
