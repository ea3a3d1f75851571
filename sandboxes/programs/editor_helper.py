"""The edits of `str_replace_editor`, made inside the sandbox (sandboxes/editor.py sends this program).

Run as `python3 -I -S -c <this text> OUTPUT_LIMIT MAX_READ_BYTES UNDO_DIR` with one JSON request on
stdin ({"command", "path", and the command's own fields}, already checked by the worker). It prints
one JSON reply, {"output": ..., "is_error": ...}, and exits 0: a request it cannot do is a reply the
model reads, never a traceback. The undo history (one numbered copy per edit, per file) is kept under
UNDO_DIR. Standard library only, for the sandbox image's Python (3.11).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys

# Importing typing costs milliseconds in the sandbox on every edit: its names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


class Config:
    """Set from the command line by main()."""

    output_chars: int  # a longer reply is clipped
    read_bytes: int  # a larger file is refused
    undo_dir: str


def fail(message: str) -> NoReturn:
    print(json.dumps({"output": message, "is_error": True}))
    sys.exit(0)


def done(message: str) -> NoReturn:
    if len(message) > Config.output_chars:
        message = message[: Config.output_chars] + "\n<response clipped: view a smaller range with view_range>"
    print(json.dumps({"output": message, "is_error": False}))
    sys.exit(0)


def numbered(text: str, first: int = 1) -> str:
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), first))


def read(path: str) -> str:
    """The text of a regular UTF-8 file of bounded size (a FIFO would block, /dev/zero never ends)."""
    try:
        info = os.stat(path)
    except OSError as e:
        fail(f"Cannot read {path}: {e.strerror}")
    if stat.S_ISDIR(info.st_mode):
        fail(f"{path} is a directory.")
    if not stat.S_ISREG(info.st_mode):
        fail(f"{path} is not a regular file (a device, FIFO or socket); inspect it with execute_bash instead.")
    if info.st_size > Config.read_bytes:
        fail(
            f"{path} is {info.st_size} bytes, too large for the editor; inspect it with execute_bash "
            "(for example sed -n '1,100p', head, grep)."
        )
    try:
        with open(path, "rb") as f:
            data = f.read(Config.read_bytes + 1)
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


def write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        fail(f"Cannot write {path}: {e.strerror}")


def undo_dir(path: str) -> str:
    return os.path.join(Config.undo_dir, hashlib.sha256(path.encode()).hexdigest()[:32])


def push_undo(path: str, text: str) -> None:
    d = undo_dir(path)
    try:
        os.makedirs(d, exist_ok=True)
        n = len(os.listdir(d))
        with open(os.path.join(d, f"{n:06}"), "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        fail(f"No change was made: cannot keep the undo copy of {path} in {Config.undo_dir}: {e.strerror}")


def snippet(text: str, line: int, before: int = 4, after: int = 4) -> str:
    lines = text.split("\n")
    start = max(0, line - 1 - before)
    end = min(len(lines), line + after)
    return numbered("\n".join(lines[start:end]), start + 1)


def view(path: str, view_range: list[int] | None) -> NoReturn:
    if os.path.isdir(path):
        r = subprocess.run(
            ["/usr/bin/find", path, "-maxdepth", "2", "-not", "-path", "*/.*"],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        listing = "\n".join(sorted(r.stdout.splitlines()))
        done(f"Files and directories up to 2 levels deep in {path}, hidden items excluded:\n{listing}")
    if not os.path.exists(path):
        fail(f"The path {path} does not exist.")
    text = read(path)
    if view_range is None:
        done(f"Here is the result of running `cat -n` on {path}:\n{numbered(text)}")
    lines = text.split("\n")
    start, end = view_range
    if start < 1 or start > len(lines):
        fail(f"Invalid view_range {view_range}: the first number should be between 1 and {len(lines)}.")
    if end != -1 and (end < start or end > len(lines)):
        fail(f"Invalid view_range {view_range}: the second number should be -1 or between {start} and {len(lines)}.")
    chosen = lines[start - 1 :] if end == -1 else lines[start - 1 : end]
    done(f"Here is the result of running `cat -n` on {path}:\n{numbered(chr(10).join(chosen), start)}")


def create(path: str, file_text: str) -> NoReturn:
    if os.path.lexists(path):
        fail(f"File already exists at {path}. The create command cannot overwrite files; use str_replace to edit it.")
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        fail(f"Cannot create the directory {parent}: {e.strerror}")
    write(path, file_text)
    done(f"File created successfully at: {path}")


def str_replace(path: str, old: str, new: str) -> NoReturn:
    text = read(path)
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
        fail(
            f"No replacement was performed: old_str appears {count} times in {path} (lines {found}). "
            "Include more surrounding lines so that it is unique."
        )
    push_undo(path, text)
    line = text.count("\n", 0, text.find(old)) + 1
    updated = text.replace(old, new, 1)
    write(path, updated)
    done(
        f"The file {path} has been edited. Here is a snippet of the result:\n"
        f"{snippet(updated, line, after=4 + new.count(chr(10)))}\n"
        "Review the changes and make sure they are as expected."
    )


def insert(path: str, n: int, new_str: str) -> NoReturn:
    text = read(path)
    lines = text.split("\n")
    if n < 0 or n > len(lines):
        fail(f"Invalid insert_line {n}: it should be between 0 and {len(lines)} (the number of lines).")
    push_undo(path, text)
    new_lines = new_str.split("\n")
    updated = "\n".join(lines[:n] + new_lines + lines[n:])
    write(path, updated)
    done(
        f"The file {path} has been edited. Here is a snippet of the result:\n"
        f"{snippet(updated, n + 1, after=3 + len(new_lines))}\n"
        "Review the changes and make sure they are as expected (correct indentation, no duplicate lines)."
    )


def undo_edit(path: str) -> NoReturn:
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


def handle(req: dict[str, Any]) -> NoReturn:
    cmd, path = req["command"], req["path"]
    if not path.startswith("/"):
        fail(f"The path {path} is not an absolute path; it should start with '/' (for example /testbed/{path}).")
    path = os.path.normpath(path)
    if cmd == "view":
        view(path, req.get("view_range"))
    if cmd == "create":
        create(path, req["file_text"])
    if os.path.isdir(path):
        fail(f"{path} is a directory; {cmd} works on files.")
    if not os.path.exists(path):
        fail(f"The path {path} does not exist.")
    if cmd == "str_replace":
        str_replace(path, req["old_str"], req.get("new_str") or "")
    if cmd == "insert":
        insert(path, req["insert_line"], req["new_str"])
    if cmd == "undo_edit":
        undo_edit(path)
    fail(f"Unknown command {cmd!r}.")


def main() -> None:
    # From / (the exec starts in /testbed): nothing resolves against a directory the agent writes in.
    os.chdir("/")
    Config.output_chars = int(sys.argv[1])
    Config.read_bytes = int(sys.argv[2])
    Config.undo_dir = sys.argv[3]
    handle(json.load(sys.stdin))


if __name__ == "__main__":
    main()
