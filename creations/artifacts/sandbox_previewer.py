"""The program that makes previews and renderings, run INSIDE a preview sandbox.

Every file it reads was written by an agent, so it runs where a parser bug can
only hurt a throwaway gVisor sandbox with no network: the worker sends this
source to `python3 -I -c` in the sandbox (the image's Python with Pillow,
Markdown and Pygments) with a batch of files (a JSON list of jobs: id, kind,
source file, name) and an output folder, and copies back what it leaves in
`<output>/<job id>/`:

- `preview.png`: a picture for the gallery, at most WIDTH pixels wide;
- `rendition.ogg`: MIDI rendered to audio a browser plays;
- `document.html`: markdown or code rendered to HTML (the worker sanitizes it);
- `page-<n>.png`: a PDF's first PDF_PAGES pages, for reading it (all or none of them).

One started interpreter serves the whole batch: a forked child makes the files
one after the other and says how each ended, while this process watches its
progress (in memory they share); a job past its time (or one that kills the
child) costs only its own preview, and a fresh child goes on with the rest. Each tool runs with a timeout
in its own process group. Past the batch's deadline no job starts; when the
scratch folder runs short of room, the rest are handed back to the worker for
the next batch. One line of JSON per job says what it made or why not. It
imports nothing of Atelier's and must run on the sandbox image's Python alone.
"""

import contextlib
import json
import mmap
import os
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from typing import Any

# Arguments: the jobs file, output folder, preview width, seconds per tool, seconds for the whole batch,
# the largest file kept, a PDF's pages drawn and their pixels on the longer side, and seconds per
# document (a markdown or code rendering). KIND, SOURCE, OUT and NAME are the current job's.
KIND, SOURCE, OUT, NAME, OUTPUT_ROOT = "", "", "", "", ""
WIDTH, TOOL_TIMEOUT, DOCUMENT_TIMEOUT, OUTPUT_MAX_BYTES = 640, 30.0, 10.0, 32 * 1024 * 1024
PDF_PAGES, PDF_PAGE_PIXELS = 30, 1600
MAX_IMAGE_PIXELS = 80_000_000  # larger images are refused (decompression bombs)
MARKDOWN_EXTENSIONS = ["extra", "sane_lists", "codehilite", "toc"]
MARKDOWN_CONFIG = {"codehilite": {"guess_lang": False, "css_class": "highlight"}}
# Chromium's headless shell (the image has no other): under gVisor a screenshot costs about half the CPU
# of the whole browser's headless mode. Its binary, past any script that would start processes first.
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
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
    # The GPU and network services as threads of the browser, not processes of their own: under gVisor
    # each process Chromium starts costs much of a second of CPU, and with --no-sandbox the separate
    # processes isolate nothing (the sandbox does). One screenshot took about a fifth less CPU.
    "--in-process-gpu",
    "--enable-features=NetworkServiceInProcess2",
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
    with contextlib.suppress(ToolFailed):  # the first page's preview stands without them
        pdf_pages()


def pdf_pages():
    """The first PDF_PAGES pages, each at most PDF_PAGE_PIXELS on its longer side, as page-<n>.png;
    none when the tool fails or takes too long (a page it was still writing would be cut short)."""
    if PDF_PAGES < 1:
        return
    folder = out("pages.tmp")
    os.makedirs(folder)
    try:
        run(["pdftoppm", "-png", "-f", "1", "-l", str(PDF_PAGES), "-scale-to", str(PDF_PAGE_PIXELS), SOURCE,
             os.path.join(folder, "p")])  # fmt: skip
        for name in os.listdir(folder):  # p-1.png, or p-01.png, p-001.png as the page count needs
            number = int(name[2:-4])
            os.rename(os.path.join(folder, name), out(f"page-{number}.png"))
    except ToolFailed:
        for name in os.listdir(OUT):
            if name.startswith("page-"):
                os.remove(out(name))
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def html():
    # The page loads from a file:// URL with no network at all: it can only see
    # this sandbox's own files, and nothing it requests leaves the sandbox.
    screenshot = out("snapshot.tmp.png")
    profile = out("chromium-profile.tmp")
    argv = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={screenshot}", f"file://{SOURCE}"]
    # V8 reserves far more address space than it uses: the browser runs without the soft limit, as the
    # image's `chromium` command lifts it (the sandbox's memory limit holds all the same).
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    try:
        run(argv)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        shutil.rmtree(profile, ignore_errors=True)
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


# Made once per process and reused for every document of the batch: building them (extensions,
# a stylesheet, matching a name against every lexer's patterns) costs more than rendering a small file.
REUSED: dict[str, Any] = {}


def markdown_document():
    import markdown

    if "markdown" not in REUSED:
        REUSED["markdown"] = markdown.Markdown(extensions=MARKDOWN_EXTENSIONS, extension_configs=MARKDOWN_CONFIG)
    signal.alarm(max(1, int(DOCUMENT_TIMEOUT)))  # Python-Markdown is quadratic on some input: stop it
    write_document(REUSED["markdown"].reset().convert(read_text()))


def code_document():
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, find_lexer_class_for_filename

    if "formatter" not in REUSED:
        REUSED["formatter"] = HtmlFormatter(cssclass="highlight", linenos=False, wrapcode=True)
    signal.alarm(max(1, int(DOCUMENT_TIMEOUT)))  # some lexers' patterns backtrack badly: stop them
    text = read_text()
    # The lexer for a name's extension (or the whole name: Makefile) is looked up once per batch.
    extension = os.path.splitext(NAME)[1].lower() or NAME
    lexers = REUSED.setdefault("lexers", {})
    if extension not in lexers:
        lexers[extension] = find_lexer_class_for_filename(NAME, text) or TextLexer
    write_document(highlight(text, lexers[extension](stripnl=False), REUSED["formatter"]))


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


DOCUMENT_KINDS = ("markdown", "text")
WATCH_SECONDS = 0.25  # how often the parent looks at its child's progress


def job_seconds(job):
    """How long one job may take: media may run up to three tools in a row (MIDI: synthesize, encode,
    draw); a document is one parse."""
    return (DOCUMENT_TIMEOUT if job["kind"] in DOCUMENT_KINDS else 3 * TOOL_TIMEOUT) + 10


def make(job):
    """Make one job's files in OUT/<id>/; its result, said in one line."""
    global KIND, SOURCE, OUT, NAME  # the makers read the current job's
    KIND, SOURCE, NAME = job["kind"], job["source"], job["name"]
    OUT = os.path.join(OUTPUT_ROOT, job["id"])
    os.makedirs(OUT, exist_ok=True)
    started = time.monotonic()
    result = {"id": job["id"]}
    try:
        MAKERS[KIND]()
        result["ok"] = True
    except Exception as error:  # any failure means "no preview", said in one line
        result.update(ok=False, error=f"{type(error).__name__}: {error}"[:500])
    finally:
        signal.alarm(0)  # a parse's alarm must not fire in the next job
    for name in os.listdir(OUT):  # only finished files within the size limit go back
        path = os.path.join(OUT, name)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif ".tmp" in name or os.path.getsize(path) > OUTPUT_MAX_BYTES:
            os.remove(path)
    with contextlib.suppress(OSError):
        os.remove(SOURCE)  # its room is the next job's
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def room_left():
    usage = os.statvfs(OUTPUT_ROOT)
    return usage.f_bavail * usage.f_frsize


def say(result):
    """One job's line on stdout, written at once (the child and its parent share the descriptor)."""
    os.write(sys.stdout.fileno(), (json.dumps(result) + "\n").encode())


# Where the child is, in memory it shares with its parent: how many jobs it has said, and whether it is
# making the next one. Reading it costs the parent no message and the child no system call per file.
PROGRESS = struct.Struct("qq")


def serve(jobs, progress):
    """In a forked child: each job in turn, its line said as soon as it is done."""
    for index, job in enumerate(jobs):
        # Short of room: the rest wait for the next batch, once this one's files are copied out. (Looked at
        # before media, and before every eighth document: a document's rendering is a few MB at most.)
        looks = job["kind"] not in DOCUMENT_KINDS or index % 8 == 0
        if index > 0 and looks and room_left() < 2 * OUTPUT_MAX_BYTES:
            for later in jobs[index:]:
                say({"id": later["id"], "deferred": True})
            PROGRESS.pack_into(progress, 0, len(jobs), 0)
            return
        PROGRESS.pack_into(progress, 0, index, 1)
        say(make(job))
        PROGRESS.pack_into(progress, 0, index + 1, 0)


def run_batch(jobs, deadline):
    """Every job's line on stdout, whatever the files do to the child making them: the parent watches
    the child's progress a few times a second, stops it when a job takes too long (or the batch's time
    runs out), says why for that job, and starts a fresh child for the rest."""
    pending = list(jobs)
    progress = mmap.mmap(-1, mmap.PAGESIZE)
    while pending:
        if time.monotonic() >= deadline:
            for job in pending:
                say({"id": job["id"], "ok": False, "error": "the run's time for previews ran out", "late": True})
            return
        PROGRESS.pack_into(progress, 0, 0, 0)
        ended, child_end = os.pipe()  # closed when the child ends: its end is seen at once
        child = os.fork()
        if child == 0:
            os.close(ended)
            try:
                serve(pending, progress)
            finally:
                os._exit(0)
        os.close(child_end)
        seen, seen_at = None, time.monotonic()
        while True:
            ready, _, _ = select.select([ended], [], [], WATCH_SECONDS)
            position, working = PROGRESS.unpack_from(progress, 0)
            now = time.monotonic()
            if (position, working) != seen:
                seen, seen_at = (position, working), now
            if ready:  # the child ended: done, or killed by what it was making
                if working:
                    say({"id": pending[position]["id"], "ok": False, "error": "the previewer died making it"})
                    position += 1
                break
            too_long = working and now - seen_at > job_seconds(pending[position])
            if too_long or now >= deadline:
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                position, working = PROGRESS.unpack_from(progress, 0)
                if working and now < deadline:
                    seconds = job_seconds(pending[position])
                    say({"id": pending[position]["id"], "ok": False, "error": f"took longer than {seconds:.0f} s"})
                    position += 1
                break
        os.close(ended)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child, 0)
        pending = pending[position:]


def main():
    global WIDTH, TOOL_TIMEOUT, DOCUMENT_TIMEOUT, OUTPUT_MAX_BYTES, OUTPUT_ROOT, PDF_PAGES, PDF_PAGE_PIXELS
    jobs_file, OUTPUT_ROOT = sys.argv[1], sys.argv[2]
    WIDTH, TOOL_TIMEOUT = int(sys.argv[3]), float(sys.argv[4])
    deadline = time.monotonic() + float(sys.argv[5])
    OUTPUT_MAX_BYTES = int(sys.argv[6])
    PDF_PAGES, PDF_PAGE_PIXELS = int(sys.argv[7]), int(sys.argv[8])
    DOCUMENT_TIMEOUT = float(sys.argv[9])
    shutil.rmtree(OUTPUT_ROOT, ignore_errors=True)  # what the previous batch left
    os.makedirs(OUTPUT_ROOT)
    with open(jobs_file, encoding="utf-8") as handle:
        jobs = json.load(handle)
    try:
        run_batch(jobs, deadline)
    finally:
        shutil.rmtree(os.path.dirname(jobs_file), ignore_errors=True)


if __name__ == "__main__":
    main()
