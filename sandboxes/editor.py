"""`str_replace_editor`: view, create, str_replace, insert, undo_edit.

The edit runs inside the sandbox (sandboxes/programs/editor_helper.py, reading
one JSON request on stdin), so it sees exactly the files the shell sees, as the
sandbox user, and never touches the worker's filesystem. Undo history lives in
the sandbox too (UNDO_DIR), so it is per sandbox by construction.
Every failure is returned as a result the model reads; nothing raises.

The agent can write files anywhere it works, so the helper must not pick up
any of them: the image's Python by absolute path (on the read-only root),
isolated (`-I`: no current or script directory on sys.path, no user site, no
PYTHON* variables), without site-packages (`-S`: only the standard library),
from `/`. It reads only regular files of bounded size (a FIFO would block it,
/dev/zero would fill the sandbox's memory), and the worker reads a bounded
reply (`DockerSandbox.exec`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sandboxes.programs import program_text
from sandboxes.runtime import Sandbox

COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
MAX_OUTPUT_CHARS = 16_000
MAX_FILE_TEXT_BYTES = 10 * 1024 * 1024
MAX_READ_BYTES = 64 * 1024 * 1024  # larger files are for execute_bash (sed -n, head, grep)
PYTHON = "/opt/venv/bin/python3"  # the venv's link to the image's python3, on the read-only root
UNDO_DIR = "/tmp/.atelier-undo"  # noqa: S108 - a path inside the sandbox
# Runs in the sandbox with the image's python3 (isolated, see above). Standard library only.
HELPER = program_text("editor_helper.py")


@dataclass(frozen=True)
class EditorResult:
    output: str
    is_error: bool = False


def helper_argv(
    python: str = PYTHON,
    *,
    output_chars: int = MAX_OUTPUT_CHARS,
    read_bytes: int = MAX_READ_BYTES,
    undo_dir: str = UNDO_DIR,
) -> list[str]:
    """How the helper runs: isolated, standard library only (see above), its limits as arguments."""
    return [python, "-I", "-S", "-c", HELPER, str(output_chars), str(read_bytes), undo_dir]


def _error(message: str) -> EditorResult:
    return EditorResult(output=message, is_error=True)


def _validate(
    command: Any,
    path: Any,
    file_text: Any,
    view_range: Any,
    old_str: Any,
    new_str: Any,
    insert_line: Any,
) -> str | None:
    if command not in COMMANDS:
        return f"Unknown command {command!r}. Allowed commands: {', '.join(COMMANDS)}."
    if not isinstance(path, str) or not path:
        return "The parameter `path` is required and must be a string."
    if "\0" in path:
        return "The path contains a NUL byte."
    if command == "create":
        if not isinstance(file_text, str):
            return "The parameter `file_text` is required for command: create."
        if len(file_text.encode("utf-8", "surrogatepass")) > MAX_FILE_TEXT_BYTES:
            return f"file_text is larger than {MAX_FILE_TEXT_BYTES} bytes; write big files with execute_bash."
    if command == "view" and view_range is not None:
        valid = (
            isinstance(view_range, list)
            and len(view_range) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        )
        if not valid:
            return "The parameter `view_range` must be a list of two integers, for example [10, 20] or [10, -1]."
    if command == "str_replace":
        if not isinstance(old_str, str) or old_str == "":
            return "The parameter `old_str` is required for command: str_replace (and must not be empty)."
        if new_str is not None and not isinstance(new_str, str):
            return "The parameter `new_str` must be a string."
    if command == "insert":
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            return "The parameter `insert_line` (an integer) is required for command: insert."
        if not isinstance(new_str, str):
            return "The parameter `new_str` is required for command: insert."
    return None


def str_replace_editor(
    sandbox: Sandbox,
    *,
    command: str,
    path: str,
    file_text: str | None = None,
    view_range: list[int] | None = None,
    old_str: str | None = None,
    new_str: str | None = None,
    insert_line: int | None = None,
) -> EditorResult:
    problem = _validate(command, path, file_text, view_range, old_str, new_str, insert_line)
    if problem:
        return _error(problem)
    request = {
        "command": command,
        "path": path,
        "file_text": file_text,
        "view_range": view_range,
        "old_str": old_str,
        "new_str": new_str,
        "insert_line": insert_line,
    }
    try:
        payload = json.dumps(request).encode("utf-8", "surrogatepass")
        code, output = sandbox.exec(helper_argv(), stdin=payload, timeout=60)
    except Exception as exc:
        return _error(f"The editor could not run in the sandbox: {exc}")
    text = output.decode("utf-8", "replace").strip()
    try:
        reply = json.loads(text.splitlines()[-1]) if text else None
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict) or "output" not in reply:
        return _error(f"The editor failed (exit {code}): {text[-2000:] or 'no output'}")
    return EditorResult(output=str(reply["output"]), is_error=bool(reply.get("is_error")))
