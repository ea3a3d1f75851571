"""`atelier ARGS` as a script runs it, in this process: main() with the environment a CI job
sets, its requests sent through a transport of the test's choosing (the real platform's
API in process, or an API answered in memory), and what it wrote and returned."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import Credentials, credentials_load
from atelier_cli.main import COMMANDS, main

# Any token does for an API answered in memory.
SOME_TOKEN = "atl_test"


@dataclass(frozen=True)
class Outcome:
    status: int
    out: str
    err: str

    def document(self) -> Any:
        """stdout as the one JSON document it must be."""
        return json.loads(self.out)

    def records(self) -> list[dict[str, Any]]:
        """stdout as JSON Lines: every line one object."""
        return [json.loads(line) for line in self.out.splitlines()]

    def error(self) -> dict[str, Any]:
        """The JSON error on stderr, which with --json holds one JSON object a line, the error last."""
        lines = [json.loads(line) for line in self.err.splitlines()]
        assert lines, "nothing on stderr"
        assert all("notice" in line for line in lines[:-1]), self.err
        error: dict[str, Any] = lines[-1]
        return error


class Atelier:
    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        config_home: Path,
        transport: httpx.BaseTransport,
        *,
        url: str,
    ) -> None:
        self.monkeypatch, self.capsys, self.transport, self.url = monkeypatch, capsys, transport, url
        monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
        monkeypatch.setenv("NO_COLOR", "1")

    def _client(self, credentials: Credentials | None = None) -> ApiClient:
        return ApiClient(credentials or credentials_load(), transport=self.transport, sleep=lambda seconds: None)

    def __call__(self, *args: str, token: str | None = SOME_TOKEN, stdin: str = "") -> Outcome:
        """Logged in as `token` through the environment (None: not logged in at all)."""
        if token is None:
            self.monkeypatch.delenv("ATELIER_URL", raising=False)
            self.monkeypatch.delenv("ATELIER_TOKEN", raising=False)
        else:
            self.monkeypatch.setenv("ATELIER_URL", self.url)
            self.monkeypatch.setenv("ATELIER_TOKEN", token)
        self.monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        for command in COMMANDS:  # each command's client sends through this transport
            if hasattr(command, "api_client"):
                self.monkeypatch.setattr(command, "api_client", self._client)
        self.capsys.readouterr()
        status = main(list(args))
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err, captured.err
        return Outcome(status, captured.out, captured.err)


AtelierOn = Callable[[httpx.BaseTransport], Atelier]
