"""Small real media files, made here (no tool needed): a picture, a tone, a PDF of some pages, for the
tests and benchmarks to feed the platform (previews, renderers, artifacts)."""

import io
import math
import struct
import wave

from PIL import Image, ImageDraw


def png_bytes(width: int = 320, height: int = 200, color: str = "#3d5afe") -> bytes:
    image = Image.new("RGB", (width, height), color)
    draw = ImageDraw.Draw(image)
    draw.ellipse((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill="#ffca28")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def wav_bytes(seconds: float = 2.0, frequency: float = 440.0, rate: int = 22050) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        frames = b"".join(
            struct.pack("<h", int(12000 * math.sin(2 * math.pi * frequency * i / rate)))
            for i in range(int(seconds * rate))
        )
        out.writeframes(frames)
    return buffer.getvalue()


def pdf_bytes(text: str = "Hello from page one", *, pages: int = 1) -> bytes:
    """A valid PDF written by hand (no PDF library needed): `text` on the first page, then
    "Page 2", "Page 3"... on the others."""
    font = 3 + 2 * pages
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (3 + 2 * index) for index in range(pages)), pages),
    ]
    for index in range(pages):
        stream = f"BT /F1 24 Tf 72 720 Td ({text if index == 0 else f'Page {index + 1}'}) Tj ET".encode()
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (4 + 2 * index, font)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
