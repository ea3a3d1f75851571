"""Checking a tool call from the model and running it in the sandbox.

Whatever the model sends (an unknown tool, arguments that are not JSON,
missing or mistyped arguments), the result is an observation it can read and
act on; only a failing sandbox raises (SandboxFailure), since the run cannot
go on without it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sandboxes.agent.tool_schemas import EDITOR_COMMANDS, EXECUTE_BASH, STR_REPLACE_EDITOR, SUBMIT
from sandboxes.runtime import CommandResult, OutputCallback, Sandbox

TOOL_NAMES = (EXECUTE_BASH, STR_REPLACE_EDITOR, SUBMIT)


class EditorResultLike(Protocol):
    @property
    def output(self) -> str: ...

    @property
    def is_error(self) -> bool: ...


Editor = Callable[..., EditorResultLike]


class SandboxFailure(Exception):
    """The sandbox itself broke (not the command the model ran)."""


class InvalidCall(Exception):
    """The model's call cannot be run as sent; the message is for the model."""


@dataclass(frozen=True)
class ToolOutcome:
    output: str  # the observation shown to the model
    is_error: bool
    exit_code: int | None = None
    duration: float = 0.0
    submitted: bool = False
    summary: str = ""


def parse_arguments(raw: str) -> dict[str, Any]:
    """The call's arguments as a dict, or InvalidCall explaining why not."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InvalidCall(
            f"the arguments are not valid JSON ({error.msg} at position {error.pos}); "
            'send a JSON object such as {"command": "ls"}'
        ) from None
    if not isinstance(value, dict):
        raise InvalidCall("the arguments must be a JSON object")
    return value


class ToolRunner:
    def __init__(self, sandbox: Sandbox, *, editor: Editor | None = None) -> None:
        self._sandbox = sandbox
        self._editor = editor

    def run(self, name: str, arguments: dict[str, Any], *, timeout: float, on_output: OutputCallback) -> ToolOutcome:
        """Run one checked call. Raises InvalidCall or SandboxFailure."""
        if name == EXECUTE_BASH:
            return self._execute_bash(arguments, timeout=timeout, on_output=on_output)
        if name == STR_REPLACE_EDITOR:
            return self._edit(arguments)
        if name == SUBMIT:
            summary = arguments.get("summary", arguments.get("message", ""))
            return ToolOutcome(output="Submitted.", is_error=False, submitted=True, summary=str(summary or ""))
        raise InvalidCall(f"there is no tool named {name!r}; the tools are {', '.join(TOOL_NAMES)}")

    def _execute_bash(self, arguments: dict[str, Any], *, timeout: float, on_output: OutputCallback) -> ToolOutcome:
        command = _required_string(arguments, "command")
        started = time.monotonic()
        try:
            result = self._sandbox.run_command(command, timeout=timeout, on_output=on_output)
        except Exception as error:  # the engine, not the command, failed
            raise SandboxFailure(f"the sandbox stopped responding: {error}") from error
        if result.sandbox_died or (result.exit_code is None and not result.timed_out and self._sandbox_is_gone()):
            raise SandboxFailure(result.output.strip() or "The sandbox stopped; no command can run.")
        return ToolOutcome(
            output=describe_command_result(result, timeout),
            is_error=result.exit_code != 0,
            exit_code=result.exit_code,
            duration=result.duration if result.duration else time.monotonic() - started,
        )

    def _edit(self, arguments: dict[str, Any]) -> ToolOutcome:
        command = _required_string(arguments, "command")
        if command not in EDITOR_COMMANDS:
            raise InvalidCall(f"unknown editor command {command!r}; use one of {', '.join(EDITOR_COMMANDS)}")
        path = _required_string(arguments, "path")
        options: dict[str, Any] = {}
        if command == "create":
            options["file_text"] = _required_string(arguments, "file_text", allow_empty=True)
        elif command == "str_replace":
            options["old_str"] = _required_string(arguments, "old_str")
            options["new_str"] = _optional_string(arguments, "new_str")
        elif command == "insert":
            options["insert_line"] = _required_int(arguments, "insert_line")
            options["new_str"] = _required_string(arguments, "new_str", allow_empty=True)
        elif command == "view" and arguments.get("view_range") is not None:
            options["view_range"] = _view_range(arguments["view_range"])
        editor = self._editor or _default_editor()
        started = time.monotonic()
        try:
            result = editor(self._sandbox, command=command, path=path, **options)
        except Exception as error:
            raise SandboxFailure(f"the sandbox stopped responding: {error}") from error
        if result.is_error and self._sandbox_is_gone():
            raise SandboxFailure(f"The sandbox stopped; the editor could not run ({result.output.strip()[:300]}).")
        return ToolOutcome(output=result.output, is_error=result.is_error, duration=time.monotonic() - started)

    def _sandbox_is_gone(self) -> bool:
        """Asked only after a failure: a dead sandbox ends the run instead of
        feeding the model one "sandbox stopped" observation after another."""
        try:
            return not self._sandbox.is_running()
        except Exception:  # the engine cannot tell: let the command's own result speak
            return False


def describe_command_result(result: CommandResult, timeout: float) -> str:
    parts = [result.output if result.output.strip() else "(no output)"]
    if result.timed_out:
        parts.append(f"[The command was stopped after {timeout:g} s, the time limit per command.]")
    if result.shell_restarted:
        parts.append("[The shell was restarted: the working directory and exported variables were reset.]")
    if result.full_output_path and result.full_output_path not in result.output:
        parts.append(f"[Full output saved to {result.full_output_path}]")
    if result.exit_code not in (0, None):
        parts.append(f"[exit code {result.exit_code}]")
    return "\n".join(parts)


def _default_editor() -> Editor:
    from sandboxes.editor import str_replace_editor

    return str_replace_editor


def _required_string(arguments: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    if key not in arguments or arguments[key] is None:
        raise InvalidCall(f"the argument {key!r} is missing")
    value = arguments[key]
    if not isinstance(value, str):
        raise InvalidCall(f"the argument {key!r} must be a string")
    if not allow_empty and not value:
        raise InvalidCall(f"the argument {key!r} is empty")
    return value


def _optional_string(arguments: dict[str, Any], key: str) -> str:
    value = arguments.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidCall(f"the argument {key!r} must be a string")
    return value


def _required_int(arguments: dict[str, Any], key: str) -> int:
    value = arguments.get(key)
    if isinstance(value, bool) or value is None:
        raise InvalidCall(f"the argument {key!r} is missing or not an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidCall(f"the argument {key!r} must be an integer") from None


def _view_range(value: Any) -> list[int]:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    ):
        return [int(value[0]), int(value[1])]
    raise InvalidCall("view_range must be a list of two integers, e.g. [1, 40]")
