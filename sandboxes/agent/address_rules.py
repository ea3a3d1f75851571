"""Which IP addresses a model endpoint may be connected to: the rules alone, for
`endpoint_addresses`, which applies them to every address a host resolves to.

Link-local, multicast, reserved and cloud metadata addresses are never allowed;
loopback, private and other addresses that are not globally reachable only when the
platform allows them; the rest is the public internet.

An IPv6 address may carry an IPv4 address that the kernel, a NAT64 gateway or a tunnel
reaches instead: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d),
IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48 at
any of its prefix lengths), 6to4 (2002::/16) and Teredo (2001::/32). Each is judged by
what it carries as well, so no form of 169.254.169.254 gets past the IPv4 rules.

Decided from the tables here, not from `ipaddress`'s is_private / is_global / is_loopback:
their answers differ between the Python versions the platform runs on (the special
ranges were revised in 3.11.10 and 3.12.4; 3.13 judges an IPv4-mapped address by the
address it carries, earlier versions do not).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(described: Iterable[tuple[str, str]]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(network), what) for network, what in described)


METADATA = "a link-local or cloud metadata address"
# Never a model server, whatever the platform allows: the machine's, the cloud's, or nobody's.
NEVER_ALLOWED = _networks(
    [
        ("169.254.0.0/16", METADATA),  # link-local, with the metadata service at 169.254.169.254
        ("168.63.129.16/32", METADATA),  # Azure's wireserver: a public-looking address that serves metadata
        ("100.100.100.200/32", METADATA),  # Alibaba Cloud's metadata service
        ("192.0.0.192/32", METADATA),  # Oracle Cloud's legacy metadata service
        ("fd00:ec2::254/128", METADATA),  # AWS's IPv6 metadata service
        ("fe80::/10", METADATA),  # IPv6 link-local
        ("224.0.0.0/4", "a multicast address"),
        ("ff00::/8", "a multicast address"),
        ("fec0::/10", "a site-local address (deprecated)"),
        # Reserved but for what is judged apart: ::1, and the forms carrying IPv4 (NAT64's among them).
        ("::/8", "a reserved address"),
    ]
)

# Not globally reachable (IANA's special-purpose registries): allowed only when the
# platform allows private addresses. IPv6 beyond these is global only inside 2000::/3.
NOT_GLOBAL_IPV4 = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",  # loopback
        "172.16.0.0/12",
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "240.0.0.0/4",  # reserved, and the broadcast address
    )
)
GLOBAL_UNICAST_IPV6 = ipaddress.IPv6Network("2000::/3")
NOT_GLOBAL_IPV6 = tuple(
    ipaddress.IPv6Network(network)
    for network in (
        "2001::/23",  # IETF protocol assignments, Teredo's 2001::/32 among them
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
    )
)

LOOPBACK_IPV6 = ipaddress.IPv6Address("::1")
# Forms that are only a way to write the IPv4 address they carry: judged by it alone.
MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
COMPATIBLE = ipaddress.IPv6Network("::/96")
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Forms that carry an IPv4 address somewhere: judged by it and by themselves.
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
TEREDO = ipaddress.IPv6Network("2001::/32")

NEVER_ALLOWED_REASON = "{what}, which is never allowed"
PRIVATE_REASON = "a private or loopback address, which this platform does not allow for model endpoints"


def _bits(value: int, first: int, last: int) -> int:
    """Bits `first`..`last` of a 128-bit value, counted from the most significant (0)."""
    return (value >> (127 - last)) & ((1 << (last - first + 1)) - 1)


def carries_all_of(address: ipaddress.IPv6Address) -> bool:
    """Whether `address` is only another way to write the IPv4 address it carries."""
    if address in MAPPED or address in TRANSLATED or address in NAT64:
        return True
    return address in COMPATIBLE and int(address) > 1  # :: and ::1 are not IPv4 addresses


def carried_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses `address` may reach instead of itself (none for most)."""
    value = int(address)
    if carries_all_of(address):
        return (ipaddress.IPv4Address(value & 0xFFFFFFFF),)
    if address in SIX_TO_FOUR:
        return (ipaddress.IPv4Address(_bits(value, 16, 47)),)
    if address in TEREDO:  # the Teredo server, and the client's address (stored inverted)
        return (ipaddress.IPv4Address(_bits(value, 32, 63)), ipaddress.IPv4Address(~value & 0xFFFFFFFF))
    if address in NAT64_LOCAL:
        # RFC 6052: where the IPv4 address sits depends on the prefix length the operator
        # chose (48, 56, 64 or 96 inside this /48), skipping bits 64..71; every reading counts.
        return tuple(
            ipaddress.IPv4Address(candidate)
            for candidate in (
                _bits(value, 48, 63) << 16 | _bits(value, 72, 87),
                _bits(value, 56, 63) << 24 | _bits(value, 72, 95),
                _bits(value, 72, 103),
                _bits(value, 96, 127),
            )
        )
    return ()


def _never_allowed(address: IPAddress) -> str | None:
    """What makes `address` one that is never allowed, if anything does."""
    if isinstance(address, ipaddress.IPv6Address) and (
        address == LOOPBACK_IPV6 or carries_all_of(address) or address in NAT64_LOCAL
    ):
        return None  # in ::/8, but judged as loopback, or by the IPv4 address it carries
    for network, what in NEVER_ALLOWED:
        if address.version == network.version and address in network:
            return what
    return None


def _globally_reachable(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in network for network in NOT_GLOBAL_IPV4)
    return address in GLOBAL_UNICAST_IPV6 and not any(address in network for network in NOT_GLOBAL_IPV6)


def address_refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why `address` may not be connected to, or None when it may."""
    carried = carried_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else ()
    what = _never_allowed(address)
    if what is not None:
        return NEVER_ALLOWED_REASON.format(what=what)
    for inner in carried:
        what = _never_allowed(inner)
        if what is not None:
            return f"an address carrying {inner}, " + NEVER_ALLOWED_REASON.format(what=what)
    if allow_private:
        return None
    transparent = isinstance(address, ipaddress.IPv6Address) and carries_all_of(address)
    if not transparent and not _globally_reachable(address):
        return PRIVATE_REASON
    for inner in carried:
        if not _globally_reachable(inner):
            return f"an address carrying {inner}, " + PRIVATE_REASON
    return None
