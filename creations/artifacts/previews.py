"""Previews and renderings of a run's artifacts, made in a sandbox with no network.

Right after ingestion, one offline sandbox per run (started only when some
file needs it) gets each file in turn and runs `sandbox_previewer.py` on it:
a PNG for the gallery (images, video, audio, MIDI, PDF, HTML), MIDI rendered
to Ogg audio, markdown and code rendered to HTML. ffmpeg, Pillow, poppler,
FluidSynth, Chromium, Markdown and Pygments thus only ever parse agent files
under gVisor, bounded in time (per tool and per file), memory (the sandbox)
and output (per file returned). What comes back is checked by its signature
and size only; documents are sanitized (renderers.py) before they are stored.

Best effort: a file no tool can read, or one that takes too long, gets no
preview, and the run is never failed by it. A sandbox that timed out or broke
is replaced for the next file.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile

from creations.artifacts.renderers import sanitize_document
from creations.models import Artifact, ArtifactKind
from sandboxes.docker_runtime import DockerSandbox, SandboxError
from sandboxes.offline import start_offline_sandbox

logger = logging.getLogger(__name__)

PREVIEWED_KINDS = frozenset(
    {
        ArtifactKind.IMAGE,
        ArtifactKind.VIDEO,
        ArtifactKind.AUDIO,
        ArtifactKind.MIDI,
        ArtifactKind.PDF,
        ArtifactKind.HTML,
        ArtifactKind.MAP,
    }
)
DOCUMENT_KINDS = frozenset({ArtifactKind.MARKDOWN, ArtifactKind.TEXT})
SCRATCH = "/testbed/preview"
PURPOSE = "preview"
REPORT_TAIL_BYTES = 4096  # the previewer prints one short line of JSON; nothing more is read
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OGG_SIGNATURE = b"OggS"


@cache
def previewer_source() -> str:
    return Path(__file__).with_name("sandbox_previewer.py").read_text()


@dataclass(frozen=True)
class PreviewReport:
    ok: bool
    error: str = ""


def wants_preview(artifact: Artifact) -> bool:
    if artifact.kind in DOCUMENT_KINDS:
        return artifact.size <= settings.ARTIFACT_INLINE_RENDER_MAX_BYTES
    return artifact.kind in PREVIEWED_KINDS and artifact.size <= settings.PREVIEW_MAX_INPUT_BYTES


def make_previews(artifacts: Sequence[Artifact], *, run_id: int) -> None:
    """Previews for every artifact that can have one; never raises."""
    todo = [artifact for artifact in artifacts if artifact.file and wants_preview(artifact)]
    sandbox: DockerSandbox | None = None
    try:
        for artifact in todo:
            if sandbox is None:
                try:
                    sandbox = _start_sandbox(run_id)
                except SandboxError as error:
                    logger.warning("run %s: no previews, the preview sandbox did not start: %s", run_id, error)
                    return
            if not _preview_one(sandbox, artifact):
                sandbox.stop()  # it may be left broken or busy: the next file gets a fresh one
                sandbox = None
    finally:
        if sandbox is not None:
            sandbox.stop()


def _start_sandbox(run_id: int) -> DockerSandbox:
    scratch = settings.PREVIEW_MAX_INPUT_BYTES + 4 * settings.PREVIEW_OUTPUT_MAX_BYTES
    return start_offline_sandbox(
        labels={"atelier.run_id": str(run_id)},
        purpose=PURPOSE,
        memory_bytes=settings.PREVIEW_MEMORY_BYTES,
        scratch_bytes=scratch,
        max_in_bytes=settings.PREVIEW_MAX_INPUT_BYTES + 1024 * 1024,
        max_out_bytes=3 * settings.PREVIEW_OUTPUT_MAX_BYTES,
    )


def _preview_one(sandbox: DockerSandbox, artifact: Artifact) -> bool:
    """Make and store one artifact's previews; False when the sandbox should not be reused."""
    try:
        with artifact.file.open("rb") as handle:
            data = handle.read(settings.PREVIEW_MAX_INPUT_BYTES + 1)
        sandbox.write_files({_source_name(artifact): data}, dest=f"{SCRATCH}/in")
        del data
        report = _run_previewer(sandbox, artifact)
        if not report.ok:
            logger.info("no preview for artifact %s (%s): %s", artifact.pk, artifact.kind, report.error)
            return True
        with tempfile.TemporaryDirectory(prefix="atelier-preview-") as tmp:
            copied = sandbox.copy_out(Path(tmp), src=f"{SCRATCH}/out")
            for made in copied.files:
                _accept(artifact, made.path, made.local_path)
        return True
    except (SandboxError, OSError, TimeoutError) as error:
        logger.info("no preview for artifact %s (%s): %s", artifact.pk, artifact.kind, error)
        return False
    except Exception:  # a preview is a nicety; the artifact itself is what counts
        logger.exception("preview failed for artifact %s", artifact.pk)
        return False


def _source_name(artifact: Artifact) -> str:
    # Chromium decides from a file:// URL's extension that it is a page, not text.
    return "source.html" if artifact.kind in (ArtifactKind.HTML, ArtifactKind.MAP) else "source"


def _run_previewer(sandbox: DockerSandbox, artifact: Artifact) -> PreviewReport:
    timeout = settings.PREVIEW_TIMEOUT
    argv = [
        "python3", "-I", "-c", previewer_source(), artifact.kind, f"{SCRATCH}/in/{_source_name(artifact)}",
        f"{SCRATCH}/out",
        str(settings.PREVIEW_WIDTH), str(timeout), artifact.name,
    ]  # fmt: skip
    # Media may take up to three tools in a row (MIDI: synthesize, encode, draw); a document is one parse.
    tools = 1 if artifact.kind in DOCUMENT_KINDS else 3
    code, output = sandbox.exec(argv, timeout=tools * timeout + 10)
    return _parse_report(code, output[-REPORT_TAIL_BYTES:])


def _parse_report(code: int, tail: bytes) -> PreviewReport:
    lines = tail.decode("utf-8", errors="replace").strip().splitlines()
    try:
        report: Any = json.loads(lines[-1]) if lines else None
    except ValueError:
        report = None
    if code != 0 or not isinstance(report, dict):
        return PreviewReport(ok=False, error=f"the previewer ended with exit code {code}")
    return PreviewReport(ok=report.get("ok") is True, error=str(report.get("error") or "")[:500])


def _starts_with(path: Path, signature: bytes) -> bool:
    with path.open("rb") as handle:
        return handle.read(len(signature)) == signature


def _accept(artifact: Artifact, name: str, path: Path) -> None:
    """Store one file the previewer made, if it is what its name says and within the size limit."""
    if path.stat().st_size > settings.PREVIEW_OUTPUT_MAX_BYTES:
        logger.info("artifact %s: the previewer's %s is too large; dropped", artifact.pk, name)
        return
    # Each stored file's bytes are added to the artifact's `derived_bytes`: its workspace's storage counts them.
    if name == "preview.png" and _starts_with(path, PNG_SIGNATURE):
        with path.open("rb") as handle:
            artifact.preview.save("preview.png", File(handle), save=False)
        artifact.derived_bytes += path.stat().st_size
        artifact.save(update_fields=["preview", "derived_bytes"])
    elif name == "rendition.ogg" and _starts_with(path, OGG_SIGNATURE):
        with path.open("rb") as handle:
            artifact.rendition.save("music.ogg", File(handle), save=False)
        artifact.rendition_content_type = "audio/ogg"
        artifact.derived_bytes += path.stat().st_size
        artifact.save(update_fields=["rendition", "rendition_content_type", "derived_bytes"])
    elif name == "document.html" and artifact.kind in DOCUMENT_KINDS:
        html = path.read_bytes().decode("utf-8", errors="replace")
        document = sanitize_document(html, document_path=artifact.path).encode()
        artifact.rendered.save("document.html", ContentFile(document), save=False)
        artifact.derived_bytes += len(document)
        artifact.save(update_fields=["rendered", "derived_bytes"])
    else:
        logger.info("artifact %s: ignoring %r from the previewer", artifact.pk, name[:100])
