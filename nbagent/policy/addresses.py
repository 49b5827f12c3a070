"""Which IP addresses WebFetch may reach without a rule: public ones only.

A URL's host can spell a local address in many ways: ``127.0.0.1``, ``127.1``,
``2130706433``, ``0x7f.1``, ``017700000001``, ``[::1]``, ``[::ffff:127.0.0.1]``,
``localhost.``. :func:`resolve` turns a host into the addresses a connection would go to
(literals in every spelling the C library's ``inet_aton`` accepts, names ending in
``localhost`` as loopback without asking DNS, other names with :func:`socket.getaddrinfo`),
and :func:`kind` says what an address is: ``public`` or why not (loopback, private, link-local,
...). IPv6 forms that carry an IPv4 address (IPv4-mapped ``::ffff:0:0/96``, NAT64
``64:ff9b::/96``, 6to4 ``2002::/16``) are judged by that IPv4 address.

>>> kind(literal("0x7f.1"))
'loopback'
>>> kind(literal("::ffff:169.254.169.254"))
'link-local'
>>> kind(literal("8.8.8.8"))
'public'
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

Address = IPv4Address | IPv6Address
"""An IP address."""

_PRIVATE_V4 = tuple(IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_SHARED_V4 = IPv4Network("100.64.0.0/10")
_UNIQUE_LOCAL_V6 = IPv6Network("fc00::/7")
_GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")
_NAT64_V6 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR_V6 = IPv6Network("2002::/16")
_THIS_NETWORK_V4 = IPv4Network("0.0.0.0/8")
_LOOPBACK = (IPv4Address("127.0.0.1"), IPv6Address("::1"))


def literal(host: str) -> Address | None:
    """Read a host as an IP address literal, in any spelling.

    IPv4 may be written as ``inet_aton`` reads it: one to four dot-separated parts, each
    decimal, octal (a leading ``0``) or hexadecimal (``0x``), the last part filling the bytes
    left (``127.1`` is 127.0.0.1, ``2130706433`` too); a trailing dot is ignored, as browsers
    ignore it. IPv6 may be in brackets and may carry a zone (``fe80::1%eth0``).

    Args:
        host: A URL's host.

    Returns:
        The address, or None when the host is a name.
    """
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in text:
        try:
            return IPv6Address(text)
        except ValueError:
            return None
    parts = text.removesuffix(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers: list[int] = []
    for part in parts:
        number = _number(part)
        if number is None:
            return None
        numbers.append(number)
    *head, last = numbers
    last_bits = 8 * (5 - len(numbers))
    if any(n > 255 for n in head) or last >= 1 << last_bits:
        return None
    value = 0
    for n in head:
        value = value << 8 | n
    return IPv4Address(value << last_bits | last)


def _number(part: str) -> int | None:
    """Read one part of an IPv4 literal: decimal, ``0``-led octal or ``0x``-led hex."""
    lower = part.lower()
    if lower.startswith("0x"):
        digits, base = lower[2:], 16
    elif len(lower) > 1 and lower.startswith("0"):
        digits, base = lower[1:], 8
    else:
        digits, base = lower, 10
    allowed = "0123456789abcdef"[:base]
    if not digits or any(c not in allowed for c in digits):
        return None
    return int(digits, base)


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64 or 6to4), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64_V6:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def kind(address: Address) -> str:
    """Say what an address is, for the decision and for the message.

    Args:
        address: The address.

    Returns:
        ``public``, or one of ``unspecified``, ``loopback``, ``link-local``, ``multicast``,
        ``private``, ``shared (carrier-grade NAT)``, ``unique-local``, ``reserved``.
    """
    if isinstance(address, IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return kind(embedded)
    if address.is_unspecified or address in _THIS_NETWORK_V4:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if any(address in network for network in _PRIVATE_V4):
        return "private"
    if address in _SHARED_V4:
        return "shared (carrier-grade NAT)"
    if address in _UNIQUE_LOCAL_V6:
        return "unique-local"
    if isinstance(address, IPv6Address) and address not in _GLOBAL_UNICAST_V6:
        return "reserved"
    if address.is_private or address.is_reserved or not address.is_global:
        return "reserved"
    return "public"


def is_public(address: Address) -> bool:
    """Tell whether an address is a public (globally routed unicast) one.

    Args:
        address: The address.
    """
    return kind(address) == "public"


def is_localhost_name(host: str) -> bool:
    """Tell whether a host name is ``localhost`` or ends in ``.localhost`` (RFC 6761).

    Args:
        host: A URL's host; case and one trailing dot do not matter.
    """
    name = host.lower().removesuffix(".")
    return name == "localhost" or name.endswith(".localhost")


def resolve(host: str, port: int) -> list[Address]:
    """Find the addresses a connection to ``host`` would go to.

    Args:
        host: A URL's host (an IDNA name in ASCII, or an address literal).
        port: The port, for :func:`socket.getaddrinfo`.

    Returns:
        The addresses, without repeats, in the resolver's order.

    Raises:
        OSError: The name does not resolve (:class:`socket.gaierror`).
    """
    address = literal(host)
    if address is not None:
        return [address]
    if is_localhost_name(host):
        return list(_LOOPBACK)
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ip_address(sockaddr[0]) for *_, sockaddr in found))
