"""A run's events as the API streams them, recorded from the shape of a real run (a
short map-making trajectory); tests/cli/test_trajectory.py holds each to the event
contract, so these cannot drift from what the server sends."""

from __future__ import annotations

import json
from typing import Any

LONG_OUTPUT = "".join(f"row {n}\n" for n in range(1, 31))

RUN_EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("status", {"status": "queued", "reason": "", "final": False}),
    ("status", {"status": "starting", "reason": "", "final": False}),
    ("status", {"status": "running", "reason": "", "final": False}),
    ("step_started", {"step": 1, "remaining": 29}),
    ("reasoning_delta", {"step": 1, "text": "A map needs the data first."}),
    ("assistant_delta", {"step": 1, "text": "Let me look at "}),
    ("assistant_delta", {"step": 1, "text": "the input."}),
    (
        "assistant_message",
        {"step": 1, "content": "Let me look at the input.", "reasoning": "A map needs the data first."},
    ),
    (
        "tool_call",
        {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": "cat /testbed/input/places.csv"}},
    ),
    ("tool_output_delta", {"step": 1, "call_id": "c1", "text": LONG_OUTPUT[:40]}),
    ("tool_output_delta", {"step": 1, "call_id": "c1", "text": LONG_OUTPUT[40:]}),
    (
        "tool_result",
        {
            "step": 1,
            "call_id": "c1",
            "name": "execute_bash",
            "output": LONG_OUTPUT,
            "is_error": False,
            "exit_code": 0,
            "duration": 0.21,
        },
    ),
    ("usage", {"step": 1, "prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940, "estimated": False}),
    ("step_started", {"step": 2, "remaining": 28}),
    ("assistant_message", {"step": 2, "content": "Now the page.", "reasoning": None}),
    (
        "tool_call",
        {
            "step": 2,
            "call_id": "c2",
            "name": "str_replace_editor",
            "arguments": {"command": "create", "path": "/testbed/output/map.html", "file_text": "<p>\n</p>\n"},
        },
    ),
    (
        "tool_result",
        {
            "step": 2,
            "call_id": "c2",
            "name": "str_replace_editor",
            "output": "File created successfully at: /testbed/output/map.html",
            "is_error": False,
            "exit_code": None,
            "duration": 0.02,
        },
    ),
    ("step_started", {"step": 3, "remaining": 27}),
    (
        "tool_call",
        {"step": 3, "call_id": "c3", "name": "execute_bash", "arguments": {"command": "ls /nowhere"}},
    ),
    (
        "tool_result",
        {
            "step": 3,
            "call_id": "c3",
            "name": "execute_bash",
            "output": "ls: cannot access '/nowhere': No such file or directory\n",
            "is_error": True,
            "exit_code": 2,
            "duration": 0.01,
        },
    ),
    ("tool_call", {"step": 3, "call_id": "c4", "name": "submit", "arguments": {}}),
    ("finished", {"reason": "submitted", "steps": 3, "message": "The map is in map.html."}),
    (
        "artifacts",
        {
            "items": [{"id": 7, "path": "map.html", "kind": "html", "size": 2048, "content_type": "text/html"}],
            "rejected": [{"name": "link", "reason": "a symbolic link"}],
            "note": None,
        },
    ),
    (
        "status",
        {
            "status": "succeeded",
            "reason": "submitted",
            "final": True,
            "usage": {
                "steps": 3,
                "prompt_tokens": 2700,
                "completion_tokens": 120,
                "sandbox_seconds": 14.2,
                "output_bytes": 2048,
            },
        },
    ),
]


def sse_body(events: list[tuple[int, str, dict[str, Any]]]) -> bytes:
    """Events in the stream's wire format, after a keep-alive comment."""
    chunks = [": keep-alive\n\n"]
    for seq, kind, payload in events:
        data = json.dumps({"seq": seq, "kind": kind, "payload": payload, "at": "2026-01-01T00:00:00Z"})
        chunks.append(f"id: {seq}\nevent: {kind}\ndata: {data}\n\n")
    return "".join(chunks).encode()


def numbered(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, str, dict[str, Any]]]:
    return [(seq, kind, payload) for seq, (kind, payload) in enumerate(events, 1)]
