"""The address classifier behind WebFetch: every spelling of a local address is not public."""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.policy.addresses import is_localhost_name, is_public, kind, literal, resolve

NON_PUBLIC_V4 = {
    "0.0.0.0/8": "unspecified",
    "10.0.0.0/8": "private",
    "100.64.0.0/10": "shared (carrier-grade NAT)",
    "127.0.0.0/8": "loopback",
    "169.254.0.0/16": "link-local",
    "172.16.0.0/12": "private",
    "192.168.0.0/16": "private",
    "192.0.2.0/24": "reserved",
    "198.18.0.0/15": "reserved",
    "224.0.0.0/4": "multicast",
    "240.0.0.0/4": "reserved",
}
NON_PUBLIC_V6 = {
    "::/128": "unspecified",
    "::1/128": "loopback",
    "::/96": "reserved",
    "fc00::/7": "unique-local",
    "fe80::/10": "link-local",
    "fec0::/10": "reserved",
    "ff00::/8": "multicast",
    "2001:db8::/32": "reserved",
    "64:ff9b:1::/48": "reserved",
}


def in_network(network: IPv4Network | IPv6Network) -> st.SearchStrategy[Any]:
    """Addresses of one network."""
    first = int(network.network_address)
    return st.integers(first, first + network.num_addresses - 1).map(type(network.network_address))


non_public_v4 = st.sampled_from(sorted(NON_PUBLIC_V4)).flatmap(
    lambda net: in_network(IPv4Network(net))
)
non_public_v6 = st.sampled_from(sorted(NON_PUBLIC_V6)).flatmap(
    lambda net: in_network(IPv6Network(net))
)


@st.composite
def ipv4_spelling(draw: st.DrawFn, address: IPv4Address, trailing_dot: bool = True) -> str:
    """One way ``inet_aton`` (and so the resolver) reads ``address``: 1-4 parts, each in
    decimal, octal or hex, the last filling the bytes left."""
    count = draw(st.integers(1, 4))
    value = int(address)
    last_bits = 8 * (5 - count)
    parts = [(value >> (last_bits + 8 * i)) & 0xFF for i in reversed(range(count - 1))]
    parts.append(value & ((1 << last_bits) - 1))
    texts = []
    for part in parts:
        radix = draw(st.sampled_from(["dec", "oct", "hex", "HEX"]))
        texts.append(
            {"dec": str(part), "oct": f"0{part:o}", "hex": f"0x{part:x}", "HEX": f"0X{part:X}"}[
                radix
            ]
        )
    return ".".join(texts) + (draw(st.sampled_from(["", "."])) if trailing_dot else "")


@st.composite
def ipv6_spelling(draw: st.DrawFn, address: IPv6Address) -> str:
    """One way to write ``address`` in a URL's host: compressed or not, any case, bracketed."""
    text = draw(st.sampled_from([address.compressed, address.exploded]))
    text = draw(st.sampled_from([text, text.upper()]))
    return draw(st.sampled_from([text, f"[{text}]"]))


@given(non_public_v4.flatmap(lambda a: st.tuples(st.just(a), ipv4_spelling(a))))
def test_every_spelling_of_a_non_public_ipv4_address_is_not_public(
    case: tuple[IPv4Address, str],
) -> None:
    address, spelling = case
    assert literal(spelling) == address
    assert not is_public(literal(spelling))  # type: ignore[arg-type]


@given(st.integers(0, 2**32 - 1).map(IPv4Address).flatmap(lambda a: ipv4_spelling(a, False)))
def test_the_ipv4_spellings_mean_what_the_c_library_says(spelling: str) -> None:
    assert literal(spelling) == IPv4Address(socket.inet_aton(spelling))


@given(non_public_v6.flatmap(lambda a: st.tuples(st.just(a), ipv6_spelling(a))))
def test_every_spelling_of_a_non_public_ipv6_address_is_not_public(
    case: tuple[IPv6Address, str],
) -> None:
    address, spelling = case
    assert literal(spelling) == address
    assert not is_public(address)


@given(st.integers(0, 2**32 - 1).map(IPv4Address))
def test_ipv6_forms_of_an_ipv4_address_are_judged_by_it(address: IPv4Address) -> None:
    value = int(address)
    mapped = IPv6Address(0xFFFF << 32 | value)
    nat64 = IPv6Address(int(IPv6Address("64:ff9b::")) | value)
    six_to_four = IPv6Address(0x2002 << 112 | value << 80)
    assert kind(mapped) == kind(nat64) == kind(six_to_four) == kind(address)
    assert literal(f"[::ffff:{address}]") == mapped


@given(non_public_v4)
def test_non_public_ipv4_in_ipv6_forms_is_not_public(address: IPv4Address) -> None:
    for spelling in (f"::ffff:{address}", f"[::FFFF:{address}]", f"64:ff9b::{address}"):
        assert not is_public(literal(spelling))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "loopback"),
        ("2130706433", "loopback"),
        ("0x7f.1", "loopback"),
        ("127.1", "loopback"),
        ("0177.0.0.1", "loopback"),
        ("017700000001", "loopback"),
        ("0x7F000001", "loopback"),
        ("127.0.0.1.", "loopback"),
        ("[::1]", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("[::ffff:7f00:1]", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("0", "unspecified"),
        ("::", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.31.255.255", "private"),
        ("192.168.0.1", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("169.254.169.254", "link-local"),
        ("[fd00:ec2::254]", "unique-local"),
        ("fe80::1%eth0", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "reserved"),
        ("::127.0.0.1", "reserved"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2002:a9fe:a9fe::", "link-local"),
        ("8.8.8.8", "public"),
        ("1.1.1.1", "public"),
        ("0x08080808", "public"),
        ("2606:4700:4700::1111", "public"),
        ("::ffff:8.8.8.8", "public"),
        ("64:ff9b::808:808", "public"),
        ("2002:808:808::", "public"),
    ],
)
def test_kinds(host: str, expected: str) -> None:
    address = literal(host)
    assert address is not None and kind(address) == expected
    assert is_public(address) == (expected == "public")


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "localhost",
        "1.2.3.4.5",
        "1.2.3.256",
        "08.1.1.1",
        "0x100.1",
        "1..2",
        "",
        "[x]",
    ],
)
def test_names_are_not_literals(host: str) -> None:
    assert literal(host) is None


def test_localhost_names() -> None:
    for host in ("localhost", "LOCALHOST", "localhost.", "app.localhost", "a.b.localhost."):
        assert is_localhost_name(host)
    for host in ("localhost.example.com", "notlocalhost", "example.com"):
        assert not is_localhost_name(host)


def test_resolve_reads_literals_and_localhost_without_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dns(*args: object, **kwargs: object) -> list[Any]:
        raise AssertionError(f"DNS asked for {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    assert resolve("0x7f.1", 80) == [IPv4Address("127.0.0.1")]
    assert resolve("::1", 80) == [IPv6Address("::1")]
    assert resolve("localhost.", 80) == [IPv4Address("127.0.0.1"), IPv6Address("::1")]


def test_resolve_asks_the_resolver_for_names(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[object, ...]] = []

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list[Any]:
        asked.append((host, port))
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::1%eth0", port, 0, 2)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    found = resolve("example.com", 443)
    assert found == [IPv4Address("93.184.215.14"), IPv6Address("fe80::1%eth0")]
    assert [kind(a) for a in found] == ["public", "link-local"]
    assert asked == [("example.com", 443)]
