"""A run's artifacts downloaded into a folder: each file under its path in the run,
checked against the sha256 the API gives, with progress while it arrives.

A file is written beside its final name (`.part`) and moved into place only once
it is whole and verified, so a half-downloaded or corrupted file never looks done.
A connection dropped mid-file resumes where it stopped (HTTP Range). Artifact paths
come from what a model wrote: one that would land outside the folder is refused.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from atelier_cli.api_client import ApiClient
from atelier_cli.errors import ApiError, CliError, Unreachable
from atelier_cli.terminal import human_size, wants_colour

RESUME_ATTEMPTS = 3
PROGRESS_EVERY_SECONDS = 0.1


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def safe_target(folder: Path, artifact_path: str) -> Path:
    """Where an artifact goes inside `folder`; refuses absolute paths, `..`, and paths
    that would leave the folder through a link already there."""
    pure = PurePosixPath(artifact_path)
    bad_part = any(part in ("", ".", "..") or "\\" in part or "\0" in part for part in pure.parts)
    if not pure.parts or pure.is_absolute() or bad_part:
        raise CliError(f"refused the path {artifact_path!r}: it would land outside {folder}")
    target = folder.joinpath(*pure.parts)
    if not target.resolve().is_relative_to(folder.resolve()):
        raise CliError(f"refused the path {artifact_path!r}: it would land outside {folder}")
    return target


class Progress:
    """One file's progress on a terminal's stderr (redrawn in place); silent elsewhere."""

    def __init__(self, label: str, total: int, stream: TextIO, *, clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.stream, self.clock = label, total, stream, clock
        self.live = wants_colour(stream)
        self.drawn_at = 0.0

    def update(self, done: int) -> None:
        if not self.live or self.clock() - self.drawn_at < PROGRESS_EVERY_SECONDS:
            return
        self.drawn_at = self.clock()
        percent = f"{100 * done // self.total:3d}%" if self.total else ""
        self.stream.write(f"\r\033[K{self.label}  {percent} {human_size(done)} of {human_size(self.total)}")
        self.stream.flush()

    def clear(self) -> None:
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()


class ArtifactDownloader:
    def __init__(
        self,
        client: ApiClient,
        folder: Path,
        *,
        out: TextIO | None = None,
        progress_stream: TextIO | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.folder = folder
        self.out = out or sys.stdout
        self.progress_stream = progress_stream or sys.stderr
        self.sleep = sleep

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def download_run(self, run_id: int) -> list[Path]:
        """Every artifact of the run; raises CliError naming each file that failed, after trying them all."""
        listing = self.client.get(f"/runs/{run_id}/artifacts")
        items: list[dict[str, Any]] = listing if isinstance(listing, list) else listing.get("results", [])
        if not items:
            self.say("The run made no files to download.")
            return []
        self.folder.mkdir(parents=True, exist_ok=True)
        total = sum(int(item.get("size") or 0) for item in items)
        self.say(f"Downloading {len(items)} files ({human_size(total)}) into {self.folder}{os.sep}")
        saved, failures = [], []
        for index, item in enumerate(items, 1):
            label = f"  [{index}/{len(items)}] {item.get('path')}"
            try:
                saved.append(self.download(item, label=label))
            except CliError as error:
                self.say(f"{label}  ✗ {error}")
                failures.append(f"{item.get('path')}: {error}")
        if failures:
            raise CliError("Some files could not be downloaded:\n  " + "\n  ".join(failures))
        return saved

    def download(self, item: dict[str, Any], *, label: str) -> Path:
        target = safe_target(self.folder, str(item.get("path") or ""))
        target.parent.mkdir(parents=True, exist_ok=True)
        expected = item.get("sha256") or None
        size = int(item.get("size") or 0)
        if expected and target.is_file() and file_sha256(target) == expected:
            self.say(f"{label}  already here ({human_size(size)}, sha256 matches)")
            return target
        part = target.with_name(target.name + ".part")
        try:
            self._fetch(int(item["id"]), part, Progress(label, size, self.progress_stream))
        except CliError:
            part.unlink(missing_ok=True)
            raise
        got = file_sha256(part)
        if expected and got != expected:
            part.unlink()
            raise CliError(f"its sha256 is {got}, not {expected} as the server says; the file was not kept")
        os.replace(part, target)
        checked = "sha256 verified" if expected else "no sha256 given to check"
        self.say(f"{label}  ✓ {human_size(target.stat().st_size)}, {checked}")
        return target

    def _fetch(self, artifact_id: int, part: Path, progress: Progress) -> None:
        """The artifact's bytes into `part`, resuming after a dropped connection."""
        if part.exists():
            part.unlink()  # a leftover of an earlier invocation: its bytes are not known to be this file's
        attempts = 0
        while True:
            have = part.stat().st_size if part.exists() else 0
            # Ranges count the bytes as stored: no compression, which would count others.
            headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={have}-"} if have else {})}
            try:
                with self.client.stream(
                    "GET", f"/artifacts/{artifact_id}/download", headers=headers, follow_redirects=True
                ) as response:
                    resumed = response.status_code == 206 and have > 0
                    done = have if resumed else 0
                    with part.open("ab" if resumed else "wb") as handle:
                        for chunk in response.iter_bytes():
                            handle.write(chunk)
                            done += len(chunk)
                            progress.update(done)
                progress.clear()
                return
            except ApiError as error:
                progress.clear()
                if error.status != 416 or not have:
                    raise
                part.unlink()  # the server has no bytes past what we hold: start this file again
            except Unreachable as error:
                progress.clear()
                attempts += 1
                if attempts > RESUME_ATTEMPTS:
                    raise
                self.say(f"  connection lost ({error.reason}); resuming…")
                self.sleep(min(2.0**attempts, 10.0))
