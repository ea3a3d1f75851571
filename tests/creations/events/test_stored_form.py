"""What the runs service records is a payload model until it is stored, then the same JSON as ever."""

from __future__ import annotations

import pytest

from creations.events.schema import (
    ArtifactItem,
    ArtifactsCollected,
    StatusChange,
    UsageSummary,
    stored_form,
    validate_event,
)
from creations.models import RunStatus
from sandboxes.agent.events import ToolResult
from sandboxes.agent.usage import RunUsage


def test_a_status_change_is_stored_with_the_status_as_its_word_and_reads_back_as_the_status() -> None:
    change = StatusChange(status=RunStatus.RUNNING, reason="", final=False)

    stored = stored_form(change)

    assert stored == {"status": "running", "reason": "", "final": False}
    read = validate_event("status", stored)
    assert isinstance(read, StatusChange)
    assert read.status is RunStatus.RUNNING


def test_the_final_status_stores_the_runs_usage() -> None:
    usage = RunUsage(steps=3, prompt_tokens=100, completion_tokens=20, sandbox_seconds=9.5, output_bytes=4096)
    final = StatusChange(status=RunStatus.SUCCEEDED, reason="Done.", final=True, usage=UsageSummary.of(usage))

    stored = stored_form(final)

    assert stored["usage"] == {
        "steps": 3,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "sandbox_seconds": 9.5,
        "output_bytes": 4096,
    }
    read = validate_event("status", stored)
    assert isinstance(read, StatusChange)
    assert read.usage is not None
    assert read.usage.usage() == usage


def test_only_the_fields_given_are_stored() -> None:
    collected = ArtifactsCollected(
        items=[ArtifactItem(id=1, path="map.html", kind="html", size=10, content_type="text/html")]
    )
    assert stored_form(collected) == {
        "items": [{"id": 1, "path": "map.html", "kind": "html", "size": 10, "content_type": "text/html"}]
    }
    collected.note = "Some output was left out."
    assert stored_form(collected)["note"] == "Some output was left out."
    assert "rejected" not in stored_form(collected)

    result = ToolResult(
        step=1, call_id="c1", name="execute_bash", output="", is_error=False, exit_code=None, duration=0.5
    )
    assert stored_form(result)["exit_code"] is None  # given, so stored, as the loop always gave it


@pytest.mark.parametrize("status", ["exploded", "RUNNING"])
def test_a_status_that_is_not_one_is_refused(status: str) -> None:
    with pytest.raises(ValueError, match="status"):
        StatusChange.model_validate({"status": status, "reason": "", "final": False})
