"""`verify_events`: what a finished run stored holds to the event contract
(creations/events/schema.py), as Zulip's `verify_action` holds an action's events."""

from __future__ import annotations

from collections.abc import Iterable

from creations.events.schema import EVENT_KINDS, EventSchemaError, validate_event
from creations.models import Run, RunEvent


def verify_events(run: Run, *, must_emit: Iterable[str]) -> list[RunEvent]:
    """Every event `run` stored matches its kind's schema, the run emitted at least
    the kinds in `must_emit`, and it ends with its one final status. Returns the events."""
    unknown = set(must_emit) - set(EVENT_KINDS)
    assert not unknown, f"not event kinds: {sorted(unknown)}"
    events = list(RunEvent.objects.filter(run=run).order_by("seq"))
    problems = []
    for event in events:
        try:
            validate_event(event.kind, event.payload)
        except EventSchemaError as error:
            problems.append(f"event {event.seq}: {error}")
    assert not problems, "\n".join(problems)
    missing = set(must_emit) - {event.kind for event in events}
    assert not missing, f"run {run.pk} emitted no {sorted(missing)} event (it emitted {[e.kind for e in events]})"
    finals = [event.seq for event in events if event.kind == "status" and event.payload["final"]]
    assert finals == [events[-1].seq], f"the final status must be the one last event, not at {finals}"
    return events
