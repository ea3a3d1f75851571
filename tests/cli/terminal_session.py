"""The real `atelier` console script in a subprocess, read line by line as it writes,
as a person at a terminal (or a CI job) would see it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

ATELIER = str(Path(sys.executable).parent / "atelier")
# A terminal's foreground job takes Ctrl-C's SIGINT at its default disposition, whatever the test's own
# was: a suite started in the background by a script (`make test &`) has SIGINT ignored, every child
# inherits that, and Python then never turns SIGINT into KeyboardInterrupt. So the command is started
# through this, which sets SIGINT back to its default and becomes the command (same process).
AS_A_FOREGROUND_JOB = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def atelier_env(*, url: str | None, token: str | None, config_home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ATELIER_")}
    env.update({"XDG_CONFIG_HOME": str(config_home), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"})
    if url:
        env["ATELIER_URL"] = url
    if token:
        env["ATELIER_TOKEN"] = token
    return env


class AtelierSession:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", AS_A_FOREGROUND_JOB, ATELIER, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        for name, stream in (("out", self.process.stdout), ("err", self.process.stderr)):
            threading.Thread(target=self._read, args=(name, stream), daemon=True).start()

    def _read(self, name: str, stream: IO[str]) -> None:
        # Character by character: a question ("Cancel the run? [y/N] ") ends without a newline.
        line = ""
        while char := stream.read(1):
            line += char
            if char == "\n" or line.endswith("[y/N] "):
                self.lines.put((name, line))
                line = ""
        if line:
            self.lines.put((name, line))

    def _take(self, timeout: float) -> bool:
        try:
            name, line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return False
        (self.stdout if name == "out" else self.stderr).append(line)
        return True

    @property
    def out(self) -> str:
        return "".join(self.stdout)

    @property
    def err(self) -> str:
        return "".join(self.stderr)

    def wait_for(self, text: str, *, on: str = "out", timeout: float = 90) -> None:
        """Until `text` has been written (on stdout, or stderr with on="err")."""
        deadline = time.monotonic() + timeout
        while text not in (self.out if on == "out" else self.err):
            ended = not self._take(0.2) and self.process.poll() is not None
            if ended or time.monotonic() > deadline:
                raise AssertionError(f"`atelier` never wrote {text!r}\n--- stdout\n{self.out}\n--- stderr\n{self.err}")

    def answer(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 120) -> int:
        code = self.process.wait(timeout=timeout)
        while self._take(0.5):
            pass
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def atelier(
    args: list[str], env: dict[str, str], *, stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ATELIER, *args], env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
