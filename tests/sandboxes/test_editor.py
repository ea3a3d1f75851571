"""str_replace_editor: every command and its errors, as the model reads them."""

from __future__ import annotations

import pytest

from sandboxes.editor import str_replace_editor as edit

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def path(shared_sandbox, request):
    target = f"/testbed/editor/{request.node.name}.py"
    shared_sandbox.run_command(f"mkdir -p /testbed/editor && rm -f {target}", timeout=30)
    return target


def test_create_writes_a_file_and_refuses_to_overwrite_it(shared_sandbox, path):
    assert not edit(shared_sandbox, command="create", path=path, file_text="a = 1\n").is_error
    again = edit(shared_sandbox, command="create", path=path, file_text="b = 2\n")
    assert again.is_error
    assert "already exists" in again.output
    assert shared_sandbox.run_command(f"cat {path}", timeout=30).output == "a = 1\n"


def test_view_numbers_lines_and_honours_view_range(shared_sandbox, path):
    edit(shared_sandbox, command="create", path=path, file_text="one\ntwo\nthree\nfour")
    whole = edit(shared_sandbox, command="view", path=path)
    assert "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour" in whole.output
    part = edit(shared_sandbox, command="view", path=path, view_range=[2, 3])
    assert part.output.splitlines()[1:] == ["     2\ttwo", "     3\tthree"]
    to_end = edit(shared_sandbox, command="view", path=path, view_range=[3, -1])
    assert to_end.output.splitlines()[1:] == ["     3\tthree", "     4\tfour"]
    bad = edit(shared_sandbox, command="view", path=path, view_range=[9, 10])
    assert bad.is_error
    assert "between 1 and 4" in bad.output


def test_view_lists_a_directory_two_levels_deep_without_hidden_files(shared_sandbox):
    shared_sandbox.run_command(
        "mkdir -p /testbed/tree/a/b/c && touch /testbed/tree/a/b/c/deep /testbed/tree/.hidden /testbed/tree/a/top",
        timeout=30,
    )
    listing = edit(shared_sandbox, command="view", path="/testbed/tree").output
    assert listing.splitlines()[1:] == ["/testbed/tree", "/testbed/tree/a", "/testbed/tree/a/b", "/testbed/tree/a/top"]
    assert ".hidden" not in listing


def test_str_replace_needs_exactly_one_match_and_says_how_many(shared_sandbox, path):
    edit(shared_sandbox, command="create", path=path, file_text="x = 1\ny = 2\nx = 1\n")
    twice = edit(shared_sandbox, command="str_replace", path=path, old_str="x = 1", new_str="x = 9")
    assert twice.is_error
    assert "2 times" in twice.output
    assert "[1, 3]" in twice.output
    missing = edit(shared_sandbox, command="str_replace", path=path, old_str="z = 0", new_str="")
    assert missing.is_error
    assert "did not appear" in missing.output
    once = edit(shared_sandbox, command="str_replace", path=path, old_str="y = 2", new_str="y = 3")
    assert not once.is_error
    assert "     2\ty = 3" in once.output
    assert shared_sandbox.run_command(f"cat {path}", timeout=30).output == "x = 1\ny = 3\nx = 1\n"


def test_insert_adds_text_after_the_given_line(shared_sandbox, path):
    edit(shared_sandbox, command="create", path=path, file_text="first\nthird")
    result = edit(shared_sandbox, command="insert", path=path, insert_line=1, new_str="second")
    assert not result.is_error
    assert shared_sandbox.run_command(f"cat {path}", timeout=30).output == "first\nsecond\nthird"
    bad = edit(shared_sandbox, command="insert", path=path, insert_line=99, new_str="x")
    assert bad.is_error
    assert "between 0 and 3" in bad.output


def test_undo_edit_restores_each_previous_version_in_turn(shared_sandbox, path):
    edit(shared_sandbox, command="create", path=path, file_text="v1")
    edit(shared_sandbox, command="str_replace", path=path, old_str="v1", new_str="v2")
    edit(shared_sandbox, command="str_replace", path=path, old_str="v2", new_str="v3")
    assert not edit(shared_sandbox, command="undo_edit", path=path).is_error
    assert shared_sandbox.run_command(f"cat {path}", timeout=30).output == "v2"
    edit(shared_sandbox, command="undo_edit", path=path)
    assert shared_sandbox.run_command(f"cat {path}", timeout=30).output == "v1"
    nothing = edit(shared_sandbox, command="undo_edit", path=path)
    assert nothing.is_error
    assert "No edit to undo" in nothing.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "view", "path": "relative.txt"}, "not an absolute path"),
        ({"command": "view", "path": "/testbed/nope.txt"}, "does not exist"),
        ({"command": "delete", "path": "/testbed/x"}, "Unknown command"),
        ({"command": "create", "path": "/testbed/x"}, "file_text"),
        ({"command": "str_replace", "path": "/testbed/x"}, "old_str"),
        ({"command": "insert", "path": "/testbed/x", "new_str": "a"}, "insert_line"),
        ({"command": "view", "path": "/testbed", "view_range": "1-2"}, "view_range"),
        ({"command": "str_replace", "path": "/testbed", "old_str": "a"}, "is a directory"),
        ({"command": "view", "path": "/bin/bash"}, "not UTF-8"),
        ({"command": "create", "path": "/etc/forbidden.txt", "file_text": "x"}, "Permission denied"),
    ],
)
def test_bad_requests_come_back_as_readable_errors(shared_sandbox, arguments, message):
    result = edit(shared_sandbox, **arguments)
    assert result.is_error
    assert message in result.output


def test_modules_the_agent_writes_cannot_take_the_editors_place(shared_sandbox, path):
    # Modules the helper imports, written where the agent works: each prints without end.
    forever = b"while True:\n    print('x' * 1000)\n"
    modules = {f"{name}.py": forever for name in ("json", "hashlib", "os", "subprocess", "stat")}
    shared_sandbox.write_files(modules, dest="/testbed")
    shared_sandbox.write_files(modules, dest="/testbed/editor")
    hijacked = shared_sandbox.run_command(
        "cd /testbed && python3 -c 'import json' 2>/dev/null | head -c 5; cd /", timeout=30
    )
    assert hijacked.output == "xxxxx"  # a python3 started there would run them
    try:
        created = edit(shared_sandbox, command="create", path=path, file_text="safe = True\n")
        assert (created.is_error, created.output) == (False, f"File created successfully at: {path}")
        viewed = edit(shared_sandbox, command="view", path=path)
        assert not viewed.is_error
        assert viewed.output.endswith("     1\tsafe = True\n     2\t")
    finally:
        shared_sandbox.run_command("rm -f /testbed/*.py /testbed/editor/*.py", timeout=30)


def test_files_that_never_end_come_back_as_readable_errors(shared_sandbox):
    shared_sandbox.run_command("rm -f /testbed/pipe && mkfifo /testbed/pipe", timeout=30)
    for special in ("/testbed/pipe", "/dev/zero"):
        result = edit(shared_sandbox, command="view", path=special)
        assert result.is_error
        assert "not a regular file" in result.output
    after = shared_sandbox.run_command("echo ok", timeout=30)
    assert after.output == "ok\n"
