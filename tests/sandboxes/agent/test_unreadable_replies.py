"""Replies the model client cannot read (not JSON, cut off, the wrong shape), served over real
HTTP by the scripted server: asked again after a pause, and when they stay unreadable the run
ends with a model error in the platform's own words, never with an empty step."""

from __future__ import annotations

from typing import Any

import pytest

from devstack.scripted_model import ScriptedModel, delta_chunk, events, raw, submit
from tests.support.agent import client_for, run
from tests.support.fakes import FakeSandbox

HTML_PAGE = raw("<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
CUT_MID_JSON = events(
    delta_chunk({"role": "assistant", "content": ""}),
    '{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hel',
    done=False,
)
FINISHED = delta_chunk({}, "stop")

WRONG_SHAPES: dict[str, dict[str, Any] | list[Any]] = {
    "no choices": {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": "scripted"},
    "choices null": {"id": "chatcmpl-scripted", "choices": None},
    "choices a string": {"id": "chatcmpl-scripted", "choices": "stop"},
    "a choice without a delta": {"id": "chatcmpl-scripted", "choices": [{"index": 0, "finish_reason": None}]},
    "a choice that is a number": {"id": "chatcmpl-scripted", "choices": [7]},
    "content a number": {"id": "chatcmpl-scripted", "choices": [{"index": 0, "delta": {"content": 42}}]},
    "a tool call whose function is a string": {
        "id": "chatcmpl-scripted",
        "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": "submit"}]}}],
    },
    "a chunk that is a list": [1, 2, 3],
}


def _no_empty_step(recorded: Any) -> None:
    """One step, one reply: the unreadable answers left no step, message or observation behind."""
    assert len(recorded.of("step_started")) == 1
    assert [m["content"] for m in recorded.of("assistant_message")] == [""]
    assert recorded.of("error") == []


def test_an_html_page_instead_of_a_reply_is_asked_again(scripted_model: ScriptedModel) -> None:
    scripted_model.play([HTML_PAGE, submit("made it")])

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "made it"
    assert [r.answered_with for r in scripted_model.chat_requests()] == ["raw", "stream"]
    _no_empty_step(recorded)


def test_a_stream_cut_off_in_the_middle_of_its_json_is_asked_again(scripted_model: ScriptedModel) -> None:
    scripted_model.play([CUT_MID_JSON, submit("whole")])

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "whole"
    _no_empty_step(recorded)


def test_a_stream_that_ends_before_the_model_finished_is_asked_again(scripted_model: ScriptedModel) -> None:
    # Well-formed JSON, a clean end of the body, but no finish reason and no [DONE]: half a reply.
    scripted_model.play([events(delta_chunk({"content": "I will now "}), done=False), submit("whole")])

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    _no_empty_step(recorded)
    assert "I will now" not in str(scripted_model.chat_requests()[1].messages)


@pytest.mark.parametrize("shape", list(WRONG_SHAPES))
def test_a_reply_of_the_wrong_shape_is_asked_again(scripted_model: ScriptedModel, shape: str) -> None:
    scripted_model.play([events(WRONG_SHAPES[shape], FINISHED), submit("whole")])

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted", outcome.message
    _no_empty_step(recorded)


def test_an_empty_answer_is_asked_again(scripted_model: ScriptedModel) -> None:
    scripted_model.play([raw(b""), submit("whole")])

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    _no_empty_step(recorded)


def test_the_model_is_asked_again_only_after_a_pause(scripted_model: ScriptedModel) -> None:
    scripted_model.play([HTML_PAGE, HTML_PAGE, submit()])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model, backoff_initial=0.2, backoff_max=1.0))

    assert outcome.reason == "submitted"
    first, second, third = scripted_model.chat_requests()
    assert second.received_at - first.finished_at >= 0.1  # half of the first pause is fixed, half random
    assert third.received_at - second.finished_at >= 0.2


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (HTML_PAGE, "it was not a stream of events"),
        (CUT_MID_JSON, "part of it was not JSON"),
        (events(WRONG_SHAPES["no choices"], FINISHED), "it did not have the shape of a chat completion"),
        (events(delta_chunk({"content": "Hal"}), done=False), "it was cut off before the model finished"),
    ],
)
def test_a_reply_that_stays_unreadable_ends_the_run_with_a_model_error_in_our_words(
    scripted_model: ScriptedModel, answer: Any, said: str
) -> None:
    scripted_model.play([answer] * 3)

    outcome, recorded = run(FakeSandbox(), client_for(scripted_model, retries=2))

    assert outcome.reason == "model_error"
    assert len(scripted_model.chat_requests()) == 3
    (error,) = recorded.of("error")
    assert error["message"] == outcome.message
    assert error["message"].startswith("The model endpoint's reply could not be read")
    assert said in error["message"]
    assert "3 attempts" in error["message"]
    assert scripted_model.base_url in error["message"]
    # Nothing of Python's own, nothing of the endpoint's page.
    for leaked in ("Error:", "Traceback", "JSONDecodeError", "NoneType", "object has no attribute", "502 Bad"):
        assert leaked not in error["message"]
    assert recorded.of("assistant_message") == []
    assert recorded.of("finished") == [{"reason": "model_error", "steps": 1, "message": outcome.message}]
