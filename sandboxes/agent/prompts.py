"""What the model is told: the system prompt, the task message, and the short
notes the loop adds as the run goes on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sandboxes.agent.events import Continuation, EarlierVersion

_SYSTEM_PROMPT = """\
You are working on a computer of your own: a Linux sandbox with Python 3, the \
scientific and creative toolchain (numpy, matplotlib, Pillow, CairoSVG, \
ffmpeg, MIDI tools and a synthesizer with a General MIDI soundfont, PDF \
makers, many fonts, Leaflet and a world base map for offline maps) and no \
person watching. You act only through tools:

- execute_bash runs a command in a persistent bash shell (cd, variables and \
background jobs carry over between calls);
- str_replace_editor views, creates and edits files;
- submit ends the task.

Your working directory is /testbed. Files the person gave you are in \
/testbed/input (it may be empty). Everything you deliver goes in \
/testbed/output; only that directory is handed back, so put finished files \
there with clear names.

How to work well here:
- Look before you assume: list directories, read the inputs, check which \
tools and libraries are installed.
- Prefer writing and running code to guessing; check your results (open the \
file, measure its size, count its pages, probe its duration) and fix what is \
wrong.
- Deliverables must work on their own: no network access is guaranteed when \
they are opened, so inline or bundle what they need. {page_hosts}
- Maps: `python -m offline_map page.html` inlines Leaflet (in $LEAFLET_DIR) \
into a Leaflet or folium page and draws a world base map under every map in \
it (land, sea and country borders from Natural Earth, in $BASEMAP_DIR as \
TopoJSON with topojson-client.min.js), so the map shows geography offline; \
it drops tile layers, which need a network (--keep-tiles keeps them). Its \
detail suits a country (--base-map 10m for a city's coastline).
- People who cannot see or hear your files need a text alternative: beside \
each image, poster, chart, map, video or audio file, write what it shows or \
says to `<file>.alt.txt` (e.g. /testbed/output/poster.png.alt.txt: one or \
two plain sentences, at most {alt_chars} characters; for audio, a transcript \
or description of up to {transcript_chars} characters), and for a video with \
speech or text, captions in WebVTT to `<file>.vtt` (e.g. clip.mp4.vtt, \
starting with the line WEBVTT). The platform reads these files for screen \
readers and captions and does not list them as files of their own.
- Keep each reply short and act through tool calls; you have a limited number \
of steps.
- When the output is complete and checked, call submit with a one-paragraph \
summary of what you made."""

# The sidecar files the prompt describes, read at ingestion (creations/artifacts/sidecars.py).
ALT_TEXT_MAX_CHARS = 1000
TRANSCRIPT_MAX_CHARS = 20_000
CAPTIONS_MAX_BYTES = 256 * 1024


def system_prompt(page_hosts: Sequence[str] = ()) -> str:
    """The system prompt; `page_hosts`, the hosts an HTML page may load images, styles, fonts and
    scripts from when it is shown (ARTIFACT_PAGE_HOSTS)."""
    if page_hosts:
        hosts = (
            "Pages you deliver (HTML, maps) are shown where they may load images, stylesheets, fonts "
            f"and scripts from these hosts only: {', '.join(page_hosts)}; they can fetch nothing else "
            "(no other host, no fetch or XHR), so inline everything else."
        )
    else:
        hosts = (
            "Pages you deliver (HTML, maps) are shown where they can load nothing from another host: "
            "no CDN, no web fonts, no map tiles."
        )
    return _SYSTEM_PROMPT.format(page_hosts=hosts, alt_chars=ALT_TEXT_MAX_CHARS, transcript_chars=TRANSCRIPT_MAX_CHARS)


SYSTEM_PROMPT = system_prompt()

NO_TOOL_CALL_NUDGE = (
    "You replied without calling a tool. Act through the tools: use execute_bash or "
    "str_replace_editor to keep working, or call submit if /testbed/output is complete."
)

LAST_STEP_NOTE = "[This is your last step: make sure your files are in /testbed/output and call submit now.]"
TOKEN_BUDGET_NOTE = "[The token budget for this task is used up: call submit now with what is in /testbed/output.]"  # noqa: S105 - a message, not a password
SHARED_BUDGET_NOTE = "[The budget this task draws on is used up: call submit now with what is in /testbed/output.]"
TIME_BUDGET_NOTE = "[Time is almost up: call submit now with what is in /testbed/output.]"


def task_message(brief: str, input_files: Sequence[str], renamed: Mapping[str, str] | None = None) -> str:
    """`renamed`: of the input files, those the platform gave a safe name, with the name the person gave them."""
    renamed = renamed or {}
    if input_files:
        listing = "\n".join(f"- /testbed/input/{name}{_sent_as(name, renamed)}" for name in input_files)
        inputs = f"The person attached these files:\n{listing}"
    else:
        inputs = "No files were attached (/testbed/input is empty)."
    return f"{brief.strip()}\n\n{inputs}\n\nPut the deliverables in /testbed/output, then call submit."


def _sent_as(name: str, renamed: Mapping[str, str]) -> str:
    if name not in renamed:
        return ""
    return f" (the person named it \u201c{renamed[name]}\u201d, and may call it so; it is this file)"


def renamed_inputs_note(renamed: Mapping[str, str]) -> str:
    """For a refine, whose earlier requests may name files by the names they were given."""
    if not renamed:
        return ""
    pairs = "; ".join(f"\u201c{old}\u201d is /testbed/input/{new}" for new, old in sorted(renamed.items()))
    return f" Input files renamed when they were given: {pairs}."


def steps_left_note(remaining: int) -> str:
    if remaining <= 1:
        return LAST_STEP_NOTE
    return f"[{remaining} steps left]"


# A refine carries what earlier versions asked and what the agent said it made, never their
# tool outputs: the context stays this size however long those runs were.
CARRIED_VERSIONS = 6  # the first version's brief, then the most recent ones
CARRIED_REQUEST_CHARS = 4000
CARRIED_SUMMARY_CHARS = 2000


def _clipped(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]} […]"


def carried_versions(earlier: Sequence[EarlierVersion]) -> list[EarlierVersion]:
    """The earlier versions a refine's conversation carries: the first (it holds the brief) and the latest."""
    kept = list(earlier) if len(earlier) <= CARRIED_VERSIONS else [earlier[0], *earlier[-(CARRIED_VERSIONS - 1) :]]
    return [
        EarlierVersion(
            request=_clipped(version.request, CARRIED_REQUEST_CHARS),
            summary=_clipped(version.summary, CARRIED_SUMMARY_CHARS) or "(The agent left no summary.)",
        )
        for version in kept
    ]


def earlier_messages(continuation: Continuation) -> list[dict[str, Any]]:
    """The conversation so far, as the model sees it: each request and the agent's summary of its answer."""
    messages: list[dict[str, Any]] = []
    for version in carried_versions(continuation.earlier):
        messages.append({"role": "user", "content": version.request})
        messages.append({"role": "assistant", "content": version.summary})
    return messages


def refine_message(continuation: Continuation) -> str:
    restored = (
        f"Your computer continues from version {continuation.from_version}: /testbed holds the files you had "
        "then (input/, output/, and your scripts and data)."
    )
    if continuation.left_out:
        restored += f" {continuation.left_out}"
    restored += renamed_inputs_note(continuation.renamed_inputs)
    return (
        f"{continuation.instruction.strip()}\n\n{restored} Change what is asked and keep the rest. Put the "
        "deliverables in /testbed/output, then call submit with a summary of what you made."
    )


def person_message(author: str, text: str) -> str:
    return f"[A message from {author}, who is watching you work:]\n{text.strip()}"
