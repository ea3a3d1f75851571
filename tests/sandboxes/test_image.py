"""The image's toolchain works offline, as an agent would use it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(300)


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
