"""The agent is told which files the platform renamed, under both names, since the brief may use
the name the person gave: in the first request of a run, over real HTTP, and in a refine's."""

from __future__ import annotations

from devstack.scripted_model import ScriptedModel, submit
from sandboxes.agent import AgentLimits, Continuation, EarlierVersion, run_agent
from sandboxes.agent.prompts import refine_message
from tests.support.agent import Recorder, client_for
from tests.support.fakes import FakeSandbox


def test_the_first_request_names_each_renamed_file_as_the_person_did(scripted_model: ScriptedModel) -> None:
    scripted_model.play([submit()])

    run_agent(
        sandbox=FakeSandbox(),
        model=client_for(scripted_model),
        brief="Map the stops in “stops: autumn?.csv”",
        limits=AgentLimits(max_steps=2),
        emit=Recorder(),
        input_files=["b.csv", "stops_ autumn_.csv"],
        renamed_inputs={"stops_ autumn_.csv": "stops: autumn?.csv"},
    )

    task = scripted_model.chat_requests()[0].messages[1]["content"]
    assert "- /testbed/input/b.csv\n" in task
    assert "- /testbed/input/stops_ autumn_.csv (the person named it “stops: autumn?.csv”" in task


def test_a_refine_is_told_too() -> None:
    continuation = Continuation(
        instruction="bigger pins",
        from_version=1,
        earlier=[EarlierVersion(request="Map “stops: autumn?.csv”", summary="A map.")],
        renamed_inputs={"stops_ autumn_.csv": "stops: autumn?.csv"},
    )

    assert "“stops: autumn?.csv” is /testbed/input/stops_ autumn_.csv" in refine_message(continuation)
