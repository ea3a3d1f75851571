"""A model client for any OpenAI-compatible chat completions endpoint.

Streams every reply (text and reasoning arrive as deltas), retries what can
succeed on a second try (429, 5xx, timeouts, dropped connections, and a reply
that cannot be read: not JSON, cut off, or of the wrong shape, as a proxy in
trouble or an overloaded server sends) with backoff and jitter, and gives a
clear, final error for what cannot (a bad key, an unknown model, a rejected
request). Retries are ours, not the `openai` package's, so a connection
dropped in the middle of a stream is retried too and a cancelled run stops
waiting at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx2
import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from sandboxes.agent.chunk_shape import chunk_readable
from sandboxes.agent.config import DEFAULTS
from sandboxes.agent.endpoint_addresses import (
    EndpointReplyTooLarge,
    GuardedTransport,
    find_cause,
    public_url,
    refused_in_chain,
)
from sandboxes.agent.model import (
    ContextOverflowError,
    ModelCancelled,
    ModelError,
    ModelReply,
    TextSink,
    ToolCallRequest,
    Usage,
)
from sandboxes.agent.retry import RetryPolicy, wait_or_cancelled
from sandboxes.agent.tokens import estimate_prompt_tokens, estimate_text_tokens
from sandboxes.per_process import per_process

log = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
CONTEXT_OVERFLOW_MARKERS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
)


# The `openai` package's own default pool size.
CONNECTION_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


@per_process
def shared_http_client(*, allow_private: bool) -> httpx2.Client:
    """One HTTP client per process (and address rule) for every model endpoint:
    building one per run costs about 30 ms of CPU (its TLS context loads the CA
    bundle), and a shared pool keeps connections to an endpoint alive from run
    to run. Keys and timeouts travel with each request, and it keeps no cookies
    (a gateway's session cookie for one workspace's key must never ride along
    with another's), so sharing it leaks nothing between workspaces. Every
    connection it opens is checked against the endpoint address rules
    (`endpoint_addresses`). Rebuilt after a fork (a pool must not cross one)."""
    no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    return openai.DefaultHttpx2Client(
        cookies=no_cookies,
        limits=CONNECTION_LIMITS,
        transport=GuardedTransport(allow_private=allow_private, limits=CONNECTION_LIMITS),
    )


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Unreadable(_Retryable):
    """The endpoint answered, but not with a chat completion this client can read; the message
    says how, in our words (the endpoint's own text may be a proxy's page, or echo the key)."""


NOT_A_STREAM = "it was not a stream of events"
NOT_JSON = "part of it was not JSON"
WRONG_SHAPE = "it did not have the shape of a chat completion"
CUT_OFF = "it was cut off before the model finished"


class OpenAIModelClient:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        extra_body: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        allow_private: bool = True,
        max_reported_tokens: int = DEFAULTS["AGENT_MODEL_MAX_REPORTED_TOKENS"],
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._extra_body = dict(extra_body or {})
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._retry = retry or RetryPolicy()
        self._max_reported_tokens = max_reported_tokens
        self._client = openai.OpenAI(
            base_url=base_url,
            # Local servers (vLLM, Ollama) often need no key, but the client
            # insists on one; any placeholder works for them.
            api_key=api_key or "no-key",
            timeout=httpx2.Timeout(timeout, connect=connect_timeout),
            max_retries=0,
            http_client=shared_http_client(allow_private=allow_private),
        )

    @property
    def name(self) -> str:
        return self.model

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink,
        on_reasoning: TextSink,
        cancel: threading.Event | None = None,
    ) -> ModelReply:
        attempt = 0
        while True:
            try:
                return self._stream_once(messages, tools, on_text, on_reasoning, cancel)
            except _Retryable as problem:
                if attempt >= self._retry.retries:
                    raise self._gave_up(problem, attempt + 1) from None
                delay = self._retry.delay(attempt, problem.retry_after)
                log.warning("model request failed (%s); retry %d in %.1fs", problem, attempt + 1, delay)
                attempt += 1
                if wait_or_cancelled(delay, cancel):
                    raise ModelCancelled("cancelled while waiting to retry") from None

    def _gave_up(self, problem: _Retryable, attempts: int) -> ModelError:
        where = public_url(self.base_url)
        if isinstance(problem, _Unreadable):
            return ModelError(
                f"The model endpoint's reply could not be read ({problem}); gave up after {attempts} attempts. "
                f"Check that {where} is an OpenAI-compatible chat completions endpoint, and that nothing between "
                "it and Atelier (a proxy, a gateway) changes its replies."
            )
        return ModelError(
            f"The model endpoint kept failing ({problem}); gave up after {attempts} attempts. Check that {where} is up."
        )

    def _stream_once(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: TextSink,
        on_reasoning: TextSink,
        cancel: threading.Event | None,
    ) -> ModelReply:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = tools
        if self._temperature is not None:
            request["temperature"] = self._temperature
        if self._max_tokens is not None:
            request["max_tokens"] = self._max_tokens
        if self._extra_body:
            request.update(self._extra_body)  # as the package's extra_body does: top-level keys that win
        try:
            # The raw post sends the body as is. `chat.completions.create` would
            # re-walk every message against its typed schema on each call: about
            # 10 ms per step for a 40-message conversation, the largest cost of a step.
            stream = self._client.post(
                "/chat/completions",
                body=request,
                cast_to=ChatCompletion,
                stream=True,
                stream_cls=_ReusableStream,
            )
            return self._read_stream(stream, messages, tools, on_text, on_reasoning, cancel)
        except openai.APIStatusError as error:
            raise self._classify_status_error(error) from None
        except (openai.APIConnectionError, httpx2.TransportError) as error:
            refused = refused_in_chain(error)
            if refused is not None:
                raise ModelError(f"The model endpoint's address is not allowed: {refused}") from None
            too_large = find_cause(error, EndpointReplyTooLarge)
            if too_large is not None:
                raise ModelError(f"The model endpoint's reply was not read: {too_large}.") from None
            raise _Retryable(_describe_connection_error(error)) from None
        except openai.APIError:  # an error event inside the stream; its text is the endpoint's, not shown
            raise _Retryable("the endpoint reported an error in the middle of its reply") from None

    def _read_stream(
        self,
        stream: Any,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: TextSink,
        on_reasoning: TextSink,
        cancel: threading.Event | None,
    ) -> ModelReply:
        content: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage: Usage | None = None
        finish_reason: str | None = None
        chunks = 0
        with stream:
            for chunk in _readable_chunks(stream):
                chunks += 1
                if cancel is not None and cancel.is_set():
                    raise ModelCancelled("cancelled while the model was answering")
                if isinstance(chunk.usage, CompletionUsage):
                    usage = self._reported_usage(chunk.usage)
                for choice in chunk.choices:
                    delta = choice.delta
                    finish_reason = choice.finish_reason or finish_reason
                    thought = _reasoning_text(delta)
                    if thought:
                        reasoning.append(thought)
                        on_reasoning(thought)
                    if delta.content:
                        content.append(delta.content)
                        on_text(delta.content)
                    for piece in delta.tool_calls or ():
                        call = calls.setdefault(piece.index or 0, {"id": "", "name": "", "arguments": ""})
                        call["id"] = piece.id or call["id"]
                        if piece.function is not None:
                            call["name"] += piece.function.name or ""
                            call["arguments"] += piece.function.arguments or ""
        if chunks == 0:
            raise _Unreadable(NOT_A_STREAM)
        # A reply is whole once the model said why it stopped, or the stream said it ended: a body
        # that just stops (a proxy's timeout, a crashed server) holds half a reply.
        if finish_reason is None and not stream.ended:
            raise _Unreadable(CUT_OFF)
        text = "".join(content)
        tool_calls = [
            ToolCallRequest(call_id=call["id"], name=call["name"], arguments=call["arguments"])
            for _, call in sorted(calls.items())
        ]
        if usage is None:
            produced = text + "".join(reasoning) + "".join(c.name + c.arguments for c in tool_calls)
            usage = Usage(estimate_prompt_tokens(messages, tools), estimate_text_tokens(produced), estimated=True)
        return ModelReply(
            content=text,
            reasoning="".join(reasoning),
            tool_calls=tool_calls,
            usage=usage,
            finish_reason=finish_reason,
        )

    def _reported_usage(self, reported: Any) -> Usage:
        prompt, completion = reported.prompt_tokens, reported.completion_tokens
        usage = Usage.reported(prompt, completion, most=self._max_reported_tokens)
        if (usage.prompt_tokens, usage.completion_tokens) != (prompt or 0, completion or 0):
            log.warning(
                "%s reported a usage no reply can have (prompt %r, completion %r tokens); counted as %d and %d",
                public_url(self.base_url),
                str(prompt)[:40],
                str(completion)[:40],
                usage.prompt_tokens,
                usage.completion_tokens,
            )
        return usage

    def _classify_status_error(self, error: openai.APIStatusError) -> Exception:
        """Sort an HTTP error by its status. The endpoint's own text is read to
        recognise a too-long conversation but never repeated: it may echo the
        key or the request, and it ends up on a page for the whole workspace."""
        status = error.status_code
        lowered = _error_detail(error).lower()
        if status in (400, 413) and any(marker in lowered for marker in CONTEXT_OVERFLOW_MARKERS):
            return ContextOverflowError(f"the conversation is too long for the model (HTTP {status})")
        if status in RETRYABLE_STATUSES or status >= 500:
            return _Retryable(f"HTTP {status}", _retry_after(error))
        if status in (401, 403):
            return ModelError(
                f"The model endpoint refused the API key (HTTP {status}). Check the key registered for this model."
            )
        if status == 404 or ("model" in lowered and ("not found" in lowered or "does not exist" in lowered)):
            return ModelError(
                f"The model endpoint does not know model '{self.model}' at {public_url(self.base_url)} "
                f"(HTTP {status}). Check the base URL and the model name."
            )
        return ModelError(f"The model endpoint rejected the request (HTTP {status}).")


class _ReusableStream(openai.Stream[ChatCompletionChunk]):
    """The package's stream closes the response at [DONE] without reading the
    end of the chunked body, so the connection is dropped and every step pays
    a new TCP (and TLS) handshake. Reading the few bytes left first keeps the
    connection in the pool for the next step. `ended`: [DONE] came."""

    ended = False

    def _iter_events(self) -> Iterator[Any]:
        events = super()._iter_events()
        for event in events:
            if event.data.startswith("[DONE]"):
                self.ended = True
                for _rest in events:
                    pass
            yield event


def _readable_chunks(stream: Iterator[Any]) -> Iterator[ChatCompletionChunk]:
    """The stream's chunks, each checked to hold what the reader takes from it. The package
    builds them without validation (an event of the wrong shape becomes a half-empty object, or
    stays a list) and fails on one that is not JSON with Python's own error."""
    chunks = iter(stream)
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            return
        except ValueError:  # json.JSONDecodeError, or bytes that are not UTF-8
            raise _Unreadable(NOT_JSON) from None
        if not chunk_readable(chunk):
            raise _Unreadable(WRONG_SHAPE)
        yield chunk


def _reasoning_text(delta: Any) -> str:
    # vLLM and DeepSeek send `reasoning_content`, OpenRouter and others `reasoning`.
    extra = getattr(delta, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = getattr(delta, key, None) or extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _error_detail(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return (error.message or "no detail")[:500]


def _retry_after(error: openai.APIStatusError) -> float | None:
    raw = error.response.headers.get("retry-after")
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _describe_connection_error(error: Exception) -> str:
    if isinstance(error, openai.APITimeoutError | httpx2.TimeoutException):
        return "the request timed out"
    cause = error.__cause__ or error.__context__
    reason = f"{type(cause).__name__}: {cause}" if cause else str(error)
    return f"could not reach the endpoint ({reason})"
