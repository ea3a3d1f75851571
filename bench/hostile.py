"""Hostile-output benchmark: what agent files cost the platform around the sandbox.

    .venv/bin/python bench/hostile.py [--sizes 4096,16384,65536]

1. Sniffing: seconds to classify text built to stall a regex engine (newlines,
   " \\n", "[" and others), with the sniffer as it is and, as the baseline in
   the same run, the patterns it had before they were made linear (kept here,
   only here). The old ones are measured up to 16 KiB: at 64 KiB they take a
   minute or more each, holding the GIL.
2. Previews: seconds per file in the preview sandbox (gVisor, no network),
   its start included, beside the same tool run directly on the host as the
   worker used to (the cost of isolation, not a target).

Writes bench/results/hostile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from creations.artifacts.sniff import sniff_bytes  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "hostile.json"
PIECES = ["\n", " \n", "[", "[a](", "**a", "-", "|", "<!--", "def "]
OLD_LIMIT = 16384

# The sniffer's text patterns before they were made linear: the baseline.
_OLD_PATTERNS = [
    re.compile(r"^(?:\ufeff|\s+|<\?xml[^>]*\?>|<!--.*?-->|<!doctype[^>]*>)*", re.IGNORECASE | re.DOTALL),
    re.compile(r"^#{1,6} \S", re.MULTILINE),
    re.compile(r"^\s*(?:[-*+]|\d+\.) \S", re.MULTILINE),
    re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"),
    re.compile(r"^```", re.MULTILINE),
    re.compile(r"^\|?(?: *:?-{3,}:? *\|)+", re.MULTILINE),
    re.compile(r"(?<![\w*])\*\*[^*\n]+\*\*(?!\w)"),
    re.compile(r"^> \S", re.MULTILINE),
    re.compile(
        r"^\s*(?:def |class |import |from \S+ import|function |const |let |var |#include|public |package )|[;{]\s*$",
        re.MULTILINE,
    ),
]


def _old_sniff(text: str) -> None:
    _OLD_PATTERNS[0].sub("", text, count=1)
    for pattern in _OLD_PATTERNS[1:]:
        pattern.findall(text)


def _timed(func: Any, *args: Any) -> float:
    started = time.perf_counter()
    func(*args)
    return time.perf_counter() - started


def bench_sniffing(sizes: list[int]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for piece in PIECES:
        row: dict[str, Any] = {}
        for size in sizes:
            text = (piece * (size // len(piece) + 1))[:size]
            row[f"new_{size}_s"] = round(_timed(sniff_bytes, text.encode()), 4)
            if size <= OLD_LIMIT:
                row[f"old_{size}_s"] = round(_timed(_old_sniff, text), 4)
        rows[repr(piece)] = row
        print(f"sniff {piece!r:8}", "  ".join(f"{k}={v}" for k, v in row.items()))
    return rows


def bench_previews() -> dict[str, Any]:
    from django.conf import settings

    from creations.artifacts.previews import SCRATCH, _parse_results, _start_sandbox, previewer_argv
    from creations.models import ArtifactKind
    from devstack.samples import pdf_bytes, png_bytes, wav_bytes

    samples = {
        ArtifactKind.IMAGE: ("poster.png", png_bytes(1600, 1000)),
        ArtifactKind.AUDIO: ("tone.wav", wav_bytes(seconds=3)),
        ArtifactKind.PDF: ("report.pdf", pdf_bytes()),
        ArtifactKind.MARKDOWN: ("notes.md", b"# Notes\n\n" + b"- a point with **bold** text\n" * 2000),
    }
    host_commands = {
        ArtifactKind.AUDIO: ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "{src}", "-filter_complex",
                             "showwavespic=s=640x160", "-frames:v", "1", "{out}.png"],
        ArtifactKind.PDF: ["pdftoppm", "-png", "-f", "1", "-l", "1", "-singlefile", "{src}", "{out}"],
    }  # fmt: skip
    started = time.perf_counter()
    sandbox = _start_sandbox(run_id=0)
    results: dict[str, Any] = {"sandbox_start_s": round(time.perf_counter() - started, 3)}
    print(f"preview sandbox start: {results['sandbox_start_s']} s")
    try:
        for kind, (name, data) in samples.items():
            job = {"id": "0", "kind": str(kind), "name": name, "source": f"{SCRATCH}/in/0/source"}
            started = time.perf_counter()
            sandbox.write_files({"0/source": data, "jobs.json": json.dumps([job]).encode()}, dest=f"{SCRATCH}/in")
            _, output = sandbox.exec(previewer_argv(120), timeout=150)
            in_sandbox = time.perf_counter() - started
            made = _parse_results(output, count=1).get("0", {})
            row: dict[str, Any] = {"sandbox_s": round(in_sandbox, 3), "ok": made.get("ok") is True}
            if kind in host_commands:
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp) / name
                    src.write_bytes(data)
                    argv = [a.format(src=src, out=Path(tmp) / "out") for a in host_commands[kind]]
                    row["host_tool_s"] = round(_timed(subprocess.run, argv), 3)
            results[str(kind)] = row
            print(f"preview {kind:9} " + "  ".join(f"{k}={v}" for k, v in row.items()))
    finally:
        sandbox.stop()
    results["preview_width"] = settings.PREVIEW_WIDTH
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4096,16384,65536")
    parser.add_argument("--no-previews", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    result: dict[str, Any] = {
        "machine": platform.node(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "sniffing": bench_sniffing(sizes),
    }
    if not args.no_previews:
        result["previews"] = bench_previews()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2))
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
