"""One `docker exec` with an attached socket: send stdin, read demultiplexed
stdout/stderr frames as they arrive, half-close stdin, read the exit code.

Docker sends a non-tty exec's output as frames: an 8-byte header (stream id,
3 zero bytes, big-endian length) then the payload. Reading frame by frame with
a deadline keeps memory bounded and lets callers stream output.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

STDOUT = 1
STDERR = 2
_HEADER = struct.Struct(">BxxxL")
_RECV_SIZE = 65536


class ExecClosed(EOFError):
    """The exec's output ended (the process exited or the sandbox stopped)."""


class ExecConnection:
    def __init__(self, api: Any, exec_id: str, raw: Any) -> None:
        self._api = api
        self.exec_id = exec_id
        self._raw = raw  # keeps the SocketIO (and the HTTP response) alive
        self._sock: socket.socket = raw._sock
        self._buffer = bytearray()
        self._closed = False

    @classmethod
    def open(
        cls,
        api: Any,
        container_id: str,
        argv: list[str],
        *,
        user: str = "1000:1000",
        workdir: str | None = None,
        environment: dict[str, str] | None = None,
        stdin: bool = True,
    ) -> ExecConnection:
        created = api.exec_create(
            container_id,
            argv,
            stdin=stdin,
            stdout=True,
            stderr=True,
            tty=False,
            user=user,
            workdir=workdir,
            environment=environment,
        )
        raw = api.exec_start(created["Id"], socket=True, tty=False, demux=False)
        return cls(api, created["Id"], raw)

    def send(self, data: bytes | memoryview) -> None:
        self._sock.sendall(data)

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def _fill(self, deadline: float | None) -> bool:
        """Receive more bytes; False when the deadline passed first."""
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._sock], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = self._sock.recv(_RECV_SIZE)
        except OSError as exc:
            raise ExecClosed(str(exc)) from exc
        if not chunk:
            raise ExecClosed("end of output")
        self._buffer += chunk
        return True

    def read_frame(self, deadline: float | None = None) -> tuple[int, bytes] | None:
        """The next (stream, payload) frame, or None if the deadline passes first.
        Raises ExecClosed at the end of the output."""
        while len(self._buffer) < _HEADER.size:
            if not self._fill(deadline):
                return None
        stream, length = _HEADER.unpack_from(self._buffer)
        while len(self._buffer) < _HEADER.size + length:
            if not self._fill(deadline):
                return None
        payload = bytes(self._buffer[_HEADER.size : _HEADER.size + length])
        del self._buffer[: _HEADER.size + length]
        return stream, payload

    def frames(self, deadline: float | None = None) -> Iterator[tuple[int, bytes]]:
        """All frames until the end of output; TimeoutError past the deadline."""
        while True:
            try:
                frame = self.read_frame(deadline)
            except ExecClosed:
                return
            if frame is None:
                raise TimeoutError("exec did not finish in time")
            yield frame

    def exit_code(self, *, wait_seconds: float = 0.5) -> int | None:
        """The process's exit code once Docker has it; None if it still runs after `wait_seconds`."""
        deadline = time.monotonic() + wait_seconds
        while True:  # the exit code lands shortly after the output ends
            info = self._api.exec_inspect(self.exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def pid(self) -> int | None:
        info = self._api.exec_inspect(self.exec_id)
        return int(info["Pid"]) if info.get("Pid") else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for closer in (self._sock.close, self._raw.close):
            with contextlib.suppress(OSError):
                closer()
