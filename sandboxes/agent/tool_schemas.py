"""The three tools the model may call, as OpenAI function schemas.

Descriptions are written for the model: what each tool does, what persists,
and the rules that make calls succeed the first time.
"""

from __future__ import annotations

from typing import Any

from sandboxes.editor import COMMANDS

EXECUTE_BASH = "execute_bash"
STR_REPLACE_EDITOR = "str_replace_editor"
SUBMIT = "submit"

EDITOR_COMMANDS = COMMANDS  # what the editor implements is what the model is offered

EXECUTE_BASH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": EXECUTE_BASH,
        "description": (
            "Run a bash command in the sandbox and return what it printed (stdout and stderr) "
            "and its exit code. The shell is persistent: the working directory, exported "
            "variables and background jobs carry over to the next call. Long-running commands "
            "are stopped at a time limit; very long output is shortened for you and the full "
            "text is saved to a file whose path is given."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The bash command to run, e.g. `python3 make_chart.py` or `ls -la /testbed/input`.",
                }
            },
            "required": ["command"],
        },
    },
}

STR_REPLACE_EDITOR_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": STR_REPLACE_EDITOR,
        "description": (
            "View, create and edit files in the sandbox.\n"
            "* `view`: a file is shown with line numbers (optionally only `view_range`); "
            "a directory is listed two levels deep.\n"
            "* `create`: write `file_text` to `path` (parent directories are made).\n"
            "* `str_replace`: replace `old_str` with `new_str`; `old_str` must match exactly "
            "one place in the file, whitespace included, so include enough context.\n"
            "* `insert`: insert `new_str` after line `insert_line` (0 inserts at the top).\n"
            "* `undo_edit`: revert the last edit of `path`."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": list(EDITOR_COMMANDS), "description": "What to do."},
                "path": {"type": "string", "description": "Absolute path, e.g. `/testbed/make_poster.py`."},
                "file_text": {"type": "string", "description": "Content of the new file (`create`)."},
                "old_str": {"type": "string", "description": "Exact text to replace (`str_replace`)."},
                "new_str": {
                    "type": "string",
                    "description": "Replacement (`str_replace`) or text to insert (`insert`).",
                },
                "insert_line": {"type": "integer", "description": "Line after which to insert (`insert`)."},
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "[first, last] lines to show (`view` of a file); last may be -1 for the end.",
                },
            },
            "required": ["command", "path"],
        },
    },
}

SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SUBMIT,
        "description": (
            "Finish the task. Call this once the deliverables are in /testbed/output. Nothing runs after it."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": "A short note for the person: what you made and the files in /testbed/output.",
                }
            },
            "required": [],
        },
    },
}

TOOL_SCHEMAS: list[dict[str, Any]] = [EXECUTE_BASH_SCHEMA, STR_REPLACE_EDITOR_SCHEMA, SUBMIT_SCHEMA]
