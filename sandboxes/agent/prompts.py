"""What the model is told: the system prompt, the task message, and the short
notes the loop adds as the run goes on."""

from __future__ import annotations

from collections.abc import Sequence

SYSTEM_PROMPT = """\
You are working on a computer of your own: a Linux sandbox with Python 3, the \
scientific and creative toolchain (numpy, matplotlib, Pillow, CairoSVG, \
ffmpeg, MIDI tools and a synthesizer with a General MIDI soundfont, PDF \
makers, many fonts, Leaflet for offline maps) and no person watching. You act \
only through tools:

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
they are opened, so inline or bundle what they need.
- Keep each reply short and act through tool calls; you have a limited number \
of steps.
- When the output is complete and checked, call submit with a one-paragraph \
summary of what you made."""

NO_TOOL_CALL_NUDGE = (
    "You replied without calling a tool. Act through the tools: use execute_bash or "
    "str_replace_editor to keep working, or call submit if /testbed/output is complete."
)

LAST_STEP_NOTE = "[This is your last step: make sure your files are in /testbed/output and call submit now.]"
TOKEN_BUDGET_NOTE = "[The token budget for this task is used up: call submit now with what is in /testbed/output.]"  # noqa: S105 - a message, not a password
SHARED_BUDGET_NOTE = "[The budget this task draws on is used up: call submit now with what is in /testbed/output.]"
TIME_BUDGET_NOTE = "[Time is almost up: call submit now with what is in /testbed/output.]"


def task_message(brief: str, input_files: Sequence[str]) -> str:
    if input_files:
        listing = "\n".join(f"- /testbed/input/{name}" for name in input_files)
        inputs = f"The person attached these files:\n{listing}"
    else:
        inputs = "No files were attached (/testbed/input is empty)."
    return f"{brief.strip()}\n\n{inputs}\n\nPut the deliverables in /testbed/output, then call submit."


def steps_left_note(remaining: int) -> str:
    if remaining <= 1:
        return LAST_STEP_NOTE
    return f"[{remaining} steps left]"
