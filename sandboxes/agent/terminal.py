"""The agent's trajectory as readable terminal text, printed as it happens
(used by `manage.py create`).

Assistant text and command output are written as they stream; everything
else is one short line per event. Colours come from the caller's palette
(Django's `color_style()`), so `--no-color` and pipes get plain text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sandboxes.agent.events import (
    AgentEvent,
    AssistantMessage,
    ErrorReport,
    Finished,
    OutcomeReason,
    StepStarted,
    TextDelta,
    ToolCall,
    ToolOutputDelta,
    ToolResult,
    UsageReport,
)
from sandboxes.agent.tool_schemas import EXECUTE_BASH, STR_REPLACE_EDITOR, SUBMIT

Write = Callable[[str], None]
Paint = Callable[[str], str]

MAX_COMMAND_LINES = 25  # a long heredoc is shown by its head
MAX_RESULT_LINES = 30  # observations that did not stream (editor, errors)
# Ends at a limit the run was given: a warning, not a failure.
LIMIT_REASONS = frozenset({OutcomeReason.STEP_LIMIT, OutcomeReason.TOKEN_LIMIT, OutcomeReason.TIME_LIMIT})


def _plain(text: str) -> str:
    return text


class TrajectoryPrinter:
    """An `Emit` callback: `run_agent(..., emit=TrajectoryPrinter(write, style))`."""

    def __init__(self, write: Write, style: Any = None) -> None:
        self._write = write
        self._heading: Paint = getattr(style, "MIGRATE_HEADING", _plain)
        self._command: Paint = getattr(style, "SQL_KEYWORD", _plain)
        self._dim: Paint = getattr(style, "HTTP_NOT_MODIFIED", _plain)
        self._ok: Paint = getattr(style, "SUCCESS", _plain)
        self._warn: Paint = getattr(style, "WARNING", _plain)
        self._error: Paint = getattr(style, "ERROR", _plain)
        self._at_line_start = True
        self._streamed_calls: set[str] = set()
        self._text_streamed = False
        self._reasoning_streamed = False

    def __call__(self, event: AgentEvent) -> None:
        match event.payload:
            case StepStarted() as started:
                self._on_step_started(started)
            case TextDelta() as delta if event.kind == "reasoning_delta":
                self._on_reasoning_delta(delta)
            case TextDelta() as delta:
                self._on_assistant_delta(delta)
            case AssistantMessage() as message:
                self._on_assistant_message(message)
            case ToolCall() as call:
                self._on_tool_call(call)
            case ToolOutputDelta() as output:
                self._on_tool_output_delta(output)
            case ToolResult() as result:
                self._on_tool_result(result)
            case UsageReport() as usage:
                self._on_usage(usage)
            case ErrorReport() as error:
                self._on_error(error)
            case Finished() as finished:
                self._on_finished(finished)

    # --- events -----------------------------------------------------------

    def _on_step_started(self, payload: StepStarted) -> None:
        self._text_streamed = self._reasoning_streamed = False
        self._line("")
        self._line(self._heading(f"── step {payload.step} · {payload.remaining} left ──"))

    def _on_reasoning_delta(self, payload: TextDelta) -> None:
        if not self._reasoning_streamed:
            self._reasoning_streamed = True
            self._stream(self._dim("(thinking) "))
        self._stream(self._dim(payload.text))

    def _on_assistant_delta(self, payload: TextDelta) -> None:
        if not self._text_streamed:
            self._text_streamed = True
            self._end_line()
        self._stream(payload.text)

    def _on_assistant_message(self, payload: AssistantMessage) -> None:
        content = (payload.content or "").strip()
        if content and not self._text_streamed:
            self._line(content)
        self._end_line()

    def _on_tool_call(self, payload: ToolCall) -> None:
        self._end_line()
        self._line(self._command(describe_call(payload.name, payload.arguments)))

    def _on_tool_output_delta(self, payload: ToolOutputDelta) -> None:
        self._streamed_calls.add(payload.call_id)
        self._stream(payload.text)

    def _on_tool_result(self, payload: ToolResult) -> None:
        self._end_line()
        streamed = payload.call_id in self._streamed_calls
        if payload.name == SUBMIT:
            return
        if not streamed and payload.output.strip():
            self._line(_head(payload.output, MAX_RESULT_LINES))
        paint = self._error if payload.is_error else self._dim
        self._line(paint(f"[{_status(payload)} · {payload.duration:.2f} s]"))

    def _on_usage(self, payload: UsageReport) -> None:
        self._end_line()
        estimated = " (estimated)" if payload.estimated else ""
        self._line(self._dim(f"tokens: {payload.prompt_tokens} in · {payload.completion_tokens} out{estimated}"))

    def _on_error(self, payload: ErrorReport) -> None:
        self._end_line()
        self._line(self._error(f"error: {payload.message}"))

    def _on_finished(self, payload: Finished) -> None:
        self._end_line()
        reason = payload.reason
        paint = (
            self._ok if reason is OutcomeReason.SUBMITTED else self._warn if reason in LIMIT_REASONS else self._error
        )
        self._line("")
        self._line(paint(f"finished: {reason} after {payload.steps} step(s) — {payload.message}"))

    # --- writing ------------------------------------------------------------

    def _stream(self, text: str) -> None:
        if text:
            self._write(text)
            self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        self._write(text + "\n")
        self._at_line_start = True

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._line("")


def describe_call(name: str, arguments: dict[str, Any]) -> str:
    """One readable line (or a few) for a tool call."""
    if name == EXECUTE_BASH and isinstance(arguments.get("command"), str):
        return "$ " + _head(arguments["command"], MAX_COMMAND_LINES).replace("\n", "\n  ")
    if name == STR_REPLACE_EDITOR:
        command, path = arguments.get("command", "?"), arguments.get("path", "?")
        detail = ""
        if command == "create" and isinstance(arguments.get("file_text"), str):
            text = arguments["file_text"]
            detail = f" ({text.count(chr(10)) + 1} lines, {len(text.encode('utf-8', 'replace'))} bytes)"
        elif command == "view" and arguments.get("view_range"):
            detail = f" lines {arguments['view_range']}"
        return f"✎ editor {command} {path}{detail}"
    if name == SUBMIT:
        summary = str(arguments.get("summary") or arguments.get("message") or "").strip()
        return "✓ submit" + (f": {summary}" if summary else "")
    return f"→ {name} {json.dumps(arguments, ensure_ascii=False)[:300]}"


def _status(payload: ToolResult) -> str:
    if payload.name != EXECUTE_BASH:
        return "error" if payload.is_error else "ok"
    code = payload.exit_code
    return "no exit code" if code is None else f"exit {code}"


def _head(text: str, max_lines: int) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join(lines[:max_lines]) + f"\n… {len(lines) - max_lines} more lines"
