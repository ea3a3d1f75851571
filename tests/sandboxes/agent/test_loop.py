"""The agent loop over real HTTP (scripted server, real `openai` client), with
an in-memory sandbox: what a person watching a run would see."""

from __future__ import annotations

import threading
from typing import Any

from devstack.scripted_model import CONTEXT_OVERFLOW, ScriptedModel, bash, call, drop, http_error, reply, submit
from tests.support.agent import client_for, run
from tests.support.fakes import FakeSandbox


def test_it_runs_the_commands_and_ends_when_the_model_submits(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("echo hi"), submit("made it")])
    sandbox = FakeSandbox()

    outcome, events = run(sandbox, client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "made it"
    assert outcome.usage.steps == 2
    assert sandbox.commands == ["echo hi"]
    assert events.kinds()[-1] == "finished"
    assert events.of("finished")[0] == {"reason": "submitted", "steps": 2, "message": "made it"}
    result = events.of("tool_result")[0]
    assert result["output"].startswith("ran: echo hi")
    assert result["exit_code"] == 0
    assert not result["is_error"]
    # The observation went back to the model in the next request.
    tool_messages = [m for m in scripted_model.chat_requests()[1].messages if m["role"] == "tool"]
    assert tool_messages[0]["content"].startswith("ran: echo hi")


def test_the_first_request_carries_the_system_prompt_brief_and_the_three_tools(scripted_model: ScriptedModel) -> None:
    scripted_model.play([submit()])

    run(FakeSandbox(), client_for(scripted_model), brief="a poster for the fair")

    body = scripted_model.chat_requests()[0].body
    assert [tool["function"]["name"] for tool in body["tools"]] == ["execute_bash", "str_replace_editor", "submit"]
    assert "/testbed/output" in body["messages"][0]["content"]
    assert body["messages"][1]["content"].startswith("a poster for the fair")
    assert body["stream"] is True
    assert scripted_model.chat_requests()[0].headers["authorization"] == "Bearer test-key"


def test_the_system_prompt_names_the_hosts_pages_may_load_from_and_the_sidecars(
    scripted_model: ScriptedModel, settings: Any
) -> None:
    scripted_model.play([submit()])
    run(FakeSandbox(), client_for(scripted_model), brief="a map of the coast")
    alone = scripted_model.chat_requests()[0].body["messages"][0]["content"]
    assert "can load nothing from another host" in alone
    assert "poster.png.alt.txt" in alone
    assert "clip.mp4.vtt" in alone
    assert "$BASEMAP_DIR" in alone

    settings.ARTIFACT_PAGE_HOSTS = ["https://tile.openstreetmap.org"]
    scripted_model.play([submit()])
    run(FakeSandbox(), client_for(scripted_model), brief="a map of the coast")
    allowed = scripted_model.chat_requests()[-1].body["messages"][0]["content"]
    assert "from these hosts only: https://tile.openstreetmap.org;" in allowed


def test_several_tool_calls_in_one_reply_run_in_order(scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            reply(
                "two things", [call("execute_bash", {"command": "first"}), call("execute_bash", {"command": "second"})]
            ),
            submit(),
        ]
    )
    sandbox = FakeSandbox()

    outcome, events = run(sandbox, client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert sandbox.commands == ["first", "second"]
    assert [r["output"].split("\n")[0] for r in events.of("tool_result")[:2]] == ["ran: first", "ran: second"]


def test_each_malformed_call_yields_an_error_observation_and_the_run_goes_on(scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            reply("", [call("launch_rockets", {"count": 3})]),
            reply("", [call("execute_bash", raw='{"command": "ls"')]),
            reply("", [call("execute_bash", {})]),
            reply("", [call("str_replace_editor", {"command": "insert", "path": "/testbed/a.txt", "new_str": "x"})]),
            reply("", [call("str_replace_editor", {"command": "explode", "path": "/testbed/a.txt"})]),
            bash("echo still here"),
            submit(),
        ]
    )
    sandbox = FakeSandbox()

    outcome, events = run(sandbox, client_for(scripted_model))

    assert outcome.reason == "submitted"
    results = events.of("tool_result")
    assert [r["is_error"] for r in results[:5]] == [True] * 5
    assert "no tool named 'launch_rockets'" in results[0]["output"]
    assert "not valid JSON" in results[1]["output"]
    assert "'command' is missing" in results[2]["output"]
    assert "'insert_line'" in results[3]["output"]
    assert "unknown editor command" in results[4]["output"]
    assert events.of("tool_call")[1]["arguments"] == {"raw": '{"command": "ls"'}
    assert sandbox.commands == ["echo still here"]
    assert sandbox.edits == []
    # Each error reached the model as the observation of its call.
    second_request = scripted_model.chat_requests()[1].messages
    assert second_request[-1]["role"] == "tool"
    assert "launch_rockets" in second_request[-1]["content"]


def test_a_reply_without_a_tool_call_is_nudged_and_counts_as_a_step(scripted_model: ScriptedModel) -> None:
    scripted_model.play([reply("I think I am done?"), submit()])

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.usage.steps == 2
    nudge = scripted_model.chat_requests()[1].messages[-1]
    assert nudge["role"] == "user"
    assert "without calling a tool" in nudge["content"]
    assert events.of("assistant_message")[0]["content"] == "I think I am done?"


def test_the_step_limit_ends_the_run_after_telling_the_model_to_submit(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash(f"echo {n}") for n in range(3)])

    outcome, events = run(FakeSandbox(), client_for(scripted_model), max_steps=3)

    assert outcome.reason == "step_limit"
    assert outcome.usage.steps == 3
    assert len(scripted_model.chat_requests()) == 3
    assert [e["remaining"] for e in events.of("step_started")] == [2, 1, 0]
    last_request = scripted_model.chat_requests()[2].messages
    assert "last step" in last_request[-1]["content"]
    assert "submit" in last_request[-1]["content"]
    assert "2 steps left" in scripted_model.chat_requests()[1].messages[-1]["content"]
    assert events.of("finished")[0]["reason"] == "step_limit"


def test_the_server_answering_500_twice_then_ok_succeeds(scripted_model: ScriptedModel) -> None:
    scripted_model.play([http_error(500), http_error(503), submit("after retries")])

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "after retries"
    assert [r.answered_with for r in scripted_model.chat_requests()] == ["500", "503", "stream"]
    assert events.of("error") == []


def test_a_run_keeps_one_connection_to_the_endpoint(scripted_model: ScriptedModel) -> None:
    # A new connection per step would cost a TCP (and, for real endpoints, TLS)
    # handshake every step.
    scripted_model.play([bash("echo one"), bash("echo two"), bash("echo three"), submit()])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    ports = {r.client_port for r in scripted_model.chat_requests()}
    assert len(scripted_model.chat_requests()) == 4
    assert len(ports) == 1


def test_a_rate_limit_is_retried(scripted_model: ScriptedModel) -> None:
    scripted_model.play([http_error(429, "slow down", headers={"retry-after": "0.01"}), submit()])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"


def test_a_connection_dropped_mid_stream_is_retried(scripted_model: ScriptedModel) -> None:
    scripted_model.play([drop(after_chunks=3), drop(), submit("whole")])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "whole"
    assert len(scripted_model.chat_requests()) == 3


def test_an_endpoint_that_keeps_failing_ends_the_run_with_a_clear_reason(scripted_model: ScriptedModel) -> None:
    scripted_model.play([http_error(500)] * 3)

    outcome, events = run(FakeSandbox(), client_for(scripted_model, retries=2))

    assert outcome.reason == "model_error"
    assert "gave up after 3 attempts" in outcome.message
    assert events.of("error")[0]["message"] == outcome.message
    assert events.kinds()[-1] == "finished"


def test_an_unreachable_endpoint_fails_cleanly() -> None:
    from sandboxes.agent import model_client_for
    from tests.support import free_port

    client = model_client_for(
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        model="m",
        api_key="k",
        extra_body={},
        retries=1,
        backoff_initial=0.01,
    )
    outcome, events = run(FakeSandbox(), client)

    assert outcome.reason == "model_error"
    assert "could not reach the endpoint" in outcome.message
    assert events.of("finished")[0]["reason"] == "model_error"


def test_a_wrong_api_key_fails_at_once_with_a_clear_error(scripted_model: ScriptedModel) -> None:
    scripted_model.api_key = "the-right-key"
    scripted_model.play([submit()])

    outcome, _ = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "model_error"
    assert "refused the API key" in outcome.message
    assert len(scripted_model.chat_requests()) == 1


def test_clients_of_different_workspaces_share_connections_but_never_keys(scripted_model: ScriptedModel) -> None:
    from sandboxes.agent import model_client_for

    scripted_model.play([bash("echo a"), bash("echo b"), submit("a"), submit("b")])
    endpoint: dict[str, Any] = {"base_url": scripted_model.base_url, "model": scripted_model.model, "extra_body": {}}
    first = model_client_for(api_key="key-of-team-a", **endpoint)
    second = model_client_for(api_key="key-of-team-b", **endpoint)
    for client in (first, second, first, second):
        client.complete([{"role": "user", "content": "hi"}], [], on_text=lambda _: None, on_reasoning=lambda _: None)

    keys = [r.headers["authorization"] for r in scripted_model.chat_requests()]
    assert keys == ["Bearer key-of-team-a", "Bearer key-of-team-b"] * 2
    # One kept-alive connection served all four requests: no new handshake per run.
    assert len({r.client_port for r in scripted_model.chat_requests()}) == 1


def test_a_cookie_one_workspace_received_never_reaches_another(scripted_model: ScriptedModel) -> None:
    from sandboxes.agent import model_client_for

    # A gateway in front of the model may set a session cookie for team A's key.
    session = {"retry-after": "0.01", "set-cookie": "gateway_session=team-a; Path=/"}
    scripted_model.play([http_error(429, "slow down", headers=session), submit("a"), submit("b")])
    endpoint: dict[str, Any] = {"base_url": scripted_model.base_url, "model": scripted_model.model, "extra_body": {}}
    for key in ("key-of-team-a", "key-of-team-b"):
        client = model_client_for(api_key=key, backoff_initial=0.01, **endpoint)
        client.complete([{"role": "user", "content": "hi"}], [], on_text=lambda _: None, on_reasoning=lambda _: None)

    requests = scripted_model.chat_requests()
    assert [r.headers["authorization"] for r in requests] == ["Bearer key-of-team-a"] * 2 + ["Bearer key-of-team-b"]
    assert all("cookie" not in r.headers for r in requests)


def test_an_unknown_model_fails_at_once_with_a_clear_error(scripted_model: ScriptedModel) -> None:
    from sandboxes.agent import model_client_for

    client = model_client_for(base_url=scripted_model.base_url, model="no-such-model", api_key="k", extra_body={})
    outcome, _ = run(FakeSandbox(), client)

    assert outcome.reason == "model_error"
    assert "does not know model 'no-such-model'" in outcome.message
    assert len(scripted_model.chat_requests()) == 1


def test_streaming_deltas_arrive_in_order(scripted_model: ScriptedModel) -> None:
    text = "Let me look around first, then write the script. " * 3
    scripted_model.play([reply(text, [call("submit", {})], reasoning="The brief asks for a map.", chunk_chars=5)])

    _, events = run(FakeSandbox(), client_for(scripted_model))

    deltas = events.of("assistant_delta")
    assert len(deltas) > 10
    assert "".join(d["text"] for d in deltas) == text
    assert "".join(d["text"] for d in events.of("reasoning_delta")) == "The brief asks for a map."
    kinds = events.kinds()
    assert kinds.index("step_started") < kinds.index("reasoning_delta") < kinds.index("assistant_delta")
    assert kinds.index("assistant_delta") < kinds.index("assistant_message") < kinds.index("tool_call")
    assert events.of("assistant_message")[0] == {"step": 1, "content": text, "reasoning": "The brief asks for a map."}


def test_tool_output_streams_as_deltas_before_the_result(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("echo hi"), submit()])

    _, events = run(FakeSandbox(), client_for(scripted_model))

    kinds = events.kinds()
    assert "".join(d["text"] for d in events.of("tool_output_delta")) == "ran: echo hi\n"
    assert kinds.index("tool_call") < kinds.index("tool_output_delta") < kinds.index("tool_result")


def test_usage_is_recorded_per_call_and_estimated_when_the_endpoint_omits_it(scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            bash("echo 1", usage={"prompt_tokens": 100, "completion_tokens": 7}),
            reply("", [call("submit", {})], omit_usage=True),
        ]
    )

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    reported, estimated = events.of("usage")
    assert reported == {
        "step": 1,
        "prompt_tokens": 100,
        "completion_tokens": 7,
        "total_tokens": 107,
        "estimated": False,
    }
    assert estimated["estimated"] is True
    assert estimated["prompt_tokens"] > 0
    assert outcome.usage.prompt_tokens == 100 + estimated["prompt_tokens"]


def test_a_context_overflow_shortens_old_observations_and_goes_on(scripted_model: ScriptedModel) -> None:
    big = "x" * 5000
    scripted_model.play([bash(f"echo {big}"), bash("echo small"), CONTEXT_OVERFLOW, submit("fit")])

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "submitted"
    assert outcome.message == "fit"
    retried = scripted_model.chat_requests()[3].messages
    assert all(len(m.get("content") or "") < 1000 for m in retried[2:])
    assert any("removed to fit the context window" in (m.get("content") or "") for m in retried)
    assert events.of("error") == []


def test_an_overflow_that_cannot_be_fixed_ends_the_run_instead_of_crashing(scripted_model: ScriptedModel) -> None:
    scripted_model.play([CONTEXT_OVERFLOW] * 20)

    outcome, _ = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "model_error"
    assert "context window" in outcome.message


def test_cancel_from_another_thread_stops_a_waiting_run_promptly(scripted_model: ScriptedModel) -> None:
    scripted_model.play([reply("slow", [call("submit", {})], delay=30)])
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()

    outcome, events = run(FakeSandbox(), client_for(scripted_model), cancel=cancel)

    assert outcome.reason == "cancelled"
    assert events.of("finished")[0]["reason"] == "cancelled"


def test_a_broken_sandbox_ends_the_run_with_a_sandbox_error(scripted_model: ScriptedModel) -> None:
    scripted_model.play([bash("explode"), submit()])

    outcome, events = run(FakeSandbox(), client_for(scripted_model))

    assert outcome.reason == "sandbox_error"
    assert "container is gone" in events.of("error")[0]["message"]


def test_editor_calls_reach_the_editor_with_checked_arguments(scripted_model: ScriptedModel) -> None:
    scripted_model.play(
        [
            reply("", [call("str_replace_editor", {"command": "view", "path": "/testbed", "view_range": [1, 5]})]),
            submit(),
        ]
    )
    sandbox = FakeSandbox()

    run(sandbox, client_for(scripted_model))

    assert sandbox.edits == [{"command": "view", "path": "/testbed", "view_range": [1, 5]}]
