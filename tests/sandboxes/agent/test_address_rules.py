"""The address rules for model endpoints, form by form: a metadata or link-local address
is refused however an IPv6 address carries it, ::/8's leftovers and site-local always, a
private address carried inside IPv6 as the private address it is; and the same answers on
every Python version, whose `ipaddress` judges some of these differently."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from sandboxes.agent import address_rules
from sandboxes.agent.address_rules import address_refusal, carried_ipv4
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

METADATA_IPV4 = ["169.254.169.254", "168.63.129.16", "100.100.100.200", "192.0.0.192", "169.254.0.1"]


def forms_of(ipv4: str) -> dict[str, str]:
    """Every way an IPv6 address may carry `ipv4` that these rules know."""
    value = int(ipaddress.IPv4Address(ipv4))
    high, low = value >> 16, value & 0xFFFF

    def v6(number: int) -> str:
        return str(ipaddress.IPv6Address(number))

    return {
        "itself": ipv4,
        "IPv4-mapped": f"::ffff:{ipv4}",
        "IPv4-mapped, in hex": f"::ffff:{high:x}:{low:x}",
        "IPv4-compatible": f"::{ipv4}",
        "IPv4-translated": f"::ffff:0:{ipv4}",
        "NAT64": f"64:ff9b::{ipv4}",
        "local NAT64, /96": f"64:ff9b:1::{ipv4}",
        "local NAT64, /48": v6(int(ipaddress.IPv6Address("64:ff9b:1::")) | high << 64 | low << 40),
        "local NAT64, /64": v6(int(ipaddress.IPv6Address("64:ff9b:1::")) | value << 24),
        "6to4": v6(int(ipaddress.IPv6Address("2002::")) | value << 80 | 1),
        "Teredo client": v6(int(ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf::")) | (~value & 0xFFFFFFFF)),
    }


def _table(ipv4s: list[str]) -> list[Any]:
    return [pytest.param(form, id=f"{ipv4} {name}") for ipv4 in ipv4s for name, form in forms_of(ipv4).items()]


@pytest.mark.parametrize("allow_private", [True, False], ids=["private allowed", "private refused"])
@pytest.mark.parametrize("address", [*_table(METADATA_IPV4), "fd00:ec2::254", "fe80::1", "fe80::a9fe:a9fe"])
def test_metadata_and_link_local_addresses_are_refused_in_every_form(address: str, allow_private: bool) -> None:
    refusal = address_refusal(ipaddress.ip_address(address), allow_private=allow_private)

    assert refusal is not None
    assert "link-local or cloud metadata address, which is never allowed" in refusal


@pytest.mark.parametrize("allow_private", [True, False], ids=["private allowed", "private refused"])
@pytest.mark.parametrize(
    ("address", "what"),
    [
        ("::", "reserved"),
        ("::1:0:0:1", "reserved"),
        ("ff::1", "reserved"),
        ("::ffff:1:0:0:1", "reserved"),
        ("fec0::1", "site-local"),
        ("feff:ffff::1", "site-local"),
        ("ff02::1", "multicast"),
        ("224.0.0.251", "multicast"),
        ("::ffff:239.1.2.3", "multicast"),
    ],
)
def test_reserved_site_local_and_multicast_addresses_are_refused_always(
    address: str, what: str, allow_private: bool
) -> None:
    refusal = address_refusal(ipaddress.ip_address(address), allow_private=allow_private)

    assert refusal is not None
    assert what in refusal
    assert "never allowed" in refusal


@pytest.mark.parametrize(
    "address",
    [
        *_table(["10.1.2.3", "127.0.0.1", "192.168.1.20", "172.16.5.4", "100.64.0.1"]),
        "::1",
        "fd12::1",
        "2001:db8::1",
        "3fff::1",
        "2002:808:808::1",  # 6to4, not globally reachable itself whatever it carries
        "64:ff9b:1::808:808",  # local-use NAT64
        "100::1",
    ],
)
def test_private_addresses_follow_the_setting_in_every_form(address: str) -> None:
    refused = address_refusal(ipaddress.ip_address(address), allow_private=False)

    assert refused is not None
    assert "private or loopback" in refused
    assert address_refusal(ipaddress.ip_address(address), allow_private=True) is None


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",  # what the kernel connects to is 8.8.8.8
        "64:ff9b::8.8.8.8",  # a NAT64 gateway's way to 8.8.8.8
    ],
)
def test_public_addresses_are_allowed_in_the_forms_that_reach_them(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address), allow_private=False) is None


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("::ffff:a9fe:a9fe", ["169.254.169.254"]),
        ("::ffff:0:a9fe:a9fe", ["169.254.169.254"]),
        ("::a9fe:a9fe", ["169.254.169.254"]),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"]),
        ("2002:a9fe:a9fe::", ["169.254.169.254"]),
        ("2001:0:4136:e378:8000:63bf:5601:5601", ["65.54.227.120", "169.254.169.254"]),
        ("::1", []),
        ("::", []),
        ("2001:4860:4860::8888", []),
    ],
)
def test_the_ipv4_address_each_form_carries(address: str, carried: list[str]) -> None:
    found = carried_ipv4(ipaddress.IPv6Address(address))
    assert [str(inner) for inner in found] == carried


@pytest.fixture
def ipaddress_verdicts_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ipaddress`'s own verdicts raise: the rules must not ask for them, since they differ
    between Python versions (is_private of ::ffff:10.0.0.1 changed in 3.13, say)."""

    def unavailable(self: object) -> bool:
        raise AssertionError("the rules consulted ipaddress's own verdict, which varies by Python version")

    verdicts = (
        "is_private",
        "is_global",
        "is_loopback",
        "is_link_local",
        "is_reserved",
        "is_multicast",
        "is_unspecified",
        "is_site_local",
        "ipv4_mapped",
        "sixtofour",
        "teredo",
    )
    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network, ipaddress.IPv6Network):
        for name in verdicts:
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, property(unavailable))


@pytest.mark.usefixtures("ipaddress_verdicts_unavailable")
@pytest.mark.parametrize(
    ("address", "allow_private", "allowed"),
    [
        ("::ffff:10.0.0.1", False, False),
        ("::ffff:10.0.0.1", True, True),
        ("::ffff:8.8.8.8", False, True),
        ("::ffff:169.254.169.254", True, False),
        ("::ffff:127.0.0.1", True, True),
        ("192.0.0.9", False, False),  # global per IANA since 2024 and Python 3.12.4; refused here alike
        ("2002:808:808::1", False, False),
        ("fec0::1", True, False),
        ("8.8.8.8", False, True),
    ],
)
def test_the_rules_decide_without_pythons_own_verdicts(address: str, allow_private: bool, allowed: bool) -> None:
    assert (address_refusal(ipaddress.ip_address(address), allow_private=allow_private) is None) is allowed


def test_the_rules_module_needs_nothing_but_the_standard_library() -> None:
    """So that it can be checked under any Python version without the platform installed."""
    source = address_rules.__file__
    with open(source, encoding="utf-8") as handle:
        imports = [line.split()[1] for line in handle if line.startswith(("import ", "from "))]
    assert set(imports) <= {"__future__", "ipaddress", "collections.abc"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "base_url",
    [
        "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
        "http://[64:ff9b::a9fe:a9fe]/v1",
        "http://[::169.254.169.254]/v1",
        "http://[::ffff:0:a9fe:a9fe]/v1",
        "http://[2002:a9fe:a9fe::1]/v1",
        "http://[64:ff9b:1::a9fe:a9fe]/v1",
        "http://[::ffff:100.100.100.200]/v1",
        "http://[fec0::1]/v1",
        "http://[ff::1]/v1",
    ],
)
def test_saving_an_endpoint_at_any_form_of_these_addresses_is_refused(team: Team, settings: Any, base_url: str) -> None:
    settings.MODEL_ENDPOINT_ALLOW_PRIVATE = True  # even where private addresses are allowed
    owner = Client()
    owner.force_login(team.owner)
    form = {"name": "Sneaky", "base_url": base_url, "model": "m", "api_key": "sk-0123456789abcdef"}

    response = owner.post(reverse("endpoint_new", args=[team.workspace.slug]), form)

    assert response.status_code == 400
    [error] = response.context["form"].errors["base_url"]
    assert "which is never allowed" in error
    assert not ModelEndpoint.objects.exists()
