"""A screenshot of an HTML artifact in headless Chromium with the network blocked.

Chromium gets an HTTP proxy that we run on loopback for the duration of one
screenshot. The proxy answers exactly one URL (the page) and refuses everything
else, including loopback addresses (`<-loopback>` removes Chromium's implicit
bypass), HTTPS tunnels and websockets; WebRTC may not use UDP outside the proxy.
The page is served over HTTP rather than from a file, so it cannot frame
`file://` URLs of the worker's disk into the screenshot.
"""

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.conf import settings

from creations.artifacts.headers import html_csp
from creations.artifacts.preview_tools import run_tool

PAGE_URL = "http://artifact.invalid/index.html"
VIEWPORT = (1280, 800)


def _handler_for(page: bytes) -> type[BaseHTTPRequestHandler]:
    class OnePageProxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != PAGE_URL:
                self.send_error(403, "Network is blocked while making previews")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", html_csp(img_sources="'self' data: blob:"))
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def _refuse(self) -> None:
            self.send_error(403, "Network is blocked while making previews")

        do_CONNECT = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = _refuse

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # the page's blocked requests are expected noise

    return OnePageProxy


@contextmanager
def _one_page_proxy(page: bytes) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(page))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def chromium_argv(*, proxy_port: int, profile: Path, screenshot: Path) -> list[str]:
    argv = [
        settings.PREVIEW_CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--mute-audio",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        "--dns-prefetch-disable",
        f"--user-data-dir={profile}",
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--js-flags=--max-old-space-size=256",
        f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
        "--virtual-time-budget=4000",
        f"--screenshot={screenshot}",
    ]
    if os.geteuid() == 0:  # Chromium's own sandbox cannot run as root (development machines, CI)
        argv.append("--no-sandbox")
    return [*argv, PAGE_URL]


def html_screenshot(page: bytes, *, workdir: Path) -> Path:
    """Screenshot `page` into a PNG in workdir; raises PreviewToolError on failure or timeout."""
    screenshot = workdir / "snapshot.png"
    profile = workdir / "chromium-profile"
    profile.mkdir()
    with _one_page_proxy(page) as port:
        argv = chromium_argv(proxy_port=port, profile=profile, screenshot=screenshot)
        run_tool(argv, cwd=workdir, limit_memory=False)
    return screenshot
