"""The image's toolchain works offline, as an agent would use it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(600)


def test_a_folium_map_becomes_one_self_contained_page_with_leaflet_inlined(shared_sandbox):
    script = (
        "import folium; m = folium.Map(location=[35.68, 139.76], zoom_start=12); "
        "folium.Marker([35.68, 139.76], popup='Tokyo').add_to(m); m.save('/tmp/map.html')"
    )
    result = shared_sandbox.run_command(
        f'python3 -c "{script}" && python -m offline_map /tmp/map.html -o /testbed/output/map.html && '
        "grep -c 'unpkg.com/leaflet\\|cdn.jsdelivr.net/npm/leaflet@' /testbed/output/map.html; "
        "grep -c 'L.Icon.Default.mergeOptions' /testbed/output/map.html",
        timeout=120,
    )
    assert result.output.split() == ["0", "1"], result.output


def test_the_media_tools_are_on_path_and_work(shared_sandbox):
    result = shared_sandbox.run_command(
        "cd /tmp && ffmpeg -loglevel error -f lavfi -i testsrc=duration=1:size=64x64:rate=5 -y clip.mp4 && "
        "python3 -c 'from midiutil import MIDIFile; m = MIDIFile(1); m.addNote(0, 0, 60, 0, 1, 100); "
        'm.writeFile(open("t.mid", "wb"))\' && '
        'fluidsynth -ni -F t.wav "$SOUNDFONT" t.mid >/dev/null 2>&1 && '
        'python3 -c \'import weasyprint; weasyprint.HTML(string="<p>日本語</p>").write_pdf("t.pdf")\' && '
        "pdftotext t.pdf - | head -1 && ls clip.mp4 t.wav t.pdf | wc -l",
        timeout=240,
    )
    assert result.exit_code == 0, result.output
    assert result.output.split()[-2:] == ["日本語", "3"]


def test_chromium_screenshots_a_page_from_the_agents_shell_under_its_memory_limits(shared_sandbox):
    """The shell limits each command's address space; Chromium (V8 reserves far more than it uses) still runs,
    and the limit is back in place for the next command."""
    result = shared_sandbox.run_command(
        "cd /tmp && printf '<body style=\"background:#3d5afe\"><h1>Hi</h1></body>' > page.html && "
        "chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir=/tmp/chromium "
        "--window-size=320,200 --screenshot=/tmp/shot.png file:///tmp/page.html >/dev/null 2>&1; "
        "python3 -c \"from PIL import Image; print(Image.open('/tmp/shot.png').size)\"",
        timeout=120,
    )
    assert result.output.strip().splitlines()[-1] == "(320, 200)", result.output
    limit = shared_sandbox.run_command("ulimit -S -v", timeout=30)
    assert limit.output.strip() != "unlimited"


# Drawn in a sandbox with no network: a folium map (whose default OpenStreetMap tiles cannot load), made
# offline by offline_map, screenshot by the image's Chromium; where Madrid and the open Atlantic fall on
# the 800x600 screenshot (Web Mercator at zoom 4, centred on 40°N 10°W) is read back from its pixels.
BASE_MAP_SCRIPT = r"""
import math, subprocess, folium
from PIL import Image

CENTRE, ZOOM, SIZE = (40.0, -10.0), 4, (800, 600)
m = folium.Map(location=CENTRE, zoom_start=ZOOM, zoom_control=False)
m.save("/tmp/map.html")
subprocess.run(["python3", "-m", "offline_map", "/tmp/map.html"], check=True)
subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=/tmp/chromium", "--hide-scrollbars", "--virtual-time-budget=4000",
                f"--window-size={SIZE[0]},{SIZE[1]}", "--screenshot=/tmp/map.png", "file:///tmp/map.html"],
               check=True, capture_output=True, timeout=400)

def pixel(lat, lon):
    def world(lat, lon):
        scale = 256 * 2 ** ZOOM
        s = math.sin(math.radians(lat))
        return scale * (lon + 180) / 360, scale * (0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi))
    (x, y), (cx, cy) = world(lat, lon), world(*CENTRE)
    return round(x - cx + SIZE[0] / 2), round(y - cy + SIZE[1] / 2)

image = Image.open("/tmp/map.png").convert("RGB")
print("land", "#%02x%02x%02x" % image.getpixel(pixel(40.42, -3.70)))   # Madrid
print("sea", "#%02x%02x%02x" % image.getpixel(pixel(38.0, -20.0)))     # the Atlantic west of Portugal
"""


def test_the_image_keeps_its_installed_packages_but_not_the_wheels_or_uv_they_came_from(sandbox_image):
    import docker

    client = docker.from_env(timeout=120)
    listing = client.containers.run(
        sandbox_image,
        ["sh", "-c", "ls -A /tmp; echo --; command -v uv || true; echo --; command -v pip; command -v python3"],
        remove=True,
    ).decode()
    left_in_tmp, installers, tools = (part.split() for part in listing.split("--\n"))
    assert (left_in_tmp, installers, tools) == ([], [], ["/opt/venv/bin/pip", "/opt/venv/bin/python3"])
    steps = [step.get("CreatedBy") or "" for step in client.api.history(sandbox_image)]
    assert not [step for step in steps if "wheels" in step]  # no layer the wheels were copied into


def test_an_offline_map_shows_land_and_sea_drawn_in_a_sandbox_with_no_network(sandbox_image):
    from sandboxes.offline import start_offline_sandbox

    box = start_offline_sandbox(
        labels={"atelier.owner": "tests", "atelier.run_id": "tests"},
        purpose="test",
        memory_bytes=1024 * 1024 * 1024,
        scratch_bytes=64 * 1024 * 1024,
        max_in_bytes=1024 * 1024,
        max_out_bytes=1024 * 1024,
    )
    try:
        code, output = box.exec(["python3", "-c", BASE_MAP_SCRIPT], timeout=450)
    finally:
        box.stop()
    text = output.decode(errors="replace")
    assert code == 0, text
    colours = dict(line.split(" ", 1) for line in text.strip().splitlines()[-2:])
    assert colours["land"] == "#f2efe9", text  # offline_map's land
    assert colours["sea"] == "#aad3df", text  # and its sea: the map shows where the coast is
