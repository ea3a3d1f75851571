"""Comparing two versions of a file in a preview sandbox (no network, gVisor).

The worker copies both versions in, runs `sandbox_differ.py` on them and copies
back a JSON report and an overlay picture; it never decodes either file itself.
What comes back is believed only once it fits the schemas of results.py, and the
picture only if it is a PNG within the preview size limit. One sandbox serves
all the files of one comparison; a file that breaks or hangs it costs that file
its detail, and the next file gets a fresh sandbox.
"""

from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from django.conf import settings
from pydantic import ValidationError

from creations.compare.planning import needs_sources
from creations.compare.results import Detail, Failed, Plan
from creations.models import Artifact
from sandboxes.docker_runtime import DockerSandbox, SandboxError
from sandboxes.offline import start_offline_sandbox

logger = logging.getLogger(__name__)

PURPOSE = "compare"
SCRATCH = "/testbed/compare"
REPORT_TAIL_BYTES = 4096
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_DIFF_BYTES = 256 * 1024  # of unified diff kept per file: a page's worth of reading, and then some
OVERLAY_WIDTH = 1280
MAX_REPORT_BYTES = 1024 * 1024


@cache
def differ_source() -> str:
    return resources.files("creations.compare").joinpath("sandbox_differ.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Compared:
    detail: Detail
    overlay: bytes | None
    seconds: float = 0.0  # what the differ took in the sandbox, by its own clock (for benchmarks)


class DifferSession:
    """Preview sandboxes for comparing files one pair at a time; `with` it, so the last one is removed."""

    def __init__(self, *, label: str) -> None:
        self.label = label
        self.sandbox: DockerSandbox | None = None

    def __enter__(self) -> DifferSession:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._drop()

    def _drop(self) -> None:
        if self.sandbox is not None:
            self.sandbox.stop()
            self.sandbox = None

    def _started(self) -> DockerSandbox:
        if self.sandbox is None:
            two = 2 * settings.PREVIEW_MAX_INPUT_BYTES
            self.sandbox = start_offline_sandbox(
                labels={"atelier.compare": self.label},
                purpose=PURPOSE,
                memory_bytes=settings.PREVIEW_MEMORY_BYTES,
                scratch_bytes=two + 2 * settings.PREVIEW_OUTPUT_MAX_BYTES,
                max_in_bytes=two + 2 * settings.PREVIEW_OUTPUT_MAX_BYTES + 1024 * 1024,
                max_out_bytes=settings.PREVIEW_OUTPUT_MAX_BYTES + MAX_REPORT_BYTES,
                max_out_files=4,
            )
        return self.sandbox

    def compare(self, a: Artifact, b: Artifact, plan: Plan) -> Compared | None:
        """The detail of one pair, or None when the sandbox could not make one (said in the log).
        Raises SandboxError when no sandbox starts: nothing was learnt of this pair."""
        sandbox = self._started()
        try:
            return self._compare(sandbox, a, b, plan)
        except (SandboxError, OSError, TimeoutError, ValueError) as error:
            logger.info("no comparison of artifacts %s and %s: %s", a.pk, b.pk, error)
        except Exception:  # a detail is a nicety: the file lists stand without it
            logger.exception("comparison of artifacts %s and %s failed", a.pk, b.pk)
        self._drop()  # it may be left broken or busy: the next pair gets a fresh one
        return None

    def _compare(self, sandbox: DockerSandbox, a: Artifact, b: Artifact, plan: Plan) -> Compared:
        files: dict[str, bytes] = {}
        if needs_sources(plan):
            files["a"], files["b"] = _read(a.file), _read(b.file)
        if plan.pixels == "preview":
            files["a.png"], files["b.png"] = _read(a.preview), _read(b.preview)
        folder, out = f"{SCRATCH}/in", f"{SCRATCH}/out"
        sandbox.exec(["rm", "-rf", "--", folder], timeout=30)
        sandbox.write_files(files, dest=folder)
        del files
        request = {
            "folder": folder,
            "out": out,
            "timeout": settings.PREVIEW_TIMEOUT,
            "overlay_width": OVERLAY_WIDTH,
            "max_diff_bytes": MAX_DIFF_BYTES,
            "pixels": {"source": "a b", "preview": "a.png b.png"}.get(plan.pixels, ""),
            "svg": plan.svg,
            "lines": plan.lines,
            "media": plan.media,
        }
        argv = ["python3", "-I", "-c", differ_source(), json.dumps(request)]
        # Each section is bounded by the timeout in the sandbox; media probes two files.
        code, output = sandbox.exec(argv, timeout=5 * settings.PREVIEW_TIMEOUT + 20)
        if code != 0:
            tail = output[-REPORT_TAIL_BYTES:].decode("utf-8", "replace").strip()[-300:]
            raise ValueError(f"the differ ended with exit code {code}: {tail}")
        with tempfile.TemporaryDirectory(prefix="atelier-compare-") as tmp:
            copied = {made.path: made.local_path for made in sandbox.copy_out(Path(tmp), src=out).files}
            report = copied.get("report.json")
            if report is None or report.stat().st_size > MAX_REPORT_BYTES:
                raise ValueError("the differ left no report, or one too large")
            detail = _detail(json.loads(report.read_bytes()))
            overlay = _overlay(copied.get("overlay.png"))
        return Compared(detail=detail, overlay=overlay if overlay and detail.pixels else None, seconds=_seconds(output))


def _seconds(output: bytes) -> float:
    lines = output[-REPORT_TAIL_BYTES:].decode("utf-8", "replace").strip().splitlines()
    try:
        said: Any = json.loads(lines[-1]) if lines else {}
        return float(said.get("seconds", 0.0)) if isinstance(said, dict) else 0.0
    except (ValueError, TypeError):
        return 0.0


def _read(field: Any) -> bytes:
    with field.open("rb") as handle:
        data: bytes = handle.read(settings.PREVIEW_MAX_INPUT_BYTES + 1)
    if len(data) > settings.PREVIEW_MAX_INPUT_BYTES:
        raise ValueError("a version is larger than the preview sandbox takes")
    return data


def _detail(report: Any) -> Detail:
    """The report as a Detail; a section that does not fit its schema becomes a failure of that section."""
    if not isinstance(report, dict):
        raise ValueError("the differ's report is not an object")
    report.pop("overlay", None)  # only the platform names stored files
    try:
        return Detail.model_validate(report)
    except ValidationError:
        pass
    sections: dict[str, Any] = {}
    for name in ("pixels", "lines", "media"):
        if name not in report:
            continue
        try:
            Detail.model_validate({name: report[name]})
            sections[name] = report[name]
        except ValidationError:
            sections[name] = None if name == "media" else Failed(error="The comparison gave an unreadable answer.")
    return Detail.model_validate(sections)


def _overlay(path: Path | None) -> bytes | None:
    if path is None or path.stat().st_size > settings.PREVIEW_OUTPUT_MAX_BYTES:
        return None
    data = path.read_bytes()
    return data if data.startswith(PNG_SIGNATURE) else None
