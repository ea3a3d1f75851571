"""A markdown or code file made to stall its parser is stopped at the document limit
(PREVIEW_DOCUMENT_TIMEOUT), not at the tools' (PREVIEW_TIMEOUT): the run it came with finishes that much
sooner, and the batch's other files still get theirs. The preview sandbox's own program, run here with
the arguments the worker gives it (in gVisor: tests/end_to_end/test_hostile_runs.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from creations.artifacts.previews import previewer_argv


def _run_batch(tmp_path: Path, files: dict[str, bytes]) -> tuple[dict[str, dict[str, Any]], float]:
    """Each job's result line, by file name, and how long the batch took."""
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    jobs = []
    for index, (name, data) in enumerate(files.items()):
        (inputs / name).write_bytes(data)
        jobs.append({"id": str(index), "kind": "markdown", "name": name, "source": str(inputs / name)})
    (inputs / "jobs.json").write_text(json.dumps(jobs))
    argv = previewer_argv(120)
    argv[0], argv[4], argv[5] = sys.executable, str(inputs / "jobs.json"), str(out)
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    names = list(files)
    return {names[int(line["id"])]: line for line in lines}, took


def test_a_stalling_markdown_file_is_stopped_at_the_document_limit(tmp_path: Path, settings: Any) -> None:
    settings.PREVIEW_TIMEOUT, settings.PREVIEW_DOCUMENT_TIMEOUT = 30, 1
    results, took = _run_batch(tmp_path, {"brackets.md": b"[" * 32768, "notes.md": b"# Notes\n\nFine.\n"})
    assert results["brackets.md"]["ok"] is False
    assert results["notes.md"]["ok"] is True
    assert "<h1" in (tmp_path / "out" / "1" / "document.html").read_text(encoding="utf-8")
    assert took < settings.PREVIEW_TIMEOUT  # stopped at the document's limit, not the tools'


def test_the_document_limit_is_never_past_the_tools(settings: Any) -> None:
    settings.PREVIEW_TIMEOUT, settings.PREVIEW_DOCUMENT_TIMEOUT = 2, 10
    assert previewer_argv(60)[-1] == "2"
