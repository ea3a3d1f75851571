"""The pages and the files they show: the artifact origin, uploads, the gallery, previews."""

from marshmallow.validate import Range

from config.settings.base import DEBUG, MIDDLEWARE, env
from config.settings.runs import RUN_INPUT_MAX_BYTES

# --- Web / artifacts ---
# (pages, artifact origin, previews)
# Artifacts are served only from this separate origin, never with the platform's cookies:
# another host name in production. Development (`make run` serves both ports) uses another
# port of localhost, so the platform answers at localhost:8000 and 127.0.0.1:8000 alike.
ARTIFACT_ORIGIN = env.str(
    "ARTIFACT_ORIGIN", default="http://localhost:8001" if DEBUG else "http://127.0.0.1:8000"
).rstrip("/")
# Hosts an HTML or map artifact may load images, stylesheets, fonts and scripts from (map tiles,
# say), as origins listed exactly: `https://tile.openstreetmap.org`, no wildcards or paths
# (checked in config/settings/checks.py). Empty: a page loads nothing from another host, since
# any request out can carry what the page read. The agent is told which hosts these are.
ARTIFACT_PAGE_HOSTS: list[str] = env.list("ARTIFACT_PAGE_HOSTS", default=[])
ARTIFACT_URL_MAX_AGE = env.int("ARTIFACT_URL_MAX_AGE", default=3600, validate=Range(min=30))  # s a signed URL lives
ARTIFACT_INLINE_RENDER_MAX_BYTES = env.int(  # markdown/text larger than this is offered as a download
    "ARTIFACT_INLINE_RENDER_MAX_BYTES", default=512 * 1024, validate=Range(min=1024)
)
UPLOAD_MAX_FILE_BYTES = env.int("UPLOAD_MAX_FILE_BYTES", default=25 * 1024 * 1024, validate=Range(min=1))
# A request body larger than this is refused (413) before it is parsed (config/request_limits.py):
# the files a creation may take together and room for its text. Form text and JSON are held to
# Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB). A proxy in front allows at least this much.
REQUEST_BODY_MAX_BYTES = env.int(
    "REQUEST_BODY_MAX_BYTES", default=RUN_INPUT_MAX_BYTES + 10 * 1024 * 1024, validate=Range(min=64 * 1024)
)
# In DEBUG, a request refused for what it sent gets the page production gives, not the debug page.
DEFAULT_EXCEPTION_REPORTER = "config.errors.InputErrorReporter"
UPLOAD_ALLOWED_EXTENSIONS: list[str] = env.list(
    "UPLOAD_ALLOWED_EXTENSIONS",
    default=[
        *("txt", "md", "csv", "tsv", "json", "geojson", "yaml", "yml", "xml", "html", "pdf", "py", "js", "css"),
        *("png", "jpg", "jpeg", "gif", "webp", "svg", "mp3", "wav", "ogg", "mid", "midi", "mp4", "webm"),
        *("xlsx", "docx", "pptx", "ttf", "otf", "zip"),
    ],
)
GALLERY_PAGE_SIZE = env.int("GALLERY_PAGE_SIZE", default=24, validate=Range(min=1, max=200))
# The files a run's page and its creation's page show at once (`?page=` walks the rest).
RUN_PAGE_ARTIFACTS = env.int("RUN_PAGE_ARTIFACTS", default=24, validate=Range(min=1, max=200))
# Previews (pictures, MIDI rendered to audio, markdown and code rendered to HTML) are
# made at ingestion in a sandbox with no network (creations/artifacts/previews.py):
# each tool bounded in time, the sandbox in memory, each file it returns in size,
# and all of a run's previews in time (the files left past it get none).
PREVIEW_TIMEOUT = env.float("PREVIEW_TIMEOUT", default=30.0, validate=Range(min=1))  # s per tool
# A markdown or code rendering is one parse of at most ARTIFACT_INLINE_RENDER_MAX_BYTES, about a second
# for the largest; one that takes longer is a file made to stall the parser, and the run it came with
# waits for it to be stopped. Never more than PREVIEW_TIMEOUT.
PREVIEW_DOCUMENT_TIMEOUT = env.float("PREVIEW_DOCUMENT_TIMEOUT", default=10.0, validate=Range(min=1))  # s per document
PREVIEW_RUN_SECONDS = env.float("PREVIEW_RUN_SECONDS", default=300.0, validate=Range(min=1))  # s per run
PREVIEW_MEMORY_BYTES = env.int("PREVIEW_MEMORY_BYTES", default=1024 * 1024 * 1024, validate=Range(min=64 * 1024 * 1024))
PREVIEW_MAX_INPUT_BYTES = env.int("PREVIEW_MAX_INPUT_BYTES", default=200 * 1024 * 1024, validate=Range(min=1))
PREVIEW_OUTPUT_MAX_BYTES = env.int("PREVIEW_OUTPUT_MAX_BYTES", default=32 * 1024 * 1024, validate=Range(min=64 * 1024))
PREVIEW_WIDTH = env.int("PREVIEW_WIDTH", default=640, validate=Range(min=64, max=4096))
# A PDF's first pages are drawn there too, to be read on its page: how many, and how large
# (pixels on a page's longer side); the rest of a longer document is a download away.
PREVIEW_PDF_PAGES = env.int("PREVIEW_PDF_PAGES", default=30, validate=Range(min=0, max=500))
PREVIEW_PDF_PAGE_PIXELS = env.int("PREVIEW_PDF_PAGE_PIXELS", default=1600, validate=Range(min=200, max=4096))
MIDDLEWARE.insert(1, "creations.artifacts.origin.ArtifactOriginMiddleware")  # host-based dispatch, first
