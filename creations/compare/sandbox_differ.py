"""The program that compares two versions of one file, run INSIDE a preview sandbox.

Both files were written by an agent, so they are only ever opened here, where a
decoder bug can only hurt a throwaway gVisor sandbox with no network. The worker
copies the two versions into a folder of the sandbox and runs this source with
`python3 -I -c` (the image's Python with Pillow and CairoSVG) and one argument, a
JSON request saying what to compare:

    {"folder": ..., "out": ..., "timeout": 30, "overlay_width": 1280, "max_diff_bytes": ...,
     "pixels": "a b" | "a.png b.png" | "", "svg": false, "lines": true, "media": true}

Files in the folder: `a` and `b` (the two versions as stored), and for pixels on
derived pictures (a video's poster frame, a page's screenshot) `a.png` and `b.png`.
It leaves in `out`:

- `report.json`: one object with a section per comparison asked for, each saying
  what it found or why it could not (`{"error": ...}`); the worker checks it
  against a schema before it believes any of it;
- `overlay.png`: the newer picture with the changed pixels tinted and the changed
  region outlined, at most `overlay_width` pixels wide.

It prints one line of JSON ({"ok": ..., "seconds": ...}). It imports nothing of
Atelier's and must run on the sandbox image's Python alone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

MAX_IMAGE_PIXELS = 80_000_000  # larger images are refused (decompression bombs), as for previews
SVG_RENDER_WIDTH = 1600  # vector images are compared as drawn at this width (or their own, if smaller)
TINT = (229, 57, 53)  # changed pixels, over the newer picture
OUTLINE = (183, 28, 28)
MAX_LINE_CHARS = 2000
MEDIA_PROBE_BYTES = 64 * 1024  # ffmpeg's description of a file is a few lines; more is noise


class Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise Timeout("took too long")


def load_picture(path: str, *, svg: bool) -> Any:
    """The picture, decoded: RGB when opaque, else premultiplied RGBA (so two fully transparent pixels
    are equal whatever colour they hide)."""
    from PIL import Image, ImageOps

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    if svg:
        path = render_svg(path)
    with Image.open(path) as opened:
        opened.load()  # the first frame of animations
        picture = ImageOps.exif_transpose(opened)
    if picture.mode in ("RGBA", "LA", "PA", "RGBa") or "transparency" in picture.info:
        return picture.convert("RGBA").convert("RGBa")
    return picture if picture.mode == "RGB" else picture.convert("RGB")


def same_mode(older: Any, newer: Any) -> tuple[Any, Any]:
    """Both opaque: compared as RGB; else both as premultiplied RGBA."""
    if older.mode == newer.mode:
        return older, newer
    return (
        older if older.mode == "RGBa" else older.convert("RGBA").convert("RGBa"),
        newer if newer.mode == "RGBa" else newer.convert("RGBA").convert("RGBa"),
    )


def render_svg(path: str) -> str:
    import cairosvg

    drawn = path + ".tmp.png"
    with open(path, "rb") as handle:
        source = handle.read()
    # No network here, and no file of this sandbox worth reading: unsafe=False keeps external entities off too.
    cairosvg.svg2png(bytestring=source, write_to=drawn, output_width=None, unsafe=False)
    from PIL import Image

    with Image.open(drawn) as opened:
        width = opened.width
    if width > SVG_RENDER_WIDTH:
        cairosvg.svg2png(bytestring=source, write_to=drawn, output_width=SVG_RENDER_WIDTH, unsafe=False)
    return drawn


def compare_pixels(path_a: str, path_b: str, *, svg: bool, out: str, overlay_width: int) -> dict[str, Any]:
    """How many pixels differ, exactly (no tolerance: an identical rendering gives 0), and where."""
    from PIL import Image, ImageChops

    older, newer = same_mode(load_picture(path_a, svg=svg), load_picture(path_b, svg=svg))
    common = (min(older.width, newer.width), min(older.height, newer.height))
    if older.size == newer.size:
        difference = ImageChops.difference(older, newer)
    else:
        box = (0, 0, *common)
        difference = ImageChops.difference(older.crop(box), newer.crop(box))
    bands = difference.split()
    changed_mask = bands[0]
    for band in bands[1:]:  # a pixel changed if any of its channels did
        changed_mask = ImageChops.lighter(changed_mask, band)
    changed = common[0] * common[1] - changed_mask.histogram()[0]
    region = changed_mask.getbbox()
    # Versions of different sizes: what only one of them covers has changed too, and counts.
    covered = older.width * older.height + newer.width * newer.height - common[0] * common[1]
    changed += covered - common[0] * common[1]
    beyond = _beyond(common, older.size) + _beyond(common, newer.size)
    region = _union(region, *beyond)
    mask = changed_mask.point([0] + [255] * 255)
    if mask.size != newer.size:
        mask = Image.new("L", newer.size, 255)  # beyond the common part, all of it changed
        mask.paste(changed_mask.point([0] + [255] * 255), (0, 0))
    write_overlay(newer, mask, region, out=out, overlay_width=overlay_width)
    return {
        "width_a": older.width,
        "height_a": older.height,
        "width_b": newer.width,
        "height_b": newer.height,
        "changed_pixels": changed,
        "total_pixels": covered,
        "region": list(region) if region else None,
    }


def _beyond(common: tuple[int, int], size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """The strips of a picture of `size` to the right of and below the `common` top-left rectangle."""
    strips = []
    if size[0] > common[0]:
        strips.append((common[0], 0, size[0], size[1]))
    if size[1] > common[1]:
        strips.append((0, common[1], size[0], size[1]))
    return strips


def _union(*boxes: tuple[int, int, int, int] | None) -> tuple[int, int, int, int] | None:
    present = [box for box in boxes if box]
    if not present:
        return None
    return (
        min(b[0] for b in present),
        min(b[1] for b in present),
        max(b[2] for b in present),
        max(b[3] for b in present),
    )


def write_overlay(
    newer: Any, mask: Any, region: tuple[int, int, int, int] | None, *, out: str, overlay_width: int
) -> None:
    """The newer picture, changed pixels tinted and the changed region outlined, scaled down first (cheap)."""
    from PIL import Image, ImageDraw

    scale = min(1.0, overlay_width / newer.width)
    size = (max(1, round(newer.width * scale)), max(1, round(newer.height * scale)))
    if size != newer.size:
        # Scaled first, premultiplied (so transparent pixels bleed no colour), then everything at the small size.
        newer = newer.resize(size, Image.Resampling.LANCZOS)
        # A box filter keeps a one-pixel change visible: any changed pixel under a target pixel marks it.
        mask = mask.resize(size, Image.Resampling.BOX).point([0] + [255] * 255)
    if newer.mode == "RGB":
        base = newer
    else:
        background = Image.new("RGBA", size, (255, 255, 255, 255))
        base = Image.alpha_composite(background, newer.convert("RGBA")).convert("RGB")
    tinted = Image.blend(base, Image.new("RGB", size, TINT), 0.55)
    picture = Image.composite(tinted, base, mask)
    if region:
        draw = ImageDraw.Draw(picture)
        line = max(2, round(min(size) / 150))
        left, top, right, bottom = (round(v * scale) for v in region)
        pad = line
        draw.rectangle(
            (max(0, left - pad), max(0, top - pad), min(size[0] - 1, right + pad), min(size[1] - 1, bottom + pad)),
            outline=OUTLINE,
            width=line,
        )
    picture.save(os.path.join(out, "overlay.png"), format="PNG", compress_level=3)


def count_lines(path: str) -> int:
    with open(path, "rb") as handle:
        data = handle.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def diff_output(path_a: str, path_b: str) -> Iterator[str]:
    """The unified diff's body lines (no ---/+++ header), from GNU diff: linear where difflib is
    quadratic in the lines that differ, and never more than a line of its output held here. The
    section's alarm bounds its time (the process is killed on the way out)."""
    process = subprocess.Popen(
        ["diff", "-a", "-u", "--label", "a", "--label", "b", "--", path_a, path_b],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdout is not None
    try:
        for number, raw in enumerate(process.stdout):
            if number >= 2:  # past "--- a" and "+++ b": a removed line may itself start with "--"
                yield raw.rstrip(b"\r\n").decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if process.returncode not in (0, 1, -signal.SIGKILL):
        raise RuntimeError(f"diff exited with {process.returncode}")


def compare_lines(path_a: str, path_b: str, *, max_bytes: int) -> dict[str, Any]:
    """A unified diff, cut at `max_bytes` (and said so); the added and removed counts are over the whole diff."""
    kept: list[str] = []
    size, truncated, added, removed = 0, False, 0, 0
    for line in diff_output(path_a, path_b):
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        if truncated:
            continue
        if len(line) > MAX_LINE_CHARS:  # one minified line must not fill the whole diff
            line = line[:MAX_LINE_CHARS] + " …"
        size += len(line.encode()) + 1
        if size > max_bytes:
            truncated = True
            continue
        kept.append(line)
    return {
        "lines_a": count_lines(path_a),
        "lines_b": count_lines(path_b),
        "added": added,
        "removed": removed,
        "diff": "\n".join(kept),  # without the ---/+++ header: the page names both versions itself
        "truncated": truncated,
    }


DURATION = re.compile(rb"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")
VIDEO = re.compile(rb"Stream #[^\n]*?: Video: (\w+)[^\n]*?, (\d{1,5})x(\d{1,5})")
AUDIO = re.compile(rb"Stream #[^\n]*?: Audio: (\w+)[^\n]*?, (\d{3,6}) Hz")


def probe(path: str, *, timeout: float) -> dict[str, Any]:
    """Duration, resolution and codecs as ffmpeg describes the file (the image has ffmpeg, not ffprobe)."""
    process = subprocess.Popen(
        ["ffmpeg", "-hide_banner", "-nostdin", "-i", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, described = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise Timeout(f"ffmpeg took longer than {timeout:.0f} s") from None
    described = (described or b"")[:MEDIA_PROBE_BYTES]  # it exits 1: "no output file", after describing the input
    facts: dict[str, Any] = {"duration": None, "width": None, "height": None, "video_codec": "", "audio_codec": ""}
    if match := DURATION.search(described):
        hours, minutes, seconds = match.groups()
        facts["duration"] = round(int(hours) * 3600 + int(minutes) * 60 + float(seconds), 3)
    if match := VIDEO.search(described):
        facts["video_codec"] = match.group(1).decode()[:40]
        facts["width"], facts["height"] = int(match.group(2)), int(match.group(3))
    if match := AUDIO.search(described):
        facts["audio_codec"] = match.group(1).decode()[:40]
        facts["sample_rate"] = int(match.group(2))
    if facts["duration"] is None and not facts["video_codec"] and not facts["audio_codec"]:
        raise ValueError("ffmpeg found no audio or video in it")
    return facts


def section(work: Any, timeout: float) -> dict[str, Any]:
    """One comparison, bounded in time; any failure is its own answer, never the others'."""
    signal.alarm(max(1, int(timeout)))
    try:
        return dict(work())
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"[:300]}
    finally:
        signal.alarm(0)


def main() -> None:
    started = time.monotonic()
    request = json.loads(sys.argv[1])
    folder, out, timeout = request["folder"], request["out"], float(request["timeout"])
    signal.signal(signal.SIGALRM, _on_alarm)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):  # what the previous pair left
        os.remove(os.path.join(out, name))
    report: dict[str, Any] = {}
    if request.get("pixels"):
        path_a, path_b = (os.path.join(folder, name) for name in request["pixels"].split())
        svg, width = bool(request.get("svg")), int(request["overlay_width"])
        report["pixels"] = section(
            lambda: compare_pixels(path_a, path_b, svg=svg, out=out, overlay_width=width), timeout
        )
    if request.get("lines"):
        a, b = os.path.join(folder, "a"), os.path.join(folder, "b")
        budget = int(request["max_diff_bytes"])
        report["lines"] = section(lambda: compare_lines(a, b, max_bytes=budget), timeout)
    if request.get("media"):
        report["media"] = {
            "a": section(lambda: probe(os.path.join(folder, "a"), timeout=timeout), timeout + 5),
            "b": section(lambda: probe(os.path.join(folder, "b"), timeout=timeout), timeout + 5),
        }
    with open(os.path.join(out, "report.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    for name in os.listdir(folder):
        if ".tmp" in name:
            os.remove(os.path.join(folder, name))
    print(json.dumps({"ok": True, "seconds": round(time.monotonic() - started, 3)}))  # noqa: T201 - the worker reads it


if __name__ == "__main__":
    main()
