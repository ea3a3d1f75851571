""" "Test connection" for an OpenAI-compatible endpoint: a real call, a clear verdict.

It lists the models (which also tests the key on most servers), then asks for a
one-token chat completion with a tool definition, the way the agent will call
it. A server that refuses the tools but answers without them cannot run the
agent, and is told so. Nothing the endpoint returns is repeated raw: the
verdict is a sentence of ours, plus at most the model names it lists, each
checked against a strict pattern.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from sandboxes.agent.endpoint_addresses import (
    EndpointAddressRefused,
    EndpointReplyTooLarge,
    check_base_url_host,
    find_cause,
    public_url,
    refused_in_chain,
)
from sandboxes.agent.endpoint_deadline import deadline_passed, overall_deadline
from sandboxes.agent.openai_client import shared_http_client

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Answer the connection test.",
        "parameters": {"type": "object", "properties": {}},
    },
}
MODEL_NAME_SHOWN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,79}$")
MODEL_NAMES_SHOWN = 8


@dataclass(frozen=True)
class Verdict:
    code: str  # one of workspaces.models.EndpointVerdict's values
    message: str

    @property
    def works(self) -> bool:
        return self.code == "works"


@dataclass(frozen=True)
class EndpointUnderTest:
    base_url: str
    model: str
    api_key: str
    extra_body: dict[str, Any]
    temperature: float | None
    allow_private: bool
    timeout: float  # each connect, read and write
    deadline: float  # the whole test, its two or three calls together


def check_endpoint(endpoint: EndpointUnderTest) -> Verdict:
    try:
        check_base_url_host(endpoint.base_url, allow_private=endpoint.allow_private)
    except EndpointAddressRefused as refused:
        return Verdict("refused_address", f"Not tested: {refused}")
    # A server that trickles its answer a byte at a time never trips a per-read timeout: without a
    # deadline for the whole test it would hold a web process's thread for as long as it liked.
    with overall_deadline(endpoint.deadline):
        verdict = _called_verdict(endpoint)
        if verdict.code == "timeout" and deadline_passed():
            return Verdict(
                "timeout",
                f"{public_url(endpoint.base_url)} did not finish answering within {endpoint.deadline:g} s:"
                " it is overloaded, or sends its answer a little at a time.",
            )
    return verdict


def _called_verdict(endpoint: EndpointUnderTest) -> Verdict:
    client = openai.OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or "no-key",
        timeout=httpx2.Timeout(endpoint.timeout),
        max_retries=0,
        http_client=shared_http_client(allow_private=endpoint.allow_private),
    )
    where = public_url(endpoint.base_url)
    listed: list[str] | None = None
    try:
        listed = [model.id for model in client.models.list()]
    except openai.APIStatusError as error:
        if error.status_code in (401, 403):
            return _wrong_key(error.status_code)
        # Some servers have no model list; the chat call below still decides.
    except (openai.APIConnectionError, httpx2.TransportError) as error:
        return _connection_verdict(error, where)
    except (openai.APIResponseValidationError, ValueError, TypeError):
        pass  # a list in an unexpected shape: the chat call decides
    return _chat_verdict(client, endpoint, where, listed)


def _chat_verdict(client: openai.OpenAI, endpoint: EndpointUnderTest, where: str, listed: list[str] | None) -> Verdict:
    request: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [{"role": "user", "content": "Reply with one word."}],
        "max_tokens": 1,
    }
    if endpoint.temperature is not None:
        request["temperature"] = endpoint.temperature
    request.update(endpoint.extra_body)
    try:
        client.post("/chat/completions", body={**request, "tools": [PROBE_TOOL]}, cast_to=object)
    except openai.APIStatusError as error:
        status = error.status_code
        if status in (401, 403):
            return _wrong_key(status)
        if status == 404:
            return _unknown_model(endpoint.model, where, listed)
        if status in (400, 422):
            return _without_tools(client, request, endpoint, where, listed, status)
        if status == 429:
            return Verdict("rejected", "The endpoint is rate-limiting this key (HTTP 429); try again in a minute.")
        if status >= 500:
            return Verdict("server_error", f"The endpoint failed to answer (HTTP {status}). Try again later.")
        return Verdict("rejected", f"The endpoint rejected the test request (HTTP {status}).")
    except (openai.APIConnectionError, httpx2.TransportError) as error:
        return _connection_verdict(error, where)
    if listed is not None and endpoint.model not in listed:
        return Verdict("works", f"Works: {endpoint.model} answered with tool calling (not in the model list, though).")
    return Verdict("works", f"Works: {endpoint.model} answered, with tool calling.")


def _without_tools(
    client: openai.OpenAI,
    request: dict[str, Any],
    endpoint: EndpointUnderTest,
    where: str,
    listed: list[str] | None,
    status: int,
) -> Verdict:
    try:
        client.post("/chat/completions", body=request, cast_to=object)
    except openai.APIStatusError as error:
        if error.status_code == 404:
            return _unknown_model(endpoint.model, where, listed)
        return Verdict(
            "rejected",
            f"The endpoint rejected the test request (HTTP {status}). Check the model name and the extra request body.",
        )
    except (openai.APIConnectionError, httpx2.TransportError) as error:
        return _connection_verdict(error, where)
    return Verdict(
        "no_tools",
        f"{endpoint.model} answers, but not when given tools (HTTP {status}), and the agent works only through"
        " tool calls. Use a model with tool calling, or enable it on the server (vLLM: --enable-auto-tool-choice"
        " with a --tool-call-parser).",
    )


def _wrong_key(status: int) -> Verdict:
    return Verdict("wrong_key", f"The endpoint refused the API key (HTTP {status}). Enter the key again.")


def _unknown_model(model: str, where: str, listed: list[str] | None) -> Verdict:
    message = f"{where} does not know the model “{model}” (HTTP 404). Check the model name and the base URL."
    names = [name for name in (listed or []) if MODEL_NAME_SHOWN.match(name)][:MODEL_NAMES_SHOWN]
    if names:
        message += " It lists: " + ", ".join(names) + ("…" if len(listed or []) > len(names) else "") + "."
    return Verdict("unknown_model", message)


def _connection_verdict(error: Exception, where: str) -> Verdict:
    refused = refused_in_chain(error)
    if refused is not None:
        return Verdict("refused_address", f"Not tested: {refused}")
    if find_cause(error, EndpointReplyTooLarge) is not None:
        return Verdict("rejected", f"{where} sent a reply far larger than any model's; reading stopped.")
    if isinstance(error, openai.APITimeoutError) or find_cause(error, httpx2.TimeoutException) is not None:
        return Verdict("timeout", f"{where} did not answer in time. Check that the server is up and not overloaded.")
    if find_cause(error, ssl.SSLError) is not None:
        return Verdict(
            "tls_error",
            f"The TLS connection to {where} failed: its certificate is not trusted, expired, or for another name.",
        )
    return Verdict("unreachable", f"Could not connect to {where}. Check the address and that the server is running.")
