"""A run's events as a person reads them in a terminal: the model's words as they
stream, each command it runs, a few lines of what the command printed, and the run's
status changes. The event kinds and fields are the run event contract's (the API
streams them as stored); a kind or field this client does not know is left out
rather than breaking the output. Every value from the payload reaches the terminal
through `printable` (a model writes it, and a model may write escape sequences).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from atelier_cli.answers import RunEvent
from atelier_cli.terminal import Style, human_seconds, human_size, one_line, printable, wants_colour

# How much of a command's output is shown: the first lines live, then a count of the rest.
OUTPUT_LINES = 12
OUTPUT_LINE_CHARS = 200
COMMAND_LINES = 8
MESSAGE_CHARS = 500
GUTTER = "  │ "


def _raw(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text(value: Any) -> str:
    """A payload's text as the terminal may show it."""
    return printable(_raw(value))


def _shown(value: Any) -> str:
    """A payload's value of any type (a number, usually) as the terminal may show it."""
    return printable(str(value))


def _number(value: Any) -> float:
    """A count or duration from the payload; 0 for anything else (JSON may even say Infinity)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


class _CallOutput:
    """One command's output shown so far: complete lines, the unfinished last one, how many were hidden."""

    def __init__(self) -> None:
        self.partial = ""
        self.shown = 0
        self.hidden = 0
        self.seen_live = False


class TrajectoryPrinter:
    def __init__(self, out: TextIO | None = None, *, colour: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.style = Style(colour=wants_colour(self.out) if colour is None else colour)
        self.mid_line = False  # the last thing written was streamed text without its newline
        self.streaming: str | None = None  # "assistant" or "reasoning" while deltas arrive
        self.streamed_steps: set[str] = set()
        self.calls: dict[str, _CallOutput] = {}

    # --- writing ---------------------------------------------------------

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def line(self, text: str = "") -> None:
        self.end_line()
        self._write(text + "\n")

    def end_line(self) -> None:
        """Finish streamed text so the next thing starts on a line of its own."""
        if self.mid_line:
            self._write("\n")
            self.mid_line = False
        self.streaming = None

    def _stream(self, kind: str, step: str, text: str, *styles: str) -> None:
        if not text:
            return
        if self.streaming != kind:
            self.end_line()
            if kind == "reasoning":
                self._write(self.style("(thinking) ", "dim"))
                self.mid_line = True
            self.streaming = kind
        self.streamed_steps.add(step)
        self._write(self.style(text, *styles))
        self.mid_line = not text.endswith("\n")

    # --- events ----------------------------------------------------------

    def show_event(self, event: RunEvent) -> None:
        self.show(event.kind, event.payload)

    def show(self, kind: str, payload: dict[str, Any]) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None and isinstance(payload, dict):
            handler(payload)

    def _on_status(self, payload: dict[str, Any]) -> None:
        status = _text(payload.get("status"))
        reason = _text(payload.get("reason"))
        colour = "green" if status == "succeeded" else ("red" if payload.get("final") else "cyan")
        text = self.style(f"● {status}", colour, "bold") + (f" — {reason}" if reason else "")
        self.line(text)
        usage = payload.get("usage")
        if isinstance(usage, dict):
            tokens = int(_number(usage.get("prompt_tokens")) + _number(usage.get("completion_tokens")))
            self.line(
                self.style(
                    f"  {int(_number(usage.get('steps')))} steps · {tokens:,} tokens · "
                    f"{human_seconds(_number(usage.get('sandbox_seconds')))} in the sandbox",
                    "dim",
                )
            )

    def _on_step_started(self, payload: dict[str, Any]) -> None:
        step, remaining = _shown(payload.get("step")), _shown(payload.get("remaining"))
        self.line(self.style(f"── step {step} ({remaining} left)", "dim"))

    def _on_assistant_delta(self, payload: dict[str, Any]) -> None:
        self._stream("assistant", _shown(payload.get("step")), _text(payload.get("text")))

    def _on_reasoning_delta(self, payload: dict[str, Any]) -> None:
        self._stream("reasoning", _shown(payload.get("step")), _text(payload.get("text")), "dim")

    def _on_assistant_message(self, payload: dict[str, Any]) -> None:
        if _shown(payload.get("step")) in self.streamed_steps:
            self.end_line()  # its words were already shown as they streamed
            return
        reasoning, content = _text(payload.get("reasoning")), _text(payload.get("content"))
        if reasoning.strip():
            self.line(self.style("(thinking) " + reasoning.strip(), "dim"))
        if content.strip():
            self.line(content.strip())

    def _on_tool_call(self, payload: dict[str, Any]) -> None:
        self.calls[_text(payload.get("call_id"))] = _CallOutput()
        self.line(self.style(self._describe_call(_text(payload.get("name")), payload.get("arguments")), "yellow"))

    def _describe_call(self, name: str, arguments: Any) -> str:
        if not isinstance(arguments, dict):  # cut to fit: the start of its JSON
            return f"→ {name} {one_line(_text(arguments), OUTPUT_LINE_CHARS)}"
        if "raw" in arguments and len(arguments) == 1:
            return f"→ {name} (arguments that are not JSON) {one_line(_text(arguments['raw']), OUTPUT_LINE_CHARS)}"
        if name == "execute_bash" and isinstance(arguments.get("command"), str):
            lines = _text(arguments["command"]).strip().splitlines() or [""]
            shown = "\n  ".join(line[:OUTPUT_LINE_CHARS] for line in lines[:COMMAND_LINES])
            more = f"\n  … {len(lines) - COMMAND_LINES} more lines" if len(lines) > COMMAND_LINES else ""
            return f"$ {shown}{more}"
        if name == "str_replace_editor":
            action, path = _text(arguments.get("command")), _text(arguments.get("path"))
            extra = ""
            if isinstance(arguments.get("file_text"), str):
                extra = f" ({len(arguments['file_text'].splitlines())} lines)"
            return f"✎ {action} {path}{extra}"
        if name == "submit":
            return "→ submit"
        return f"→ {name} {one_line(json.dumps(arguments, ensure_ascii=False), OUTPUT_LINE_CHARS)}"

    def _output_lines(self, call: _CallOutput, lines: list[str]) -> None:
        for raw in lines:
            text = printable(raw.rsplit("\r", 1)[-1])  # a progress bar's last state
            if call.shown < OUTPUT_LINES:
                call.shown += 1
                self.line(self.style(GUTTER, "dim") + text[:OUTPUT_LINE_CHARS])
            else:
                call.hidden += 1

    def _on_tool_output_delta(self, payload: dict[str, Any]) -> None:
        call = self.calls.setdefault(_text(payload.get("call_id")), _CallOutput())
        call.seen_live = True
        *complete, call.partial = (call.partial + _raw(payload.get("text"))).split("\n")
        self._output_lines(call, complete)

    def _on_tool_result(self, payload: dict[str, Any]) -> None:
        call = self.calls.pop(_text(payload.get("call_id")), _CallOutput())
        if call.seen_live:
            if call.partial:
                self._output_lines(call, [call.partial])
        else:
            output = _raw(payload.get("output")).rstrip("\n")
            self._output_lines(call, output.split("\n") if output else [])
        if call.hidden:
            self.line(self.style(f"{GUTTER}… {call.hidden} more lines", "dim"))
        omitted = payload.get("stream_omitted_bytes")
        if isinstance(omitted, int) and omitted:
            self.line(self.style(f"{GUTTER}… {human_size(omitted)} of output not kept", "dim"))
        exit_code = payload.get("exit_code")
        outcome = "error" if payload.get("is_error") else "ok"
        if isinstance(exit_code, int):
            outcome = f"exit {exit_code}" if not payload.get("is_error") else f"error, exit {exit_code}"
        duration = payload.get("duration")
        took = f" · {human_seconds(_number(duration))}" if isinstance(duration, int | float) else ""
        self.line(self.style(f"  └ {outcome}{took}", "red" if payload.get("is_error") else "dim"))

    def _on_person_message(self, payload: dict[str, Any]) -> None:
        """What someone told the agent (`atelier say`), as it read it before this step."""
        author = _text(payload.get("author")) or "someone"
        self.line(self.style(f"✉ {author}: ", "blue", "bold") + one_line(_text(payload.get("text")), MESSAGE_CHARS))

    def _on_error(self, payload: dict[str, Any]) -> None:
        self.line(self.style(f"⚠ {_text(payload.get('message'))}", "red"))

    def _on_finished(self, payload: dict[str, Any]) -> None:
        message = _text(payload.get("message")).strip()
        reason = _shown(payload.get("reason"))
        self.line(self.style(f"Agent finished ({reason})", "bold") + (f": {message}" if message else ""))

    def _on_artifacts(self, payload: dict[str, Any]) -> None:
        items = payload.get("items")
        if isinstance(items, list):
            self.line(self.style(f"Files made: {len(items)}", "bold"))
            for item in items:
                if isinstance(item, dict):
                    about = f"{_text(item.get('kind'))}, {human_size(int(_number(item.get('size'))))}"
                    self.line(f"  {_text(item.get('path'))}  {self.style(about, 'dim')}")
        else:
            self.line(self.style("Files made: too many to list here; see the run's page.", "bold"))
        rejected = payload.get("rejected")
        if isinstance(rejected, list):
            for item in rejected:
                if isinstance(item, dict):
                    self.line(self.style(f"  ✗ {_text(item.get('name'))}: {_text(item.get('reason'))}", "red"))
        note = _text(payload.get("note"))
        if note:
            self.line(self.style(f"  {note}", "dim"))
