"""How tests/cli runs `atelier`: in this process, against the real platform's API or an API
answered in memory (tests/cli/running.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from tests.cli.fake_api import SERVER
from tests.cli.running import Atelier, AtelierOn

PLATFORM = "http://testserver"


@pytest.fixture
def atelier_on(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> AtelierOn:
    """`atelier` whose requests go through the transport given (a FakeApi's, say)."""

    def on(transport: httpx.BaseTransport) -> Atelier:
        return Atelier(monkeypatch, capsys, tmp_path / "config", transport, url=SERVER)

    return on


@pytest.fixture
def platform_api(db: None) -> Iterator[httpx.WSGITransport]:
    """The platform's own API, called in this process and the test's transaction."""
    # As Django's test client does: a request ending must not close the test's connection.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        # WSGIHandler, not get_wsgi_application(): Django is set up, and setting it up again would
        # point its log handlers at this test's captured stderr, closed once the test ends.
        yield httpx.WSGITransport(app=WSGIHandler())
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@pytest.fixture
def atelier_on_platform(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    platform_api: httpx.WSGITransport,
) -> Atelier:
    """`atelier` against the real API (no server started: no live event stream)."""
    return Atelier(monkeypatch, capsys, tmp_path / "config", platform_api, url=PLATFORM)
