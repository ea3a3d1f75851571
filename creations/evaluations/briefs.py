"""What each mode asks the model: the sandbox run's brief (the task, and where its answer goes)
and the plain completion's one message (the task, with its input files written into it, as the
reference package's plain mode embeds a long document in the prompt)."""

from __future__ import annotations

from collections.abc import Mapping

ANSWER_PATH = "/testbed/output/answer.txt"
ANSWER_FILE = "answer.txt"  # its path among a run's artifacts (relative to /testbed/output)

SANDBOX_ANSWER_NOTE = (
    f"When you have the answer, write it and nothing else to {ANSWER_PATH} (plain text, no explanation), "
    "then submit. The answer is read from that file, and scored."
)
PLAIN_ANSWER_NOTE = "Reply with the answer only, no explanation."


def sandbox_brief(*, prompt: str, file_names: list[str]) -> str:
    files = ""
    if file_names:
        files = "\n\nThe input files for this task are in /testbed/input: " + ", ".join(file_names) + "."
    return f"{prompt.strip()}{files}\n\n{SANDBOX_ANSWER_NOTE}"


def plain_prompt(*, prompt: str, files: Mapping[str, bytes]) -> str:
    parts = [prompt.strip()]
    for name, content in files.items():
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            parts.append(f"(The file {name} is not text, so it is not shown here.)")
            continue
        parts.append(f'<file name="{name}">\n{text}\n</file>')
    parts.append(PLAIN_ANSWER_NOTE)
    return "\n\n".join(parts)
