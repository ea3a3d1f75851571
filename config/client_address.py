"""Where a request comes from, as every per-address limit counts it (sign-ups, logins, password
resets, submissions, failed API tokens, live run sockets and event streams).

Behind a reverse proxy the connection's peer is the proxy, and the client is in
`X-Forwarded-For`, to which each proxy appends the address it got the request from. Anything a
client writes there itself comes first, so only the right end of the header can be believed, and
only as far as the proxies in `TRUSTED_PROXIES` wrote it: from the peer leftwards, the first
address that is not a trusted proxy is the client. With `TRUSTED_PROXIES` empty the header is
never read and the peer is the client.

One IPv6 home or host gets a whole /64, so an IPv6 client is counted as its /64: one of its 2^64
addresses per request would otherwise be a fresh count each time.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:  # the settings import this module for `parse_networks`, before Django is set up
    from django.http import HttpRequest

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPV6_COUNTED_PREFIX = 64
# A peer that is no IP address (a Unix socket): all such clients share one count.
UNKNOWN = "0.0.0.0"  # noqa: S104 - a placeholder address, never bound


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """`TRUSTED_PROXIES` as networks ("10.0.0.0/8", "192.0.2.7", "2001:db8::/32"); ValueError
    naming the first that is none."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or network") from None
    return tuple(networks)


@functools.lru_cache(maxsize=8)
def _trusted(values: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return parse_networks(values)


def _address(text: str | None) -> IPAddress | None:
    """An address as a header or a server writes it: bare, `[v6]:port` or `v4:port`."""
    text = (text or "").strip().strip('"')
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_address(peer: str | None, forwarded_for: Iterable[str], trusted: Iterable[str] = ()) -> str:
    """The client's address, as limits count it: the rightmost hop that is not a trusted proxy,
    an IPv6 address as its /64 (the network's first address, so it reads as an address)."""
    networks = _trusted(tuple(trusted))
    current = _address(peer)
    if current is None:
        return UNKNOWN
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    for hop in reversed(hops):
        if not any(current in network for network in networks):
            break
        previous = _address(hop)
        if previous is None:  # a trusted proxy passed on something that is no address: stop at the proxy
            break
        current = previous
    if isinstance(current, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((current, IPV6_COUNTED_PREFIX), strict=False).network_address)
    return str(current)


def address_of_request(request: HttpRequest) -> str:
    """A page's or an API call's client (django-ratelimit's `RATELIMIT_IP_META_KEY` too)."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    return client_address(request.META.get("REMOTE_ADDR"), [forwarded] if forwarded else [], settings.TRUSTED_PROXIES)


def address_of_scope(scope: Mapping[str, Any]) -> str:
    """A websocket's client, from its ASGI scope (the peer, and the headers as sent)."""
    peer = (scope.get("client") or (None, 0))[0]
    forwarded = [
        value.decode("latin-1") for name, value in scope.get("headers") or () if name.lower() == b"x-forwarded-for"
    ]
    return client_address(peer, forwarded, settings.TRUSTED_PROXIES)
