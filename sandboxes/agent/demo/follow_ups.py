"""Which follow-up instructions the demo model can carry out: only the recorded
ones of the showcase a creation came from. Anything else is refused before a
run is queued, because a replay cannot act on words it has no recording for."""

from __future__ import annotations

import re

from sandboxes.agent.demo.trajectory import FollowUp, best_trajectory

_SPACES = re.compile(r"\s+")
# A suggestion typed back by hand often gains or loses its full stop.
_TRAILING_PUNCTUATION = ".!?;:,…"


def normalised_instruction(text: str) -> str:
    """`text` as compared with a recorded instruction: case, surrounding and
    repeated whitespace and trailing punctuation do not count."""
    return _SPACES.sub(" ", text).strip().rstrip(_TRAILING_PUNCTUATION).strip().casefold()


def demo_follow_ups(brief: str) -> list[str]:
    """The recorded follow-up instructions for the showcase `brief` matches,
    as suggestions to show; none for a brief outside the showcase."""
    return [follow_up.instruction for follow_up in best_trajectory(brief).follow_ups]


def recorded_follow_up(brief: str, instruction: str) -> FollowUp | None:
    wanted = normalised_instruction(instruction)
    for follow_up in best_trajectory(brief).follow_ups:
        if normalised_instruction(follow_up.instruction) == wanted:
            return follow_up
    return None


def demo_follow_up_refusal(brief: str, instruction: str) -> str | None:
    """None when the demo model has a recording of `instruction` for the
    creation made from `brief`; else the sentence telling the person why not."""
    if recorded_follow_up(brief, instruction) is not None:
        return None
    quoted = [f'"{text.rstrip(_TRAILING_PUNCTUATION)}"' for text in demo_follow_ups(brief)]
    if not quoted:
        known = "it has none for this brief"
    elif len(quoted) == 1:
        known = f"for this showcase that is {quoted[0]}"
    else:
        known = f"for this showcase those are {', '.join(quoted[:-1])} and {quoted[-1]}"
    return (
        f"The demo model only replays recorded follow-ups, and {known}; "
        "your team's own model (set one up on the Models page) can take any instruction."
    )
