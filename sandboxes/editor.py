"""`str_replace_editor`: view, create, str_replace, insert, undo_edit.

The edit runs inside the sandbox (a short Python program reading one JSON
request on stdin), so it sees exactly the files the shell sees, as the
sandbox user, and never touches the worker's filesystem. Undo history lives in
the sandbox too (/tmp/.atelier-undo), so it is per sandbox by construction.
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

from sandboxes.runtime import Sandbox

COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
MAX_OUTPUT_CHARS = 16_000
MAX_FILE_TEXT_BYTES = 10 * 1024 * 1024
MAX_READ_BYTES = 64 * 1024 * 1024  # larger files are for execute_bash (sed -n, head, grep)
PYTHON = "/opt/venv/bin/python3"  # the venv's link to the image's python3, on the read-only root


@dataclass(frozen=True)
class EditorResult:
    output: str
    is_error: bool = False


# Runs in the sandbox with the image's python3 (isolated, see above). Standard library only.
_HELPER = r"""
import hashlib, json, os, stat, subprocess, sys
os.chdir("/")
UNDO = "/tmp/.atelier-undo"
LIMIT = int(sys.argv[1])
MAX_READ = int(sys.argv[2])

def fail(message):
    print(json.dumps({"output": message, "is_error": True})); sys.exit(0)

def done(message):
    if len(message) > LIMIT:
        message = message[:LIMIT] + "\n<response clipped: view a smaller range with view_range>"
    print(json.dumps({"output": message, "is_error": False})); sys.exit(0)

def numbered(text, first=1):
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), first))

def read(path):
    try:
        info = os.stat(path)
    except OSError as e:
        fail(f"Cannot read {path}: {e.strerror}")
    if stat.S_ISDIR(info.st_mode):
        fail(f"{path} is a directory.")
    if not stat.S_ISREG(info.st_mode):
        fail(f"{path} is not a regular file (a device, FIFO or socket); inspect it with execute_bash instead.")
    if info.st_size > MAX_READ:
        fail(f"{path} is {info.st_size} bytes, too large for the editor; inspect it with execute_bash "
             "(for example sed -n '1,100p', head, grep).")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_READ + 1)
    except IsADirectoryError:
        fail(f"{path} is a directory.")
    except PermissionError:
        fail(f"Permission denied: {path}")
    except OSError as e:
        fail(f"Cannot read {path}: {e.strerror}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        fail(f"{path} is not UTF-8 text (a binary file?); inspect it with execute_bash instead.")

def write(path, text):
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        fail(f"Cannot write {path}: {e.strerror}")

def undo_dir(path):
    return os.path.join(UNDO, hashlib.sha256(path.encode()).hexdigest()[:32])

def push_undo(path, text):
    d = undo_dir(path)
    try:
        os.makedirs(d, exist_ok=True)
        n = len(os.listdir(d))
        with open(os.path.join(d, f"{n:06}"), "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        fail(f"No change was made: cannot keep the undo copy of {path} in {UNDO}: {e.strerror}")

def snippet(text, line, before=4, after=4):
    lines = text.split("\n")
    start = max(0, line - 1 - before)
    end = min(len(lines), line + after)
    return numbered("\n".join(lines[start:end]), start + 1)

req = json.load(sys.stdin)
cmd, path = req["command"], req["path"]
if not path.startswith("/"):
    fail(f"The path {path} is not an absolute path; it should start with '/' (for example /testbed/{path}).")
path = os.path.normpath(path)

if cmd == "view":
    if os.path.isdir(path):
        r = subprocess.run(["/usr/bin/find", path, "-maxdepth", "2", "-not", "-path", "*/.*"],
                           capture_output=True, text=True, errors="replace")
        listing = "\n".join(sorted(r.stdout.splitlines()))
        done(f"Files and directories up to 2 levels deep in {path}, hidden items excluded:\n{listing}")
    if not os.path.exists(path):
        fail(f"The path {path} does not exist.")
    text = read(path)
    vr = req.get("view_range")
    if vr is None:
        done(f"Here is the result of running `cat -n` on {path}:\n{numbered(text)}")
    lines = text.split("\n")
    start, end = vr
    if start < 1 or start > len(lines):
        fail(f"Invalid view_range {vr}: the first number should be between 1 and {len(lines)}.")
    if end != -1 and (end < start or end > len(lines)):
        fail(f"Invalid view_range {vr}: the second number should be -1 or between {start} and {len(lines)}.")
    chosen = lines[start - 1:] if end == -1 else lines[start - 1:end]
    done(f"Here is the result of running `cat -n` on {path}:\n{numbered(chr(10).join(chosen), start)}")

if cmd == "create":
    if os.path.lexists(path):
        fail(f"File already exists at {path}. The create command cannot overwrite files; use str_replace to edit it.")
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        fail(f"Cannot create the directory {parent}: {e.strerror}")
    write(path, req["file_text"])
    done(f"File created successfully at: {path}")

if os.path.isdir(path):
    fail(f"{path} is a directory; {cmd} works on files.")
if not os.path.exists(path):
    fail(f"The path {path} does not exist.")

if cmd == "str_replace":
    text = read(path)
    old, new = req["old_str"], req.get("new_str") or ""
    count = text.count(old)
    if count == 0:
        fail(f"No replacement was performed: old_str did not appear verbatim in {path}.")
    if count > 1:
        pos, found = -1, []
        while True:
            pos = text.find(old, pos + 1)
            if pos < 0:
                break
            found.append(text.count("\n", 0, pos) + 1)
        fail(f"No replacement was performed: old_str appears {count} times in {path} (lines {found}). "
             "Include more surrounding lines so that it is unique.")
    push_undo(path, text)
    line = text.count("\n", 0, text.find(old)) + 1
    updated = text.replace(old, new, 1)
    write(path, updated)
    done(f"The file {path} has been edited. Here is a snippet of the result:\n"
         f"{snippet(updated, line, after=4 + new.count(chr(10)))}\n"
         "Review the changes and make sure they are as expected.")

if cmd == "insert":
    text = read(path)
    lines = text.split("\n")
    n = req["insert_line"]
    if n < 0 or n > len(lines):
        fail(f"Invalid insert_line {n}: it should be between 0 and {len(lines)} (the number of lines).")
    push_undo(path, text)
    new_lines = req["new_str"].split("\n")
    updated = "\n".join(lines[:n] + new_lines + lines[n:])
    write(path, updated)
    done(f"The file {path} has been edited. Here is a snippet of the result:\n"
         f"{snippet(updated, n + 1, after=3 + len(new_lines))}\n"
         "Review the changes and make sure they are as expected (correct indentation, no duplicate lines).")

if cmd == "undo_edit":
    d = undo_dir(path)
    saved = sorted(os.listdir(d)) if os.path.isdir(d) else []
    if not saved:
        fail(f"No edit to undo for {path}.")
    last = os.path.join(d, saved[-1])
    with open(last, encoding="utf-8") as f:
        previous = f.read()
    write(path, previous)
    os.remove(last)
    done(f"Last edit to {path} undone successfully. Here is the file now:\n{numbered(previous)}")
"""


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
        argv = [PYTHON, "-I", "-S", "-c", _HELPER, str(MAX_OUTPUT_CHARS), str(MAX_READ_BYTES)]
        code, output = sandbox.exec(argv, stdin=payload, timeout=60)
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
