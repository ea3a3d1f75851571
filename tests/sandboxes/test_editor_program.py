"""The editor's program on this machine's Python, against a temporary directory: what the model reads.

The same text the worker sends into the sandbox, run the way it runs there (sandboxes/editor.py's
`helper_argv`, with this machine's Python), so every edit and refusal is checked without a sandbox;
the docker-marked tests in test_editor.py check it inside gVisor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxes.editor import MAX_OUTPUT_CHARS, MAX_READ_BYTES, helper_argv


@pytest.fixture
def edit(tmp_path: Path) -> Any:
    undo = tmp_path / "undo"

    def run(*, limit: int = MAX_OUTPUT_CHARS, max_read: int = MAX_READ_BYTES, undo_dir: Path = undo, **request: Any):
        argv = helper_argv(sys.executable, output_chars=limit, read_bytes=max_read, undo_dir=str(undo_dir))
        proc = subprocess.run(argv, input=json.dumps(request), capture_output=True, text=True, timeout=30, check=False)
        assert (proc.returncode, proc.stderr) == (0, "")
        reply = json.loads(proc.stdout)
        return reply["output"], reply["is_error"]

    return run


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "work" / "notes.py")


def test_create_makes_the_directories_and_never_overwrites(edit, path):
    assert edit(command="create", path=path, file_text="a = 1\n") == (f"File created successfully at: {path}", False)
    output, is_error = edit(command="create", path=path, file_text="b = 2\n")
    assert is_error
    assert output.startswith(f"File already exists at {path}.")
    assert Path(path).read_text() == "a = 1\n"


def test_view_numbers_lines_and_honours_view_range(edit, path):
    edit(command="create", path=path, file_text="one\ntwo\nthree\nfour")
    whole, _ = edit(command="view", path=path)
    assert (
        whole
        == f"Here is the result of running `cat -n` on {path}:\n     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    )
    part, _ = edit(command="view", path=path, view_range=[2, 3])
    assert part.splitlines()[1:] == ["     2\ttwo", "     3\tthree"]
    to_end, _ = edit(command="view", path=path, view_range=[3, -1])
    assert to_end.splitlines()[1:] == ["     3\tthree", "     4\tfour"]
    assert edit(command="view", path=path, view_range=[9, 10]) == (
        "Invalid view_range [9, 10]: the first number should be between 1 and 4.",
        True,
    )
    assert edit(command="view", path=path, view_range=[3, 2]) == (
        "Invalid view_range [3, 2]: the second number should be -1 or between 3 and 4.",
        True,
    )


def test_view_lists_a_directory_two_levels_deep_without_hidden_files(edit, tmp_path):
    tree = tmp_path / "tree"
    (tree / "a" / "b" / "c").mkdir(parents=True)
    for name in ("a/b/c/deep", ".hidden", "a/top"):
        (tree / name).touch()
    listing, is_error = edit(command="view", path=f"{tree}/")
    assert not is_error
    assert listing.splitlines() == [
        f"Files and directories up to 2 levels deep in {tree}, hidden items excluded:",
        f"{tree}",
        f"{tree}/a",
        f"{tree}/a/b",
        f"{tree}/a/top",
    ]


def test_a_long_reply_is_clipped_with_a_hint(edit, path):
    edit(command="create", path=path, file_text="x" * 500)
    output, is_error = edit(command="view", path=path, limit=100)
    assert not is_error
    assert output == output[:100] + "\n<response clipped: view a smaller range with view_range>"


def test_str_replace_needs_exactly_one_match_and_shows_the_result(edit, path):
    edit(command="create", path=path, file_text="x = 1\ny = 2\nx = 1\n")
    twice = (
        f"No replacement was performed: old_str appears 2 times in {path} (lines [1, 3]). "
        "Include more surrounding lines so that it is unique."
    )
    assert edit(command="str_replace", path=path, old_str="x = 1", new_str="x = 9") == (twice, True)
    assert edit(command="str_replace", path=path, old_str="z = 0") == (
        f"No replacement was performed: old_str did not appear verbatim in {path}.",
        True,
    )
    output, is_error = edit(command="str_replace", path=path, old_str="y = 2", new_str="y = 3")
    assert not is_error
    assert output == (
        f"The file {path} has been edited. Here is a snippet of the result:\n"
        "     1\tx = 1\n     2\ty = 3\n     3\tx = 1\n     4\t\n"
        "Review the changes and make sure they are as expected."
    )
    assert Path(path).read_text() == "x = 1\ny = 3\nx = 1\n"


def test_str_replace_without_new_str_deletes(edit, path):
    edit(command="create", path=path, file_text="keep\ndrop me\n")
    edit(command="str_replace", path=path, old_str="drop me\n", new_str=None)
    assert Path(path).read_text() == "keep\n"


def test_insert_adds_lines_after_the_given_one(edit, path):
    edit(command="create", path=path, file_text="first\nfourth")
    output, is_error = edit(command="insert", path=path, insert_line=1, new_str="second\nthird")
    assert not is_error
    assert "     2\tsecond\n     3\tthird\n     4\tfourth" in output
    assert Path(path).read_text() == "first\nsecond\nthird\nfourth"
    edit(command="insert", path=path, insert_line=0, new_str="zeroth")
    assert Path(path).read_text().startswith("zeroth\nfirst\n")
    assert edit(command="insert", path=path, insert_line=99, new_str="x") == (
        "Invalid insert_line 99: it should be between 0 and 5 (the number of lines).",
        True,
    )


def test_undo_edit_restores_each_previous_version_in_turn(edit, path, tmp_path):
    edit(command="create", path=path, file_text="v1")
    edit(command="str_replace", path=path, old_str="v1", new_str="v2")
    edit(command="insert", path=path, insert_line=1, new_str="v3")
    output, is_error = edit(command="undo_edit", path=path)
    assert (output, is_error) == (f"Last edit to {path} undone successfully. Here is the file now:\n     1\tv2", False)
    assert Path(path).read_text() == "v2"
    edit(command="undo_edit", path=path)
    assert Path(path).read_text() == "v1"
    assert edit(command="undo_edit", path=path) == (f"No edit to undo for {path}.", True)
    # The history is the undo directory's, by path: another undo directory knows no edits.
    assert edit(command="undo_edit", path=path, undo_dir=tmp_path / "other") == (f"No edit to undo for {path}.", True)


def test_an_edit_whose_undo_copy_cannot_be_kept_changes_nothing(edit, path, tmp_path):
    edit(command="create", path=path, file_text="before")
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    output, is_error = edit(command="str_replace", path=path, old_str="before", new_str="after", undo_dir=blocked)
    assert is_error
    assert output.startswith(f"No change was made: cannot keep the undo copy of {path} in {blocked}: ")
    assert Path(path).read_text() == "before"


def test_paths_are_normalised_so_one_file_has_one_history(edit, path):
    edit(command="create", path=path, file_text="v1")
    edit(command="str_replace", path=path, old_str="v1", new_str="v2")
    roundabout = path.replace("/work/", "/work/./../work/")
    assert edit(command="undo_edit", path=roundabout)[1] is False
    assert Path(path).read_text() == "v1"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "view", "path": "relative.txt"}, "The path relative.txt is not an absolute path; it should"),
        ({"command": "view", "path": "{tmp}/nope.txt"}, "The path {tmp}/nope.txt does not exist."),
        ({"command": "undo_edit", "path": "{tmp}/nope.txt"}, "The path {tmp}/nope.txt does not exist."),
        ({"command": "str_replace", "path": "{tmp}", "old_str": "a"}, "{tmp} is a directory; str_replace works"),
        ({"command": "insert", "path": "{tmp}/", "insert_line": 0, "new_str": "a"}, "{tmp} is a directory; insert"),
        ({"command": "create", "path": "{tmp}/file.bin/x", "file_text": "x"}, "Cannot create the directory"),
        ({"command": "view", "path": "{tmp}/file.bin"}, "{tmp}/file.bin is not UTF-8 text (a binary file?)"),
        ({"command": "view", "path": "/dev/zero"}, "/dev/zero is not a regular file (a device, FIFO or socket)"),
        ({"command": "view", "path": "{tmp}/pipe"}, "{tmp}/pipe is not a regular file (a device, FIFO or socket)"),
        ({"command": "view", "path": "{tmp}/big.txt"}, "{tmp}/big.txt is 2000 bytes, too large for the editor"),
    ],
)
def test_requests_it_cannot_do_come_back_as_readable_errors(edit, tmp_path, arguments, message):
    (tmp_path / "file.bin").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "big.txt").write_text("x" * 2000)
    os.mkfifo(tmp_path / "pipe")
    here = {
        key: value.replace("{tmp}", str(tmp_path)) if isinstance(value, str) else value
        for key, value in arguments.items()
    }
    output, is_error = edit(max_read=1000, **here)
    assert is_error
    assert output.startswith(message.replace("{tmp}", str(tmp_path)))


def test_modules_in_the_directory_it_starts_from_cannot_take_its_place(edit, path, tmp_path, monkeypatch):
    # What a Python started there would import instead of the standard library's modules.
    for name in ("json", "hashlib", "os", "subprocess", "stat"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('hijacked')\n")
    monkeypatch.chdir(tmp_path)
    assert edit(command="create", path=path, file_text="safe = True\n") == (
        f"File created successfully at: {path}",
        False,
    )
