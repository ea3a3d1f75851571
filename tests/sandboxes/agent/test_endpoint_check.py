"""'Test connection' verdicts and the endpoint address rules, against the
scripted model server over real HTTP (and HTTPS) on loopback."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from devstack.model_script import submit
from devstack.scripted_model import ScriptedModel
from sandboxes.agent.endpoint_addresses import address_refusal
from sandboxes.agent.endpoint_check import EndpointUnderTest, Verdict, check_endpoint
from sandboxes.agent.model import ModelError
from tests.support import free_port
from tests.support.tls import self_signed_server_context
from tests.support.trickling_server import trickling_server

KEY = "sk-test-the-right-key-0000"


def check(server_url: str, *, model: str = "scripted", api_key: str = KEY, **overrides: Any) -> Verdict:
    settings: dict[str, Any] = {
        "base_url": server_url,
        "model": model,
        "api_key": api_key,
        "extra_body": {},
        "temperature": None,
        "allow_private": True,
        "timeout": 5.0,
        "deadline": 30.0,
    }
    settings.update(overrides)
    return check_endpoint(EndpointUnderTest(**settings))


@pytest.fixture
def keyed_model() -> Iterator[ScriptedModel]:
    with ScriptedModel(api_key=KEY, exhausted=submit()) as server:
        yield server


def test_a_working_endpoint_is_called_with_a_tool_and_works(keyed_model: ScriptedModel) -> None:
    verdict = check(keyed_model.base_url)

    assert verdict.code == "works", verdict.message
    [chat] = keyed_model.chat_requests()
    assert chat.body["tools"][0]["function"]["name"] == "ping"
    assert chat.body["max_tokens"] == 1


def test_a_wrong_key_is_named(keyed_model: ScriptedModel) -> None:
    verdict = check(keyed_model.base_url, api_key="sk-wrong")

    assert verdict.code == "wrong_key"
    assert "401" in verdict.message
    assert "Incorrect API key" not in verdict.message  # the endpoint's own words are never repeated


def test_an_unknown_model_is_named_with_the_models_it_lists(keyed_model: ScriptedModel) -> None:
    verdict = check(keyed_model.base_url, model="gpt-nonexistent")

    assert verdict.code == "unknown_model"
    assert "gpt-nonexistent" in verdict.message
    assert "It lists: scripted." in verdict.message
    assert "does not exist" not in verdict.message


def test_a_model_without_tool_calling_is_told_apart(keyed_model: ScriptedModel) -> None:
    keyed_model.tools_supported = False

    verdict = check(keyed_model.base_url)

    assert verdict.code == "no_tools"
    assert "tool" in verdict.message
    assert "registry.ollama.ai" not in verdict.message
    assert [bool(r.body.get("tools")) for r in keyed_model.chat_requests()] == [True, False]


def test_nothing_listening_is_unreachable() -> None:
    verdict = check(f"http://127.0.0.1:{free_port()}/v1")

    assert verdict.code == "unreachable"
    assert "Could not connect" in verdict.message


def test_an_untrusted_certificate_is_a_tls_error() -> None:
    with ScriptedModel(api_key=KEY, tls=self_signed_server_context()) as server:
        assert server.base_url.startswith("https://")
        verdict = check(server.base_url)

    assert verdict.code == "tls_error"
    assert "certificate" in verdict.message


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections, never reads or answers
        port = listener.getsockname()[1]

        verdict = check(f"http://127.0.0.1:{port}/v1", timeout=0.5)

    assert verdict.code == "timeout"


def test_loopback_is_refused_unless_private_addresses_are_allowed(keyed_model: ScriptedModel) -> None:
    for url in (keyed_model.base_url, f"http://localhost:{keyed_model.port}/v1"):
        verdict = check(url, allow_private=False)
        assert verdict.code == "refused_address", url
        assert "private or loopback" in verdict.message
    assert keyed_model.requests == []


@pytest.mark.parametrize("address", ["169.254.169.254", "fd00:ec2::254", "168.63.129.16", "::ffff:169.254.169.254"])
def test_metadata_addresses_are_refused_always(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address), allow_private=True) is not None
    assert address_refusal(ipaddress.ip_address(address), allow_private=False) is not None


def test_public_addresses_are_allowed_and_private_ones_follow_the_setting() -> None:
    for public in ("8.8.8.8", "2001:4860:4860::8888", "1.1.1.1"):
        assert address_refusal(ipaddress.ip_address(public), allow_private=False) is None, public
    for private in ("10.1.2.3", "192.168.1.20", "127.0.0.1", "::1", "fd12::1", "100.64.0.1"):
        assert address_refusal(ipaddress.ip_address(private), allow_private=False) is not None, private
        assert address_refusal(ipaddress.ip_address(private), allow_private=True) is None, private


def test_a_name_that_resolves_to_metadata_is_refused_when_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The address is checked where the connection is made, after resolution,
    so a host name that changes its answer (DNS rebinding) gains nothing."""
    from sandboxes.agent import endpoint_addresses, model_client_for

    connected: list[Any] = []
    real_create_connection = socket.create_connection

    def recording_create_connection(*args: Any, **kwargs: Any) -> socket.socket:
        connected.append(args)
        return real_create_connection(*args, **kwargs)

    monkeypatch.setattr(endpoint_addresses, "resolve", lambda host, port: ["169.254.169.254"])
    monkeypatch.setattr(socket, "create_connection", recording_create_connection)
    client = model_client_for(base_url="http://models.internal.test/v1", model="m", api_key=KEY, retries=3)

    with pytest.raises(ModelError) as raised:
        client.complete([{"role": "user", "content": "hi"}], [], on_text=print, on_reasoning=print)

    assert "not allowed" in str(raised.value)
    assert connected == []


def test_a_run_never_sends_the_key_to_a_refused_address(keyed_model: ScriptedModel, settings: Any) -> None:
    from sandboxes.agent import model_client_for

    settings.MODEL_ENDPOINT_ALLOW_PRIVATE = False
    client = model_client_for(base_url=keyed_model.base_url, model="scripted", api_key=KEY, retries=3)

    with pytest.raises(ModelError) as raised:
        client.complete([{"role": "user", "content": "hi"}], [], on_text=print, on_reasoning=print)

    assert "private or loopback" in str(raised.value)
    assert keyed_model.requests == []


def test_errors_never_repeat_the_endpoints_body_or_the_urls_secrets(keyed_model: ScriptedModel) -> None:
    from sandboxes.agent import model_client_for

    base_url = keyed_model.base_url + "?api-key=" + KEY
    client = model_client_for(base_url=base_url, model="nope", api_key=KEY)
    with pytest.raises(ModelError) as raised:
        client.complete([{"role": "user", "content": "hi"}], [], on_text=print, on_reasoning=print)

    message = str(raised.value)
    assert "does not know model 'nope'" in message
    assert KEY not in message
    assert "does not exist" not in message  # the server's body said so; we say it in our words


def test_the_check_runs_concurrently_without_sharing_state(keyed_model: ScriptedModel) -> None:
    verdicts: list[Verdict] = []
    threads = [
        threading.Thread(target=lambda key=key: verdicts.append(check(keyed_model.base_url, api_key=key)))
        for key in (KEY, "sk-wrong", KEY, "sk-wrong")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(v.code for v in verdicts) == ["works", "works", "wrong_key", "wrong_key"]


@pytest.fixture
def endless_models_list() -> Iterator[str]:
    """An endpoint whose model list never ends (a broken or hostile server)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Endless(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class names it so
            return

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"object": "list", "data": [')
            try:
                while True:
                    self.wfile.write(b'{"id": "model", "object": "model"},' * 1000)
            except OSError:  # the client stopped reading
                return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_reply_without_end_is_read_only_up_to_the_cap(
    endless_models_list: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandboxes.agent import endpoint_addresses

    monkeypatch.setattr(endpoint_addresses, "REPLY_MAX_BYTES", 256 * 1024)

    verdict = check(endless_models_list, timeout=30)

    assert verdict.code == "rejected"
    assert "reading stopped" in verdict.message


@pytest.mark.alone  # measures the deadline by this machine's clock: a starved process would overrun it
@pytest.mark.parametrize("part", ["status line", "body"])
def test_a_server_that_trickles_its_answer_is_given_up_on_at_the_deadline(part: str) -> None:
    # A byte every 0.3 s: the 2 s per-read timeout never fires, only the overall deadline can.
    with trickling_server(part=part, every=0.3) as url:
        started = time.monotonic()
        verdict = check(url, timeout=2.0, deadline=2.5)
        took = time.monotonic() - started

    assert verdict.code == "timeout"
    assert "did not finish answering within 2.5 s" in verdict.message
    assert took < 2.5 + 1.5
