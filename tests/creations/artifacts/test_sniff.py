"""Artifact kinds come from the content, whatever the file is called."""

import io
import struct
import wave

import pytest
from PIL import Image

from creations.artifacts.sniff import HEAD_BYTES, sniff_bytes
from creations.models import ArtifactKind


def _image(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format=fmt)
    return buffer.getvalue()


def _wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


MIDI = b"MThd" + struct.pack(">IHHH", 6, 0, 1, 96) + b"MTrk" + struct.pack(">I", 4) + b"\x00\xff\x2f\x00"
MP4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + b"\x00" * 64
WEBM = (
    b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm" + b"\0" * 32
)
MP3_FRAME = b"\xff\xfb\x90\x64" + b"\x00" * 200


@pytest.mark.parametrize(
    ("content", "kind", "content_type"),
    [
        (_image("PNG"), ArtifactKind.IMAGE, "image/png"),
        (_image("JPEG"), ArtifactKind.IMAGE, "image/jpeg"),
        (_image("GIF"), ArtifactKind.IMAGE, "image/gif"),
        (_image("WEBP"), ArtifactKind.IMAGE, "image/webp"),
        (_wav(), ArtifactKind.AUDIO, "audio/wav"),
        (b"ID3\x04\x00\x00\x00\x00\x00\x00" + MP3_FRAME, ArtifactKind.AUDIO, "audio/mpeg"),
        (MP3_FRAME, ArtifactKind.AUDIO, "audio/mpeg"),
        (b"OggS\x00\x02" + b"\x00" * 22 + b"\x01vorbis", ArtifactKind.AUDIO, "audio/ogg"),
        (b"fLaC\x00\x00\x00\x22" + b"\x00" * 34, ArtifactKind.AUDIO, "audio/flac"),
        (MIDI, ArtifactKind.MIDI, "audio/midi"),
        (MP4, ArtifactKind.VIDEO, "video/mp4"),
        (WEBM, ArtifactKind.VIDEO, "video/webm"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", ArtifactKind.PDF, "application/pdf"),
    ],
)
def test_media_files_are_recognised_by_their_signature(content: bytes, kind: str, content_type: str) -> None:
    sniffed = sniff_bytes(content, name="untitled.bin")
    assert (sniffed.kind, sniffed.content_type) == (kind, content_type)


def test_html_named_like_an_image_is_still_html() -> None:
    sniffed = sniff_bytes(b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>", name="photo.png")
    assert sniffed.kind == ArtifactKind.HTML
    assert sniffed.content_type.startswith("text/html")


def test_a_png_named_like_a_page_is_an_image() -> None:
    assert sniff_bytes(_image("PNG"), name="index.html").kind == ArtifactKind.IMAGE


def test_a_leaflet_page_is_a_map() -> None:
    page = b"""<!doctype html><html><head><link rel="stylesheet" href="leaflet.css">
    <script src="leaflet.js"></script></head><body><div id="map"></div>
    <script>var map = L.map('map').setView([35.68, 139.69], 12);</script></body></html>"""
    assert sniff_bytes(page, name="tokyo.txt").kind == ArtifactKind.MAP


def test_an_html_fragment_without_an_html_tag_is_html() -> None:
    fragment = b"<div class='x'><p>Hello</p><script>fetch('/api')</script></div>"
    assert sniff_bytes(fragment, name="notes.md").kind == ArtifactKind.HTML


def test_svg_is_recognised_after_an_xml_declaration_and_comments() -> None:
    svg = b'<?xml version="1.0"?>\n<!-- made by the agent -->\n<svg xmlns="http://www.w3.org/2000/svg" width="4"></svg>'
    sniffed = sniff_bytes(svg, name="poster.png")
    assert (sniffed.kind, sniffed.content_type) == (ArtifactKind.SVG, "image/svg+xml")


def test_markdown_is_recognised_from_its_structure() -> None:
    text = b"# Report\n\nSome findings:\n\n- one\n- two\n\nSee [the data](https://example.com/data).\n"
    assert sniff_bytes(text, name="report").kind == ArtifactKind.MARKDOWN


def test_python_with_comments_is_text_not_markdown() -> None:
    code = b"# compute things\nimport math\n\n\ndef area(r):\n    # the area\n    return math.pi * r ** 2\n"
    sniffed = sniff_bytes(code, name="area.py")
    assert (sniffed.kind, sniffed.content_type) == (ArtifactKind.TEXT, "text/plain; charset=utf-8")


def test_a_markdown_name_picks_markdown_only_among_text_kinds() -> None:
    assert sniff_bytes(b"plain words", name="README.md").kind == ArtifactKind.MARKDOWN
    assert sniff_bytes(b"<html><body>x</body></html>", name="README.md").kind == ArtifactKind.HTML


def test_unknown_binary_is_other_and_never_gets_a_renderable_type() -> None:
    sniffed = sniff_bytes(b"PK\x03\x04" + b"\x00" * 60, name="page.html")
    assert sniffed.kind == ArtifactKind.OTHER
    assert "html" not in sniffed.content_type
    assert not sniffed.content_type.startswith("text/")


def test_an_empty_file_is_text() -> None:
    assert sniff_bytes(b"", name="empty").kind == ArtifactKind.TEXT


# Text an agent can write to stall a regex engine: each repeats one piece up to the
# sniffer's whole head. Quadratic patterns took 4 s on 16 KiB of newlines and
# about 80 s on 64 KiB; linear ones take milliseconds (bench/sniff.py measures them).
HOSTILE_TEXT_PIECES = [
    "\n", " \n", "\t", " ", "[", "[a](", "[a]", "](", "*", "** ", "**a", "a**b", "-", "-\n", "|", "| ---", ":---",
    "#", "# ", "> ", "```", "1.", "<", "<!--", "<!doctype", "<?xml", "<p ", "<svg", "def ", "from a", ";", "{ ",
    "L.map", "\ufeff",
]  # fmt: skip


@pytest.mark.timeout(60)  # one quadratic pattern alone would overrun it many times over
def test_hostile_text_of_the_full_head_length_is_classified_at_once() -> None:
    for piece in HOSTILE_TEXT_PIECES:
        text = (piece * (HEAD_BYTES // len(piece) + 1)).encode()[:HEAD_BYTES]
        assert sniff_bytes(text, name="notes").kind in ArtifactKind.values, piece
