"""Previews and renderings of a run's artifacts, made in a sandbox with no network.

After a run's files are stored (and its own sandbox released: this is the
platform's work, not the agent's), one offline sandbox per run (started only
when some file needs it) gets the files in batches and runs
`sandbox_previewer.py` once per batch: a PNG for the gallery (images, video,
audio, MIDI, PDF, HTML), MIDI rendered to Ogg audio, markdown and code
rendered to HTML. ffmpeg, Pillow, poppler, FluidSynth, Chromium, Markdown and
Pygments thus only ever parse agent files under gVisor, bounded in time (per
tool, per file, and PREVIEW_RUN_SECONDS for the whole run), memory (the
sandbox) and output (per file returned); a PDF's first pages are drawn as
pictures to read it by (ArtifactPage), so the platform never parses a PDF. A
batch costs three execs whatever its size (files in, the previewer, files
out), so a run of a thousand small files is previewed in seconds. What comes back is checked by its signature and
size only; documents are sanitized (renderers.py) before they are stored.

A plain text file (no highlighter claims its name: plain_text.py) needs no
parser, so its document is made here by escaping it; a run whose files are all
such text starts no sandbox for them.

Best effort: a file no tool can read, or one that takes too long, gets no
preview, and the run is never failed by it. A batch whose sandbox broke is
tried again one file at a time in a fresh sandbox, so a file that breaks it
costs only its own preview; past the run's time, the files left get none.
"""

from __future__ import annotations

import json
import logging
import re
import struct
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction

from creations.artifacts.plain_text import is_plain_text, plain_text_document
from creations.artifacts.renderers import sanitize_document
from creations.models import Artifact, ArtifactKind, ArtifactPage
from sandboxes.docker_exec import ExecClosed
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
BATCH_FILES = 1000  # files sent to the previewer at once (a run keeps SANDBOX_COPY_OUT_MAX_FILES)
OUTPUTS_PER_FILE = 2  # at most, but for PDFs: a MIDI file's rendition and its waveform
OUTPUT_FILES_PER_BATCH = BATCH_FILES * OUTPUTS_PER_FILE  # what one batch may copy out
PAGE_NAME = re.compile(r"page-([1-9][0-9]{0,3})\.png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OGG_SIGNATURE = b"OggS"


@cache
def previewer_source() -> str:
    return Path(__file__).with_name("sandbox_previewer.py").read_text()


@dataclass
class BatchOutcome:
    deferred: list[Artifact] = field(default_factory=list)  # no room left for them: the next batch's
    broken: bool = False  # the sandbox may be left broken: a fresh one for the next batch
    unfinished: list[Artifact] = field(default_factory=list)  # when broken: those it never said it ended


def wants_preview(artifact: Artifact) -> bool:
    if artifact.kind in DOCUMENT_KINDS:
        return artifact.size <= settings.ARTIFACT_INLINE_RENDER_MAX_BYTES
    return artifact.kind in PREVIEWED_KINDS and artifact.size <= settings.PREVIEW_MAX_INPUT_BYTES


def make_previews(artifacts: Sequence[Artifact], *, run_id: int) -> None:
    """Previews for every artifact that can have one, within the run's time for them; never raises."""
    wanted = [artifact for artifact in artifacts if artifact.file and wants_preview(artifact)]
    todo = deque((artifact, False) for artifact in wanted if not _rendered_here(artifact))
    deadline = time.monotonic() + settings.PREVIEW_RUN_SECONDS
    sandbox: DockerSandbox | None = None
    try:
        while todo and time.monotonic() < deadline:
            if sandbox is None:
                try:
                    sandbox = _start_sandbox(run_id)
                except SandboxError as error:
                    logger.warning("run %s: no previews, the preview sandbox did not start: %s", run_id, error)
                    return
            batch, alone = _next_batch(todo)
            outcome = _preview_batch(sandbox, batch, deadline)
            todo.extendleft((artifact, alone) for artifact in reversed(outcome.deferred))
            if outcome.broken:
                sandbox.stop()  # it may be left broken or busy: the next batch gets a fresh one
                sandbox = None
                if not alone:  # which file broke it is not known: each goes again on its own
                    todo.extendleft((artifact, True) for artifact in reversed(outcome.unfinished))
        if todo:
            logger.warning(
                "run %s: %d files got no preview: the run's %s s for previews ran out",
                run_id, len(todo), settings.PREVIEW_RUN_SECONDS,
            )  # fmt: skip
    finally:
        if sandbox is not None:
            sandbox.stop()


def _rendered_here(artifact: Artifact) -> bool:
    """Whether `artifact` is plain text, its document made and stored in this process (no sandbox needed)."""
    if artifact.kind != ArtifactKind.TEXT or not is_plain_text(artifact.name):
        return False
    try:
        with artifact.file.open("rb") as handle:
            data = handle.read(settings.ARTIFACT_INLINE_RENDER_MAX_BYTES + 1)
        if len(data) <= settings.ARTIFACT_INLINE_RENDER_MAX_BYTES:
            _store_document(artifact, plain_text_document(data))
    except Exception:  # a preview is a nicety; the artifact itself is what counts
        logger.exception("artifact %s: its text could not be shown as a document", artifact.pk)
    return True


def _outputs(artifact: Artifact) -> int:
    """The most files the previewer makes of this one: a PDF's preview and its pages."""
    return 1 + settings.PREVIEW_PDF_PAGES if artifact.kind == ArtifactKind.PDF else OUTPUTS_PER_FILE


def _next_batch(todo: deque[tuple[Artifact, bool]]) -> tuple[list[Artifact], bool]:
    """The next files to send at once: up to BATCH_FILES, within PREVIEW_MAX_INPUT_BYTES (a larger file
    goes alone) and OUTPUT_FILES_PER_BATCH of what they make; a file that is to go alone (its batch broke
    the sandbox) goes alone."""
    artifact, alone = todo.popleft()
    batch, size, outputs = [artifact], artifact.size, _outputs(artifact)
    while not alone and todo and len(batch) < BATCH_FILES:
        following, following_alone = todo[0]
        if following_alone or size + following.size > settings.PREVIEW_MAX_INPUT_BYTES:
            break
        if outputs + _outputs(following) > OUTPUT_FILES_PER_BATCH:
            break
        todo.popleft()
        batch.append(following)
        size += following.size
        outputs += _outputs(following)
    return batch, alone


def _start_sandbox(run_id: int) -> DockerSandbox:
    return start_offline_sandbox(
        labels={"atelier.run_id": str(run_id)},
        purpose=PURPOSE,
        memory_bytes=settings.PREVIEW_MEMORY_BYTES,
        scratch_bytes=_scratch_bytes(),
        max_in_bytes=settings.PREVIEW_MAX_INPUT_BYTES + 1024 * 1024,
        max_out_bytes=_scratch_bytes(),
        max_out_files=max(OUTPUT_FILES_PER_BATCH, 1 + settings.PREVIEW_PDF_PAGES),
    )


def _scratch_bytes() -> int:
    # A batch's files, and room for what the previewer makes of them (it defers the rest when short of it).
    return settings.PREVIEW_MAX_INPUT_BYTES + 4 * settings.PREVIEW_OUTPUT_MAX_BYTES


def _preview_batch(sandbox: DockerSandbox, batch: list[Artifact], deadline: float) -> BatchOutcome:
    """Make and store the previews of a batch of artifacts."""
    try:
        sandbox.write_files(_batch_inputs(batch), dest=f"{SCRATCH}/in")
        seconds = max(1.0, deadline - time.monotonic())
        code, output = sandbox.exec(previewer_argv(seconds), timeout=seconds + 30)
        results = _parse_results(output, count=len(batch))
        outcome = BatchOutcome(deferred=[batch[int(key)] for key, line in results.items() if line.get("deferred")])
        for key, line in results.items():
            if not line.get("ok") and not line.get("deferred"):
                artifact = batch[int(key)]
                logger.info("no preview for artifact %s (%s): %s", artifact.pk, artifact.kind, line.get("error"))
        if code != 0 or len(results) < len(batch):
            logger.info("the previewer ended with exit code %s after %d of %d files", code, len(results), len(batch))
            outcome.broken = True
            outcome.unfinished = [artifact for index, artifact in enumerate(batch) if str(index) not in results]
        with tempfile.TemporaryDirectory(prefix="atelier-preview-") as tmp:
            for made in sandbox.copy_out(Path(tmp), src=f"{SCRATCH}/out").files:
                key, _, name = made.path.partition("/")
                if key in results and results[key].get("ok") is True:
                    _accept(batch[int(key)], name, made.local_path)
        return outcome
    except (SandboxError, ExecClosed, OSError, TimeoutError) as error:
        logger.info("no previews for a batch of %d files: %s", len(batch), error)
        return BatchOutcome(broken=True, unfinished=batch)
    except Exception:  # a preview is a nicety; the artifact itself is what counts
        logger.exception("previews failed for a batch of %d files", len(batch))
        return BatchOutcome(broken=True, unfinished=batch)


def previewer_argv(seconds: float) -> list[str]:
    """The previewer's exec, for the batch written to SCRATCH/in (with its jobs.json), within `seconds`."""
    return [
        "python3", "-I", "-c", previewer_source(), f"{SCRATCH}/in/jobs.json", f"{SCRATCH}/out",
        str(settings.PREVIEW_WIDTH), str(settings.PREVIEW_TIMEOUT), f"{seconds:.1f}",
        str(settings.PREVIEW_OUTPUT_MAX_BYTES), str(settings.PREVIEW_PDF_PAGES), str(settings.PREVIEW_PDF_PAGE_PIXELS),
        str(min(settings.PREVIEW_TIMEOUT, settings.PREVIEW_DOCUMENT_TIMEOUT)),
    ]  # fmt: skip


def _batch_inputs(batch: list[Artifact]) -> dict[str, bytes]:
    """Each file under its number, and the previewer's list of jobs."""
    inputs, jobs = {}, []
    for index, artifact in enumerate(batch):
        with artifact.file.open("rb") as handle:
            inputs[f"{index}/{_source_name(artifact)}"] = handle.read(settings.PREVIEW_MAX_INPUT_BYTES + 1)
        jobs.append(
            {
                "id": str(index),
                "kind": str(artifact.kind),
                "name": artifact.name,
                "source": f"{SCRATCH}/in/{index}/{_source_name(artifact)}",
            }
        )
    inputs["jobs.json"] = json.dumps(jobs).encode()
    return inputs


def _source_name(artifact: Artifact) -> str:
    # Chromium decides from a file:// URL's extension that it is a page, not text.
    return "source.html" if artifact.kind in (ArtifactKind.HTML, ArtifactKind.MAP) else "source"


def _parse_results(output: bytes, *, count: int) -> dict[str, dict[str, Any]]:
    """The previewer's line for each of the `count` jobs it ended, by job number (other lines are ignored)."""
    numbers = {str(index) for index in range(count)}
    results: dict[str, dict[str, Any]] = {}
    for line in output.decode("utf-8", errors="replace").splitlines():
        try:
            result: Any = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and result.get("id") in numbers:
            results.setdefault(result["id"], result)  # its first word counts
    return results


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
    elif (page := PAGE_NAME.fullmatch(name)) and artifact.kind == ArtifactKind.PDF:
        if _starts_with(path, PNG_SIGNATURE):
            _accept_page(artifact, int(page.group(1)), path)
    elif name == "document.html" and artifact.kind in DOCUMENT_KINDS:
        _store_document(artifact, path.read_bytes().decode("utf-8", errors="replace"))
    else:
        logger.info("artifact %s: ignoring %r from the previewer", artifact.pk, name[:100])


def _store_document(artifact: Artifact, html: str) -> None:
    document = sanitize_document(html, document_path=artifact.path).encode()
    artifact.rendered.save("document.html", ContentFile(document), save=False)
    artifact.derived_bytes += len(document)
    artifact.save(update_fields=["rendered", "derived_bytes"])


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (its IHDR chunk, always first): read, not decoded."""
    with path.open("rb") as handle:
        header = handle.read(24)
    if len(header) < 24 or header[12:16] != b"IHDR":
        return 0, 0
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def _accept_page(artifact: Artifact, number: int, path: Path) -> None:
    """One page of a PDF, if within the pages asked for and of a size a page drawn at PREVIEW_PDF_PAGE_PIXELS has."""
    width, height = _png_size(path)
    largest = settings.PREVIEW_PDF_PAGE_PIXELS
    if number > settings.PREVIEW_PDF_PAGES or not (0 < width <= largest and 0 < height <= largest):
        logger.info("artifact %s: ignoring page %s of %sx%s from the previewer", artifact.pk, number, width, height)
        return
    page = ArtifactPage(artifact=artifact, number=number, width=width, height=height)
    with path.open("rb") as handle:
        page.image.save(f"page-{number}.png", File(handle), save=False)
    try:
        with transaction.atomic():
            page.save()
    except IntegrityError:  # drawn before (previews made again): the first drawing stays
        page.image.delete(save=False)
        return
    artifact.derived_bytes += path.stat().st_size
    artifact.save(update_fields=["derived_bytes"])
