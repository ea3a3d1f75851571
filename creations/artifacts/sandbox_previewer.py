"""The program that makes previews and renderings, run INSIDE a preview sandbox.

Every file it reads was written by an agent, so it runs where a parser bug can
only hurt a throwaway gVisor sandbox with no network: the worker sends this
source to `python3 -I -c` in the sandbox (the image's Python with Pillow,
Markdown and Pygments) with the kind, the source file and an output folder,
and copies back what it leaves there:

- `preview.png`: a picture for the gallery, at most WIDTH pixels wide;
- `rendition.ogg`: MIDI rendered to audio a browser plays;
- `document.html`: markdown or code rendered to HTML (the worker sanitizes it).

Each tool runs with a timeout in its own process group; the program itself
prints one line of JSON saying what it made or why not. It imports nothing of
Atelier's and must run on the sandbox image's Python alone.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

# Arguments: kind, source file, output folder, preview width, seconds per tool, the artifact's name.
KIND, SOURCE, OUT, NAME = "", "", "", ""
WIDTH, TOOL_TIMEOUT = 640, 30.0
MAX_IMAGE_PIXELS = 80_000_000  # larger images are refused (decompression bombs)
MARKDOWN_EXTENSIONS = ["extra", "sane_lists", "codehilite", "toc"]
MARKDOWN_CONFIG = {"codehilite": {"guess_lang": False, "css_class": "highlight"}}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",  # gVisor is the sandbox; Chromium's own needs namespaces the sandbox does not grant
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-extensions",
    "--js-flags=--max-old-space-size=256",
    "--window-size=1280,800",
    "--virtual-time-budget=4000",
]


class ToolFailed(Exception):
    pass


def run(argv):
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        _, stderr = process.communicate(timeout=TOOL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ToolFailed(f"{os.path.basename(argv[0])} took longer than {TOOL_TIMEOUT:.0f} s") from None
    finally:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)  # helpers it left behind (Chromium's) go too
        process.wait()
    if process.returncode != 0:
        tail = (stderr or b"")[-300:].decode("utf-8", "replace").strip()
        raise ToolFailed(f"{os.path.basename(argv[0])} exited with {process.returncode}: {tail}")


def out(name):
    return os.path.join(OUT, name)


def save_preview(picture):
    """Downscale a picture a tool made (or the artifact itself) to the gallery's width, as PNG."""
    from PIL import Image, ImageOps

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    with Image.open(picture) as opened:
        opened.load()  # the first frame of animations
        image = ImageOps.exif_transpose(opened)
        image.thumbnail((WIDTH, WIDTH * 2))
        if image.mode not in ("RGB", "RGBA"):
            image = image.convert("RGBA")
        image.save(out("preview.png"), format="PNG", optimize=True)


def waveform(audio):
    picture = out("waveform.tmp.png")
    run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", audio, "-filter_complex",
         # Normalized and square-root scaled so quiet pieces still show their shape.
         f"aformat=channel_layouts=mono,dynaudnorm,showwavespic=s={WIDTH}x160:colors=#3d5afe:scale=sqrt",
         "-frames:v", "1", picture]
    )  # fmt: skip
    save_preview(picture)
    os.remove(picture)


def image():
    save_preview(SOURCE)


def video():
    poster = out("poster.tmp.png")
    for offset in ("1", "0"):  # one second in, unless the video is shorter
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", offset, "-i", SOURCE, "-frames:v", "1", poster])
        if os.path.exists(poster) and os.path.getsize(poster):
            break
    save_preview(poster)
    os.remove(poster)


def audio():
    waveform(SOURCE)


def midi():
    wav, ogg = out("music.tmp.wav"), out("rendition.ogg")
    soundfont = os.environ.get("SOUNDFONT", "/opt/atelier/soundfont.sf2")
    run(["fluidsynth", "-ni", "-q", "-g", "0.8", "-r", "44100", "-F", wav, soundfont, SOURCE])
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", wav, "-c:a", "libvorbis", "-q:a", "4", ogg])
    os.remove(wav)
    waveform(ogg)


def pdf():
    prefix = out("page.tmp")
    run(["pdftoppm", "-png", "-f", "1", "-l", "1", "-singlefile", "-scale-to", str(WIDTH * 2), SOURCE, prefix])
    save_preview(prefix + ".png")
    os.remove(prefix + ".png")


def html():
    # The page loads from a file:// URL with no network at all: it can only see
    # this sandbox's own files, and nothing it requests leaves the sandbox.
    screenshot = out("snapshot.tmp.png")
    profile = os.path.join("/tmp", f"chromium-profile-{os.getpid()}")  # noqa: S108 - inside the sandbox
    run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={screenshot}", f"file://{SOURCE}"])
    save_preview(screenshot)
    os.remove(screenshot)


def read_text():
    with open(SOURCE, "rb") as handle:
        data = handle.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")


def write_document(html_text):
    with open(out("document.html"), "w", encoding="utf-8") as handle:
        handle.write(html_text)


def markdown_document():
    import markdown

    signal.alarm(max(1, int(TOOL_TIMEOUT)))  # Python-Markdown is quadratic on some input: stop it, as a tool
    write_document(markdown.markdown(read_text(), extensions=MARKDOWN_EXTENSIONS, extension_configs=MARKDOWN_CONFIG))


def code_document():
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    signal.alarm(max(1, int(TOOL_TIMEOUT)))  # some lexers' patterns backtrack badly: stop them, as a tool
    text = read_text()
    try:
        lexer = get_lexer_for_filename(NAME, text, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    write_document(highlight(text, lexer, HtmlFormatter(cssclass="highlight", linenos=False, wrapcode=True)))


MAKERS = {
    "image": image,
    "video": video,
    "audio": audio,
    "midi": midi,
    "pdf": pdf,
    "html": html,
    "map": html,
    "markdown": markdown_document,
    "text": code_document,
}


def main():
    global KIND, SOURCE, OUT, WIDTH, TOOL_TIMEOUT, NAME  # set once, read by the makers
    KIND, SOURCE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
    WIDTH, TOOL_TIMEOUT, NAME = int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    started = time.monotonic()
    report: dict[str, object]
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):  # what the previous file left
        os.remove(os.path.join(OUT, name))
    try:
        MAKERS[KIND]()
        report = {"ok": True}
    except Exception as error:  # any failure means "no preview", said in one line
        report = {"ok": False, "error": f"{type(error).__name__}: {error}"[:500]}
    for name in os.listdir(OUT):
        if ".tmp" in name:
            os.remove(os.path.join(OUT, name))
    report["seconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(report))  # noqa: T201 - the worker reads this line


if __name__ == "__main__":
    main()
