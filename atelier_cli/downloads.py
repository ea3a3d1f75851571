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
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from atelier_cli.answers import ARTIFACTS, Artifact
from atelier_cli.api_client import ApiClient
from atelier_cli.errors import ApiError, CliError, Unreachable
from atelier_cli.exit_status import ExitStatus
from atelier_cli.output import notice
from atelier_cli.terminal import human_size, printable, wants_colour

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
    # A path like that is the server's answer gone wrong (or hostile), not this disk's trouble.
    refusal = CliError(
        f"refused the path {artifact_path!r}: it would land outside {folder}", exit_status=ExitStatus.SERVER_ERROR
    )
    if not pure.parts or pure.is_absolute() or bad_part:
        raise refusal
    target = folder.joinpath(*pure.parts)
    if not target.resolve().is_relative_to(folder.resolve()):
        raise refusal
    return target


class Progress:
    """One file's progress on a terminal's stderr (redrawn in place); silent elsewhere."""

    def __init__(self, label: str, total: int, stream: TextIO, *, clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.stream, self.clock = printable(label), total, stream, clock
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


@dataclass(frozen=True)
class DownloadedFile:
    artifact: Artifact
    saved_to: Path
    verified: bool  # its sha256 matched the one the API gives

    def as_json(self) -> dict[str, Any]:
        return {
            "artifact_id": self.artifact.id,
            "path": self.artifact.path,
            "saved_to": str(self.saved_to),
            "size": self.artifact.size,
            "sha256": self.artifact.sha256,
            "verified": self.verified,
        }


def _local_failure(error: OSError, what: str) -> CliError:
    reason = error.strerror or str(error)
    return CliError(f"could not write {what} ({reason})", exit_status=ExitStatus.LOCAL_FILES)


class ArtifactDownloader:
    """`for_people`: a line per file on `out`; without, nothing on it (a --json command
    reports what download_files returns), and a resumed transfer is a notice."""

    def __init__(
        self,
        client: ApiClient,
        folder: Path,
        *,
        out: TextIO | None = None,
        progress_stream: TextIO | None = None,
        sleep: Callable[[float], None] = time.sleep,
        for_people: bool = True,
    ) -> None:
        self.client = client
        self.folder = folder
        self.out = out or sys.stdout
        self.progress_stream = progress_stream or sys.stderr
        self.sleep = sleep
        self.for_people = for_people

    def say(self, text: str) -> None:
        """A line for people (with the server's file names in it: made printable)."""
        if self.for_people:
            self.out.write(printable(text) + "\n")
            self.out.flush()

    def download_run(self, run_id: int) -> list[Path]:
        """Every artifact of the run; raises CliError naming each file that failed, after trying them all."""
        return [downloaded.saved_to for downloaded in self.download_files(run_id)]

    def download_files(self, run_id: int) -> list[DownloadedFile]:
        items = self.client.get(f"/runs/{run_id}/artifacts", ARTIFACTS)
        if not items:
            self.say("The run made no files to download.")
            return []
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _local_failure(error, str(self.folder)) from error
        total = sum(item.size for item in items)
        self.say(f"Downloading {len(items)} files ({human_size(total)}) into {self.folder}{os.sep}")
        saved: list[DownloadedFile] = []
        failures: list[tuple[str, CliError]] = []
        for index, item in enumerate(items, 1):
            label = f"  [{index}/{len(items)}] {item.path}"
            try:
                saved.append(self.download(item, label=label))
            except CliError as error:
                self.say(f"{label}  ✗ {error}")
                failures.append((item.path, error))
        if failures:
            listed = "\n  ".join(f"{path}: {error}" for path, error in failures)
            # A script acts on the first failure's kind: the server's, the network's, or this disk's.
            raise CliError(f"Some files could not be downloaded:\n  {listed}", exit_status=failures[0][1].exit_status)
        return saved

    def download(self, item: Artifact, *, label: str) -> DownloadedFile:
        target = safe_target(self.folder, item.path)
        expected = item.sha256 or None
        if expected and target.is_file() and file_sha256(target) == expected:
            self.say(f"{label}  already here ({human_size(item.size)}, sha256 matches)")
            return DownloadedFile(item, target, verified=True)
        part = target.with_name(target.name + ".part")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._fetch(item.id, part, Progress(label, item.size, self.progress_stream))
            got = file_sha256(part)
            if expected and got != expected:
                raise CliError(
                    f"its sha256 is {got}, not {expected} as the server says; the file was not kept",
                    exit_status=ExitStatus.SERVER_ERROR,
                )
            os.replace(part, target)
        except CliError:
            part.unlink(missing_ok=True)
            raise
        except OSError as error:
            part.unlink(missing_ok=True)
            raise _local_failure(error, str(target)) from error
        checked = "sha256 verified" if expected else "no sha256 given to check"
        self.say(f"{label}  ✓ {human_size(target.stat().st_size)}, {checked}")
        return DownloadedFile(item, target, verified=expected is not None)

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
                if self.for_people:
                    self.say(f"  connection lost ({error.reason}); resuming…")
                else:
                    notice(f"Connection lost ({error.reason}); resuming the download…")
                self.sleep(min(2.0**attempts, 10.0))
