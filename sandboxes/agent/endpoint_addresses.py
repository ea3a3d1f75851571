"""Which addresses a model endpoint may be reached at, checked where it matters:
on every connection, after DNS resolution.

Anyone who can register an endpoint makes the worker send HTTP requests for
them, so a base URL naming the cloud's metadata service, or a host name that
resolves to it, would hand them the machine's credentials. Link-local and
metadata addresses are therefore refused always, in every form an IPv6 address
may carry them. Loopback and private ranges are refused too unless the platform
allows them (a self-hosted vLLM on the LAN is a real need, and development runs
its models on loopback). The rules themselves are `address_rules`.

The check runs inside the HTTP client's connection step (`GuardedNetworkBackend`):
the address checked is the address connected to, so a name that resolves
elsewhere on the second lookup (DNS rebinding) or a redirect gains nothing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpcore2
import httpx2

from sandboxes.agent.address_rules import address_refusal
from sandboxes.agent.endpoint_deadline import DeadlineBoundStream, bounded

E = TypeVar("E", bound=BaseException)


def public_url(base_url: str) -> str:
    """The base URL as it may be shown: scheme, host, port and path, without
    credentials or a query string (some gateways take their key there)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class EndpointAddressRefused(Exception):
    """The endpoint's host is, or resolves to, an address the platform refuses."""


def check_resolved(host: str, addresses: Iterable[str], *, allow_private: bool) -> list[str]:
    """The addresses of `host` that may be used; refused if any of them may not
    (a name with one bad address is a name someone chose to point there)."""
    allowed: list[str] = []
    for raw in addresses:
        address = ipaddress.ip_address(raw.split("%", 1)[0])
        refusal = address_refusal(address, allow_private=allow_private)
        if refusal:
            raise EndpointAddressRefused(
                f"{host} is {refusal}." if _is_literal(host, address) else f"{host} resolves to {refusal}."
            )
        allowed.append(raw)
    if not allowed:
        raise EndpointAddressRefused(f"{host} has no address.")
    return allowed


def _is_literal(host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether `host` is `address` written out (::ffff:a9fe:a9fe resolves to ::ffff:169.254.169.254)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]) == address
    except ValueError:
        return False


def resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def check_base_url_host(base_url: str, *, allow_private: bool) -> None:
    """Resolve the base URL's host now and apply the rules (the form's early
    answer; connections are checked again when they are made)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError):
        return  # unknown names are the connection test's "unreachable", not a refusal
    check_resolved(host, addresses, allow_private=allow_private)


class GuardedNetworkBackend(httpcore2.SyncBackend):
    """Resolves the host itself, applies the rules, and connects to an address it checked; its
    connections end by the caller's overall deadline, if it set one (endpoint_deadline.py)."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        try:
            addresses = resolve(host, port)
        except OSError as error:
            raise httpcore2.ConnectError(f"cannot resolve {host}: {error}") from error
        try:
            allowed = check_resolved(host, addresses, allow_private=self.allow_private)
        except EndpointAddressRefused as refused:
            raise httpcore2.ConnectError(str(refused)) from refused
        last_error: Exception | None = None
        for address in allowed:
            try:
                connect_timeout = bounded(timeout, httpcore2.ConnectTimeout)
                stream = super().connect_tcp(address, port, connect_timeout, local_address, socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as error:
                last_error = error
            else:
                return DeadlineBoundStream(stream)
        assert last_error is not None
        raise last_error


def find_cause(error: BaseException, kind: type[E]) -> E | None:
    """The first exception of `kind` in the chain of causes behind `error`
    (HTTP clients wrap the error that matters a few times over)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def refused_in_chain(error: BaseException) -> EndpointAddressRefused | None:
    """The address refusal behind an HTTP client error, if that is what it was."""
    return find_cause(error, EndpointAddressRefused)


# The most one reply of a model endpoint may carry, read as it arrives. A model's
# streamed answer of a few thousand tokens is kilobytes; an endpoint that sends
# more is broken or hostile, and the web and worker processes must not hold it.
REPLY_MAX_BYTES = 32 * 1024 * 1024


class EndpointReplyTooLarge(httpx2.ReadError):
    """The endpoint's reply passed REPLY_MAX_BYTES; reading stopped there."""


class _CappedStream(httpx2.SyncByteStream):
    def __init__(self, stream: httpx2.SyncByteStream) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        limit, seen = REPLY_MAX_BYTES, 0
        for chunk in self._stream:
            seen += len(chunk)
            if seen > limit:
                raise EndpointReplyTooLarge(f"the endpoint's reply passed {limit // (1024 * 1024)} MiB")
            yield chunk

    def close(self) -> None:
        self._stream.close()


class GuardedTransport(httpx2.HTTPTransport):
    """Every connection through `GuardedNetworkBackend`, every reply read at most
    REPLY_MAX_BYTES (error bodies included, which the `openai` package reads whole).

    httpx builds its connection pool without a way to pass a network backend,
    so the pool is replaced by an equal one that has it. A transport given to
    the client also turns off proxies from the environment: behind a proxy the
    address connected to would be the proxy's, and the rules would check nothing."""

    def __init__(self, *, allow_private: bool, limits: httpx2.Limits) -> None:
        super().__init__(limits=limits)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedNetworkBackend(allow_private=allow_private),
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _CappedStream(response.stream)
        return response
