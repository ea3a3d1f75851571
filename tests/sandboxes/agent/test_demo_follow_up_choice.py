"""The demo model takes only the follow-ups it has recordings of, and says why
it refuses any other, before anything is queued."""

from __future__ import annotations

import json

import pytest

from sandboxes.agent import SHOWCASE_BRIEFS, demo_follow_up_refusal, demo_follow_ups, demo_model_client
from sandboxes.agent.demo.trajectory import best_trajectory

POSTER_BRIEF = next(str(entry["brief"]) for entry in SHOWCASE_BRIEFS if entry["kind"] == "poster")
POSTER_FOLLOW_UP = "Make the title bigger and the background dark blue."


@pytest.mark.parametrize("showcase", SHOWCASE_BRIEFS, ids=[b["kind"] for b in SHOWCASE_BRIEFS])
def test_each_showcase_suggests_a_recorded_follow_up(showcase: dict[str, object]) -> None:
    suggestions = demo_follow_ups(str(showcase["brief"]))

    assert suggestions
    for instruction in suggestions:
        assert demo_follow_up_refusal(str(showcase["brief"]), instruction) is None
        client = demo_model_client(str(showcase["brief"]), instruction=instruction)
        assert client.follow_up is not None
        assert client.follow_up.steps != best_trajectory(str(showcase["brief"])).steps
        # It looks at what the first version left before changing it, and ends by handing the result back.
        first_name, first_arguments = client.follow_up.steps[0].calls[0]
        assert (first_name, first_arguments["command"].split()[0]) == ("execute_bash", "ls")
        assert "/testbed" in first_arguments["command"]
        assert [name for name, _ in client.follow_up.steps[-1].calls] == ["submit"]


def test_the_poster_suggests_a_bigger_title_on_dark_blue() -> None:
    assert demo_follow_ups(POSTER_BRIEF) == [POSTER_FOLLOW_UP]
    # matched the way the demo matches briefs, not by the exact words
    assert demo_follow_ups("Design a flyer for our meetup") == [POSTER_FOLLOW_UP]


@pytest.mark.parametrize(
    "typed",
    [
        POSTER_FOLLOW_UP,
        "make the title bigger and the background dark blue",
        "  MAKE THE TITLE BIGGER AND THE BACKGROUND DARK BLUE!  ",
        "Make the title   bigger and\nthe background dark blue.",
        "Make the title bigger and the background dark blue...",
    ],
)
def test_the_recorded_follow_up_is_recognised_however_it_is_typed(typed: str) -> None:
    assert demo_follow_up_refusal(POSTER_BRIEF, typed) is None
    assert demo_model_client(POSTER_BRIEF, instruction=typed).follow_up == best_trajectory(POSTER_BRIEF).follow_ups[0]


@pytest.mark.parametrize(
    "typed",
    [
        "Make the title bigger",
        "Make the title bigger and the background dark red.",
        "Please make the title bigger and the background dark blue.",
        "",
    ],
)
def test_any_other_follow_up_is_refused_with_the_reason_and_the_way_out(typed: str) -> None:
    refusal = demo_follow_up_refusal(POSTER_BRIEF, typed)

    assert refusal == (
        "The demo model only replays recorded follow-ups, and for this showcase that is "
        '"Make the title bigger and the background dark blue"; '
        "your team's own model (set one up on the Models page) can take any instruction."
    )
    with pytest.raises(ValueError, match="only replays recorded follow-ups") as raised:
        demo_model_client(POSTER_BRIEF, instruction=typed)
    assert str(raised.value) == refusal


def test_another_showcases_follow_up_is_refused() -> None:
    music_brief = next(str(entry["brief"]) for entry in SHOWCASE_BRIEFS if entry["kind"] == "music")

    assert demo_follow_up_refusal(music_brief, POSTER_FOLLOW_UP) is not None


def test_a_brief_outside_the_showcase_has_no_follow_ups() -> None:
    brief = "a sonnet about autumn leaves"

    assert demo_follow_ups(brief) == []
    refusal = demo_follow_up_refusal(brief, "Make it rhyme.")
    assert refusal is not None
    assert "has none for this brief" in refusal
    assert "Models page" in refusal


def test_without_an_instruction_the_showcase_itself_is_replayed() -> None:
    client = demo_model_client(POSTER_BRIEF)

    assert client.follow_up is None
    assert client.trajectory.kind == "poster"


def test_a_follow_up_starts_at_its_first_step_after_the_carried_conversation() -> None:
    """A refine's conversation begins with the earlier versions (request, summary): the replay
    counts only this run's turns, so it starts by looking at /testbed, not at its second step."""
    from sandboxes.agent import Continuation, EarlierVersion
    from sandboxes.agent.prompts import earlier_messages, refine_message

    (instruction,) = demo_follow_ups(POSTER_BRIEF)
    continuation = Continuation(
        instruction=instruction, from_version=1, earlier=[EarlierVersion(request=POSTER_BRIEF, summary="A poster.")]
    )
    messages = [
        {"role": "system", "content": "You work in a sandbox."},
        *earlier_messages(continuation),
        {"role": "user", "content": refine_message(continuation)},
    ]
    client = demo_model_client(POSTER_BRIEF, instruction=instruction)
    reply = client.complete(messages, [], on_text=lambda text: None, on_reasoning=lambda text: None)
    (call,) = reply.tool_calls
    assert (call.name, json.loads(call.arguments)["command"]) == ("execute_bash", "ls -R /testbed")
