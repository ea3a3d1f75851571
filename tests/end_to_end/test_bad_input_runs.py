"""What a person gave or a model sent that the platform could not take as it was, through a real
run (Celery worker, gVisor sandbox, scripted model over HTTP): a renamed input file reaches the
sandbox under its new name and the agent is told both; a model whose replies cannot be read ends
the run with a model error in the platform's words, stored in the trajectory."""

from __future__ import annotations

import json

import pytest

from creations.models import RunStatus
from devstack.scripted_model import ScriptedModel, bash, raw
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, stored_events, submit, wait_for_final

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]


def test_a_renamed_input_reaches_the_sandbox_and_the_agent_knows_both_names(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    endpoint = scripted_endpoint(
        team, scripted_model, [bash("cat '/testbed/input/stops_ autumn_.csv'"), submit_reply("Read it.")]
    )
    run = submit(
        team,
        endpoint,
        brief="Map the stops in “stops: autumn?.csv”",
        files={"stops: autumn?.csv": b"name,lat,lon\nTsukiji,35.66,139.77\n"},
    )
    run = wait_for_final(run, logs=run_stack.logs)

    assert run.status == RunStatus.SUCCEEDED, run.reason
    results = [e["payload"] for e in stored_events(run) if e["kind"] == "tool_result"]
    (result,) = [r for r in results if r["name"] == "execute_bash"]
    assert "Tsukiji,35.66,139.77" in result["output"]
    task = scripted_model.chat_requests()[0].messages[1]["content"]
    assert "/testbed/input/stops_ autumn_.csv (the person named it “stops: autumn?.csv”" in task


def test_replies_that_stay_unreadable_end_the_run_with_a_model_error_in_the_trajectory(
    run_stack: AtelierServer, sandbox_image: str, team: Team, scripted_model: ScriptedModel
) -> None:
    page = raw("<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")
    endpoint = scripted_endpoint(team, scripted_model, [page])
    run = wait_for_final(submit(team, endpoint, brief="a poster"), logs=run_stack.logs)

    assert run.status == RunStatus.FAILED
    stored = stored_events(run)
    (error,) = [e["payload"] for e in stored if e["kind"] == "error"]
    assert error["message"].startswith("The model endpoint's reply could not be read (it was not a stream of events)")
    assert error["message"] in run.reason
    assert [e for e in stored if e["kind"] == "assistant_message"] == []  # no empty step
    assert "502 Bad Gateway" not in json.dumps(stored)
    assert len(scripted_model.chat_requests()) > 1  # asked again before giving up
