"""Make a folium/Leaflet HTML page work with no network (runs inside the sandbox).

folium pages load Leaflet from a CDN. This module replaces those tags with the
Leaflet copy vendored in the image ($LEAFLET_DIR), inlined, and embeds the
default marker images as data URIs, so the page is one self-contained file:

    python -m offline_map /testbed/output/map.html        # rewrite in place
    python -m offline_map page.html -o /testbed/output/map.html

or from Python: `from offline_map import inline_leaflet; html = inline_leaflet(html)`.

It also draws a world base map under every Leaflet map of the page: sea as the
map's background, land and country borders from Natural Earth (the world-atlas
TopoJSON in $BASEMAP_DIR, decoded by topojson-client in the page), so an
offline map shows where things are. `--base-map 110m|50m|10m` picks the detail
(50m, about 750 kB, by default; 10m is 3.6 MB), `--base-map none` leaves it out,
and a map made with `L.map(el, {atelierBaseMap: false})` goes without it.
Tile layers need a network, which a shown page does not have (unless the operator
allowed the tile host): they are dropped, unless `--keep-tiles` is given.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
from pathlib import Path

LEAFLET_DIR = Path(os.environ.get("LEAFLET_DIR", "/opt/leaflet"))
BASEMAP_DIR = Path(os.environ.get("BASEMAP_DIR", "/opt/basemap"))
BASE_MAP_DETAILS = ("110m", "50m", "10m")
SEA, LAND, BORDER = "#aad3df", "#f2efe9", "#b3a99a"
# Runs once Leaflet is loaded: every map made after it gets the base map in a pane under the tiles,
# drawn on a canvas (thousands of coastline points), not clickable; tile layers are left out unless kept.
_BASE_MAP_JS = """
(function () {
  var topology = %(topology)s;
  var land = topojson.feature(topology, topology.objects.land);
  var borders = topojson.mesh(topology, topology.objects.countries, function (a, b) { return a !== b; });
  var keepTiles = %(keep_tiles)s;
  L.Map.mergeOptions({atelierBaseMap: true});
  var addLayer = L.Map.prototype.addLayer;
  L.Map.include({
    addLayer: function (layer) {
      if (!keepTiles && this.options.atelierBaseMap && layer instanceof L.TileLayer) { return this; }
      return addLayer.call(this, layer);
    }
  });
  L.Map.addInitHook(function () {
    if (!this.options.atelierBaseMap) { return; }
    this.getContainer().style.background = "%(sea)s";
    var pane = this.createPane("atelierBaseMap");
    pane.style.zIndex = 150;
    pane.style.pointerEvents = "none";
    var renderer = L.canvas({pane: "atelierBaseMap", padding: 0.5});
    var common = {pane: "atelierBaseMap", renderer: renderer, interactive: false};
    L.geoJSON(land, L.extend({attribution: "Base map: Natural Earth",
      style: {stroke: false, fillColor: "%(land)s", fillOpacity: 1}}, common)).addTo(this);
    L.geoJSON(borders, L.extend({style: {color: "%(border)s", weight: 1, fill: false}}, common)).addTo(this);
  });
})();
"""
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


def base_map_script(detail: str = "50m", *, keep_tiles: bool = False, basemap_dir: Path = BASEMAP_DIR) -> str:
    """topojson-client and the JavaScript that draws the base map under each Leaflet map made after it."""
    if detail not in BASE_MAP_DETAILS:
        raise ValueError(f"base map detail {detail!r}: one of {', '.join(BASE_MAP_DETAILS)}")
    client = (basemap_dir / "topojson-client.min.js").read_text(encoding="utf-8")
    topology = (basemap_dir / "world-atlas" / f"countries-{detail}.json").read_text(encoding="utf-8")
    values = {"topology": topology, "keep_tiles": "true" if keep_tiles else "false"}
    return client + "\n" + _BASE_MAP_JS % {**values, "sea": SEA, "land": LAND, "border": BORDER}


def inline_leaflet(
    html: str, leaflet_dir: Path = LEAFLET_DIR, *, base_map: str | None = "50m", keep_tiles: bool = False
) -> str:
    """Return `html` with Leaflet's JS and CSS inlined and marker images embedded, and (unless
    `base_map` is None) the world base map drawn under its maps, tile layers dropped unless `keep_tiles`."""
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
    extra_js = f"\n{base_map_script(base_map, keep_tiles=keep_tiles)}" if base_map else ""
    js_block = f"<script>{js}\n{icon_js}{extra_js}</script>"
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
    parser.add_argument(
        "--base-map",
        choices=[*BASE_MAP_DETAILS, "none"],
        default="50m",
        help="detail of the world base map drawn under each map (Natural Earth 1:110m, 1:50m, 1:10m), or none",
    )
    parser.add_argument("--keep-tiles", action="store_true", help="keep tile layers (they need a network)")
    args = parser.parse_args(argv)
    html = args.page.read_text(encoding="utf-8")
    base_map = None if args.base_map == "none" else args.base_map
    (args.output or args.page).write_text(
        inline_leaflet(html, base_map=base_map, keep_tiles=args.keep_tiles), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
