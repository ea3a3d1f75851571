"""Demo trajectory: an interactive 3-day food map in one offline HTML file (recorded model choices)."""
# ruff: noqa: E501 - recorded data: long lines are the commands and files the model wrote

STOPS_JSON = r"""[
  {"day": 1, "time": "08:00", "name": "Tsukiji Outer Market", "lat": 35.6655, "lon": 139.7708,
   "food": "Tamagoyaki on a stick and a tuna rice bowl", "tip": "Go early: stalls sell out and close by early afternoon."},
  {"day": 1, "time": "11:00", "name": "Asakusa Nakamise-dori", "lat": 35.7118, "lon": 139.7966,
   "food": "Melon pan and ningyo-yaki cakes", "tip": "Eat by the stall: walking while eating is frowned upon here."},
  {"day": 1, "time": "14:30", "name": "Ameyoko, Ueno", "lat": 35.7107, "lon": 139.7745,
   "food": "Fruit skewers, takoyaki and a cold beer", "tip": "Cash is still king in the smaller stalls."},
  {"day": 1, "time": "18:30", "name": "Yanaka Ginza", "lat": 35.7275, "lon": 139.7668,
   "food": "Menchi-katsu croquettes", "tip": "Watch the sunset from the 'Yuyake Dandan' steps."},
  {"day": 2, "time": "09:30", "name": "Takeshita-dori, Harajuku", "lat": 35.6717, "lon": 139.7030,
   "food": "A crepe rolled with strawberries and cream", "tip": "Weekday mornings are far less crowded."},
  {"day": 2, "time": "12:30", "name": "Shibuya food halls", "lat": 35.6595, "lon": 139.7005,
   "food": "Tonkotsu ramen at a counter", "tip": "Buy your ticket at the vending machine first."},
  {"day": 2, "time": "15:30", "name": "Shimokitazawa", "lat": 35.6613, "lon": 139.6680,
   "food": "Soup curry and a pour-over coffee", "tip": "Wander the lanes: the best cafes have no sign on the street."},
  {"day": 2, "time": "19:30", "name": "Omoide Yokocho, Shinjuku", "lat": 35.6933, "lon": 139.6997,
   "food": "Yakitori from the grill", "tip": "Tiny bars seat six: order a drink with your skewers."},
  {"day": 3, "time": "08:30", "name": "Toyosu Market", "lat": 35.6456, "lon": 139.7848,
   "food": "Kaisendon (seafood rice bowl)", "tip": "The tuna auction viewing deck opens before 6 am."},
  {"day": 3, "time": "12:00", "name": "Tsukishima Monja Street", "lat": 35.6630, "lon": 139.7820,
   "food": "Monjayaki with mentaiko and cheese", "tip": "Staff will show you how to cook it on the griddle."},
  {"day": 3, "time": "15:00", "name": "Ningyocho", "lat": 35.6857, "lon": 139.7826,
   "food": "Taiyaki and amazake", "tip": "Look for the queue at the oldest taiyaki shop."},
  {"day": 3, "time": "19:00", "name": "Yurakucho under the tracks", "lat": 35.6751, "lon": 139.7628,
   "food": "Izakaya plates: edamame, karaage, oden", "tip": "Trains rumble overhead: that is the charm."}
]
"""

MAKE_MAP = r'''# One self-contained HTML page: a 3-day Tokyo food tour on a Leaflet map.
# Leaflet is inlined by `python -m offline_map` (the copy vendored in this sandbox), which
# also draws the world base map under the map (land, sea, borders), so it works with no network.
import json
import subprocess

stops = json.load(open("/testbed/work/stops.json"))
DAYS = {1: ("Day 1: East side classics", "#e4572e"), 2: ("Day 2: West side neighbourhoods", "#2e86ab"),
        3: ("Day 3: Markets and old town", "#3bb273")}

page = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tokyo in 3 days: a food map</title>
<link rel="stylesheet" href="https://unpkg.com/leaflet@1.9.4/dist/leaflet.css">
<script src="https://unpkg.com/leaflet@1.9.4/dist/leaflet.js"></script>
<style>
  html, body { margin: 0; height: 100%; font-family: system-ui, sans-serif; }
  #app { display: flex; height: 100%; }
  #side { width: 330px; overflow-y: auto; padding: 16px; box-sizing: border-box; background: #fbf8f3; }
  #map { flex: 1; background: #dfe7ec; }
  h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #666; font-size: 13px; margin-bottom: 12px; }
  h2 { font-size: 15px; margin: 18px 0 6px; display: flex; align-items: center; gap: 8px; }
  .swatch { width: 14px; height: 14px; border-radius: 50%; display: inline-block; }
  .stop { padding: 6px 8px; border-radius: 6px; cursor: pointer; font-size: 13px; }
  .stop:hover { background: #efe6da; } .time { font-weight: 700; margin-right: 6px; }
  .pin { color: #fff; border-radius: 50%; width: 26px; height: 26px; line-height: 26px; text-align: center;
         font: 700 13px system-ui, sans-serif; border: 2px solid #fff; box-shadow: 0 1px 4px rgba(0,0,0,.4); }
  @media (max-width: 700px) { #app { flex-direction: column-reverse; } #side { width: 100%; height: 45%; } }
</style></head>
<body><div id="app"><div id="side"><h1>Tokyo in 3 days</h1>
<div class="sub">A food tour: tap a stop to see it on the map. Works offline.</div><div id="list"></div></div>
<div id="map"></div></div>
<script>
const STOPS = __STOPS__;
const DAYS = __DAYS__;
const map = L.map("map", {zoomControl: true});
const overlays = {}, markers = [];
for (const [day, [title, color]] of Object.entries(DAYS)) {
  const group = L.layerGroup().addTo(map);
  const dayStops = STOPS.filter(s => String(s.day) === day);
  L.polyline(dayStops.map(s => [s.lat, s.lon]), {color, weight: 4, opacity: 0.8, dashArray: "8 6"}).addTo(group);
  const section = document.createElement("div");
  section.innerHTML = `<h2><span class="swatch" style="background:${color}"></span>${title}</h2>`;
  dayStops.forEach((s, i) => {
    const icon = L.divIcon({className: "", html: `<div class="pin" style="background:${color}">${i + 1}</div>`,
                            iconSize: [30, 30], iconAnchor: [15, 15], popupAnchor: [0, -14]});
    const marker = L.marker([s.lat, s.lon], {icon, title: s.name}).addTo(group).bindPopup(
      `<b>${s.time} &middot; ${s.name}</b><br>${s.food}<br><i>Tip: ${s.tip}</i>`);
    markers.push(marker);
    const row = document.createElement("div");
    row.className = "stop";
    row.innerHTML = `<span class="time">${s.time}</span>${s.name}<br><small>${s.food}</small>`;
    row.onclick = () => { map.setView([s.lat, s.lon], 15); marker.openPopup(); };
    section.appendChild(row);
  });
  document.getElementById("list").appendChild(section);
  overlays[title] = group;
}
L.control.layers(null, overlays, {collapsed: false}).addTo(map);
map.fitBounds(L.featureGroup(markers).getBounds().pad(0.1));
</script></body></html>
"""
page = page.replace("__STOPS__", json.dumps(stops, ensure_ascii=False))
page = page.replace("__DAYS__", json.dumps({str(k): v for k, v in DAYS.items()}))
open("/testbed/work/map_template.html", "w").write(page)
# A city's coastline needs Natural Earth's finest detail (1:10m).
subprocess.run(["python3", "-m", "offline_map", "--base-map", "10m", "/testbed/work/map_template.html",
                "-o", "/testbed/output/tokyo-food-map.html"], check=True)
print(f"wrote /testbed/output/tokyo-food-map.html with {len(stops)} stops over {len(DAYS)} days")
'''

TRAJECTORY = {
    "kind": "map",
    "title": "Interactive 3-day Tokyo food map",
    "brief": (
        "Make an interactive map for a 3-day food tour of Tokyo: one HTML file with a marker for each stop "
        "(time of day and what to eat, with a tip), a route per day, and it must work with no internet."
    ),
    "keywords": [
        "map",
        "food",
        "tour",
        "itinerary",
        "city",
        "tokyo",
        "leaflet",
        "route",
        "travel",
        "trip",
        "interactive",
        "restaurant",
    ],
    "steps": [
        {
            "text": "Maps need Leaflet; let me see whether the sandbox has a local copy, since the page must work offline.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": 'ls -la /testbed/input; echo "LEAFLET_DIR=$LEAFLET_DIR BASEMAP_DIR=$BASEMAP_DIR"; ls $LEAFLET_DIR $BASEMAP_DIR; python3 -m offline_map --help | head -n 3'
                    },
                }
            ],
        },
        {
            "text": (
                "Leaflet and a world base map are vendored, and `offline_map` inlines both into a page. I'll plan twelve stops, four per day, "
                "grouped by neighbourhood so each day's route is walkable or a short train ride."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {"command": "create", "path": "/testbed/work/stops.json", "file_text": STOPS_JSON},
                }
            ],
        },
        {
            "text": (
                "Now the page: a sidebar itinerary, numbered markers coloured by day with popups (time, food, tip), "
                "a dashed route per day, and layer toggles. No tiles: offline_map draws land and sea under it, so nothing external is needed."
            ),
            "calls": [
                {
                    "name": "str_replace_editor",
                    "arguments": {"command": "create", "path": "/testbed/work/make_map.py", "file_text": MAKE_MAP},
                }
            ],
        },
        {
            "text": "Building the page.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {"command": "mkdir -p /testbed/output && cd /testbed/work && python3 make_map.py"},
                }
            ],
        },
        {
            "text": "Checking that nothing is loaded from outside and the content is there.",
            "calls": [
                {
                    "name": "execute_bash",
                    "arguments": {
                        "command": 'cd /testbed/output && ls -la && (grep -Eo \'<(script|link)[^>]+(src|href)="[^"]+"\' tokyo-food-map.html '
                        "|| echo 'no external scripts or stylesheets'); grep -c 'L.polyline' tokyo-food-map.html; "
                        "grep -o 'Omoide Yokocho' tokyo-food-map.html | head -n 1"
                    },
                }
            ],
        },
        {
            "text": "The map is one self-contained file.",
            "calls": [
                {
                    "name": "submit",
                    "arguments": {
                        "summary": (
                            "tokyo-food-map.html: one self-contained page (Leaflet inlined, works offline) with 12 "
                            "stops over 3 days: numbered markers with the time, what to eat and a tip, a route per "
                            "day, a clickable itinerary, on a base map of land and sea that needs no internet."
                        )
                    },
                }
            ],
        },
    ],
}

HOTEL_LAYER = (
    r"""// The hotel, where each day starts and ends: a marker and a layer of its own.
const hotelLayer = L.layerGroup().addTo(map);
const hotelIcon = L.divIcon({className: "", html: '<div class="pin hotel">H</div>',
                             iconSize: [34, 34], iconAnchor: [17, 17], popupAnchor: [0, -16]});
const hotelMarker = L.marker([HOTEL.lat, HOTEL.lon], {icon: hotelIcon, title: HOTEL.name, zIndexOffset: 1000})
  .addTo(hotelLayer).bindPopup(`<b>${HOTEL.name}</b><br>${HOTEL.where}: each day starts and ends here`);
markers.push(hotelMarker);
overlays["Our hotel"] = hotelLayer;
const hotelRow = document.createElement("div");
hotelRow.className = "stop";
hotelRow.innerHTML = `<span class="time">Base</span>${HOTEL.name}<br><small>${HOTEL.where}</small>`;
hotelRow.onclick = () => { map.setView([HOTEL.lat, HOTEL.lon], 15); hotelMarker.openPopup(); };
document.getElementById("list").prepend(hotelRow);
"""
    "L.control.layers(null, overlays"
)


def _edit(text: str, old: str, new: str) -> dict[str, object]:
    return {
        "text": text,
        "calls": [
            {
                "name": "str_replace_editor",
                "arguments": {
                    "command": "str_replace",
                    "path": "/testbed/work/make_map.py",
                    "old_str": old,
                    "new_str": new,
                },
            }
        ],
    }


FOLLOW_UPS = [
    {
        "instruction": "Add our hotel next to Tokyo Station to the map.",
        "steps": [
            {
                "text": "Let me see what the first version left in /testbed.",
                "calls": [{"name": "execute_bash", "arguments": {"command": "ls -R /testbed"}}],
            },
            _edit(
                "make_map.py builds the page from stops.json. The hotel is not a food stop, so it gets its own entry "
                "rather than a place in a day's route: its position first.",
                '        3: ("Day 3: Markets and old town", "#3bb273")}\n',
                '        3: ("Day 3: Markets and old town", "#3bb273")}\n'
                'HOTEL = {"name": "Our hotel", "where": "Next to Tokyo Station", "lat": 35.6812, "lon": 139.7671}\n',
            ),
            _edit(
                "The page gets it as a constant, like the stops and days.",
                'page = page.replace("__DAYS__", json.dumps({str(k): v for k, v in DAYS.items()}))\n',
                'page = page.replace("__DAYS__", json.dumps({str(k): v for k, v in DAYS.items()}))\n'
                'page = page.replace("__HOTEL__", json.dumps(HOTEL, ensure_ascii=False))\n',
            ),
            _edit(
                "...and the script in the page reads it.",
                "const DAYS = __DAYS__;\n",
                "const DAYS = __DAYS__;\nconst HOTEL = __HOTEL__;\n",
            ),
            _edit(
                "A square dark pin with an H sets it apart from the round, numbered food stops.",
                "  @media (max-width: 700px)",
                "  .hotel { background: #1f2937; border-radius: 8px; width: 30px; height: 30px; line-height: 30px; font-size: 17px; }\n"
                "  @media (max-width: 700px)",
            ),
            _edit(
                "Then the marker with a popup, its own layer in the layer switcher, a row at the top of the "
                "itinerary, and it counts when the map fits its view.",
                "L.control.layers(null, overlays",
                HOTEL_LAYER,
            ),
            {
                "text": "Building the page again.",
                "calls": [
                    {"name": "execute_bash", "arguments": {"command": "cd /testbed/work && python3 make_map.py"}}
                ],
            },
            {
                "text": "Checking that the hotel is in, and that the page still loads nothing from outside.",
                "calls": [
                    {
                        "name": "execute_bash",
                        "arguments": {
                            "command": 'cd /testbed/output && ls -la && (grep -Eo \'<(script|link)[^>]+(src|href)="[^"]+"\' tokyo-food-map.html '
                            "|| echo 'no external scripts or stylesheets'); grep -o 'const HOTEL = [^;]*' tokyo-food-map.html; "
                            "grep -o 'overlays\\[\"Our hotel\"\\]' tokyo-food-map.html"
                        },
                    }
                ],
            },
            {
                "text": "The hotel is on the map.",
                "calls": [
                    {
                        "name": "submit",
                        "arguments": {
                            "summary": (
                                "tokyo-food-map.html now shows your hotel next to Tokyo Station: a dark square 'H' "
                                "marker with a popup, a 'Base' row at the top of the itinerary that jumps to it, and "
                                "an 'Our hotel' layer you can switch on and off. The 12 food stops and 3 routes are as "
                                "before, and the page still works offline."
                            )
                        },
                    }
                ],
            },
        ],
    }
]
