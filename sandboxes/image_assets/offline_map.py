"""Make a folium/Leaflet HTML page work with no network (runs inside the sandbox).

folium pages load Leaflet from a CDN. This module replaces those tags with the
Leaflet copy vendored in the image ($LEAFLET_DIR), inlined, and embeds the
default marker images as data URIs, so the page is one self-contained file:

    python -m offline_map /testbed/output/map.html        # rewrite in place
    python -m offline_map page.html -o /testbed/output/map.html

or from Python: `from offline_map import inline_leaflet; html = inline_leaflet(html)`.
Tiles from a tile server never load in the gallery: an artifact page may fetch nothing
from another host (it could send its own signed URL along), so draw maps offline.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
from pathlib import Path

LEAFLET_DIR = Path(os.environ.get("LEAFLET_DIR", "/opt/leaflet"))
_LEAFLET_JS_TAG = re.compile(r'<script[^>]+src="[^"]*/leaflet(?:-src)?(?:\.min)?\.js"[^>]*>\s*</script>', re.I)
_LEAFLET_CSS_TAG = re.compile(r'<link[^>]+href="[^"]*/leaflet(?:\.min)?\.css"[^>]*/?>', re.I)
# Optional folium extras (jQuery, Bootstrap, Font Awesome, awesome-markers):
# dropped when the page does not use them, since they cannot load offline.
_EXTRA_TAG = re.compile(
    r'<(?:script[^>]+src|link[^>]+href)="https?://[^"]*(?:jquery|bootstrap|font-awesome|fontawesome|'
    r'awesome-markers|awesome\.rotate)[^"]*"[^>]*>(?:\s*</script>)?',
    re.I,
)


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def inline_leaflet(html: str, leaflet_dir: Path = LEAFLET_DIR) -> str:
    """Return `html` with Leaflet's JS and CSS inlined and marker images embedded."""
    js = (leaflet_dir / "leaflet.js").read_text(encoding="utf-8")
    css = (leaflet_dir / "leaflet.css").read_text(encoding="utf-8")
    images = leaflet_dir / "images"
    for image in images.glob("*.png"):
        css = css.replace(f"images/{image.name}", _data_uri(image))
    icons = {
        "iconUrl": _data_uri(images / "marker-icon.png"),
        "iconRetinaUrl": _data_uri(images / "marker-icon-2x.png"),
        "shadowUrl": _data_uri(images / "marker-shadow.png"),
    }
    icon_js = "L.Icon.Default.mergeOptions({{{}}});".format(",".join(f'{k}:"{v}"' for k, v in icons.items()))
    js_block = f"<script>{js}\n{icon_js}</script>"
    css_block = f"<style>{css}</style>"
    html, js_count = _LEAFLET_JS_TAG.subn(lambda _m: js_block, html, count=1)
    html, css_count = _LEAFLET_CSS_TAG.subn(lambda _m: css_block, html, count=1)
    head_end = html.lower().find("</head>")
    insert_at = head_end if head_end >= 0 else 0
    missing = (css_block if not css_count else "") + (js_block if not js_count else "")
    html = html[:insert_at] + missing + html[insert_at:]
    if "AwesomeMarkers" not in html:
        html = _EXTRA_TAG.sub("", html)
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("-o", "--output", type=Path, help="where to write (default: in place)")
    args = parser.parse_args(argv)
    html = args.page.read_text(encoding="utf-8")
    (args.output or args.page).write_text(inline_leaflet(html), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
