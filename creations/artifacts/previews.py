"""Previews for artifacts, made in the worker right after ingestion.

`make_previews(artifact)` sets `artifact.preview` (a PNG for the gallery) and, for
MIDI, `artifact.rendition` (the music rendered to audio with a General MIDI
soundfont). It is best effort: a file a tool cannot read, or one that takes too
long, simply gets no preview; it never raises.
"""

import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.files import File
from PIL import Image, ImageOps

from creations.artifacts.html_snapshot import html_screenshot
from creations.artifacts.preview_tools import PreviewToolError, run_tool
from creations.models import Artifact, ArtifactKind

logger = logging.getLogger(__name__)
MAX_IMAGE_PIXELS = 80_000_000  # larger images are refused (decompression bombs)


def make_previews(artifact: Artifact) -> None:
    maker = PREVIEW_MAKERS.get(artifact.kind)
    if maker is None or not artifact.file:
        return
    if artifact.size > settings.PREVIEW_MAX_INPUT_BYTES:
        logger.info("no preview for artifact %s: %s bytes is above the preview limit", artifact.pk, artifact.size)
        return
    try:
        with tempfile.TemporaryDirectory(prefix="atelier-preview-") as tmp:
            workdir = Path(tmp)
            source = workdir / "source"
            with artifact.file.open("rb") as src, source.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            maker(artifact, source, workdir)
    except (PreviewToolError, OSError, ValueError, Image.DecompressionBombError) as exc:
        logger.info("no preview for artifact %s (%s): %s", artifact.pk, artifact.kind, exc)
    except Exception:  # a preview must never break ingestion
        logger.exception("preview failed for artifact %s", artifact.pk)


def _save_preview(artifact: Artifact, png: Path) -> None:
    """Downscale to the gallery width and store as the artifact's preview."""
    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    with Image.open(png) as opened:
        image: Image.Image = ImageOps.exif_transpose(opened)
        image.thumbnail((settings.PREVIEW_WIDTH, settings.PREVIEW_WIDTH * 2))
        if image.mode not in ("RGB", "RGBA"):
            image = image.convert("RGBA")
        out = png.with_name("preview.png")
        image.save(out, format="PNG", optimize=True)
    with out.open("rb") as handle:
        artifact.preview.save("preview.png", File(handle), save=False)
    artifact.save(update_fields=["preview"])


def _image_preview(artifact: Artifact, source: Path, workdir: Path) -> None:
    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    with Image.open(source) as image:
        image.load()  # the first frame of animations
        frame = image.convert("RGBA")
    png = workdir / "frame.png"
    frame.save(png, format="PNG")
    _save_preview(artifact, png)


def _video_preview(artifact: Artifact, source: Path, workdir: Path) -> None:
    poster = workdir / "poster.png"
    for offset in ("1", "0"):  # one second in, unless the video is shorter
        run_tool(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", offset, "-i", str(source), "-frames:v", "1",
             "-vf", f"scale={settings.PREVIEW_WIDTH}:-2", str(poster)],
            cwd=workdir,
        )  # fmt: skip
        if poster.exists() and poster.stat().st_size:
            break
    _save_preview(artifact, poster)


def _waveform(source: Path, workdir: Path) -> Path:
    picture = workdir / "waveform.png"
    run_tool(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(source), "-filter_complex",
         # Normalized and square-root scaled so quiet pieces still show their shape.
         f"aformat=channel_layouts=mono,dynaudnorm,showwavespic=s={settings.PREVIEW_WIDTH}x160:colors=#3d5afe:scale=sqrt",
         "-frames:v", "1", str(picture)],
        cwd=workdir,
    )  # fmt: skip
    return picture


def _audio_preview(artifact: Artifact, source: Path, workdir: Path) -> None:
    _save_preview(artifact, _waveform(source, workdir))


def _midi_rendition(artifact: Artifact, source: Path, workdir: Path) -> None:
    """Render MIDI to audio (fluidsynth + the GM soundfont), then an Ogg file and its waveform."""
    wav = workdir / "music.wav"
    ogg = workdir / "music.ogg"
    run_tool(
        ["fluidsynth", "-ni", "-q", "-g", "0.8", "-r", "44100", "-F", str(wav), settings.PREVIEW_SOUNDFONT,
         str(source)],
        cwd=workdir,
    )  # fmt: skip
    run_tool(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(wav), "-c:a", "libvorbis", "-q:a", "4", str(ogg)],
        cwd=workdir,
    )
    with ogg.open("rb") as handle:
        artifact.rendition.save("music.ogg", File(handle), save=False)
    artifact.rendition_content_type = "audio/ogg"
    artifact.save(update_fields=["rendition", "rendition_content_type"])
    _save_preview(artifact, _waveform(ogg, workdir))


def _pdf_preview(artifact: Artifact, source: Path, workdir: Path) -> None:
    prefix = workdir / "page"
    run_tool(
        ["pdftoppm", "-png", "-f", "1", "-l", "1", "-singlefile", "-scale-to", str(settings.PREVIEW_WIDTH * 2),
         str(source), str(prefix)],
        cwd=workdir,
    )  # fmt: skip
    _save_preview(artifact, prefix.with_suffix(".png"))


def _html_preview(artifact: Artifact, source: Path, workdir: Path) -> None:
    _save_preview(artifact, html_screenshot(source.read_bytes(), workdir=workdir))


PREVIEW_MAKERS: dict[str, Callable[[Artifact, Path, Path], None]] = {
    ArtifactKind.IMAGE: _image_preview,
    ArtifactKind.VIDEO: _video_preview,
    ArtifactKind.AUDIO: _audio_preview,
    ArtifactKind.MIDI: _midi_rendition,
    ArtifactKind.PDF: _pdf_preview,
    ArtifactKind.HTML: _html_preview,
    ArtifactKind.MAP: _html_preview,
}
