"""URL hosts as the rules see them: a URL's host, a ``domain:`` specifier's match, and hosts
that are plainly local (the addresses themselves are :mod:`nbagent.policy.addresses`')."""

from __future__ import annotations

from urllib.parse import urlsplit


def url_host(url: str) -> str:
    """Return a URL's host, normalised (empty when the URL has none or is malformed).

    Args:
        url: The URL.
    """
    try:
        return normal_host(urlsplit(url.strip()).hostname or "")
    except ValueError:
        return ""


def normal_host(host: str) -> str:
    """Return a host without brackets or a trailing dot, in lower case.

    Args:
        host: The host as written.
    """
    return host.strip().strip("[]").rstrip(".").lower()


def host_matches(host: str, spec: str) -> bool:
    """Tell whether a host matches a ``domain:`` specifier (``*.x.org``: its subdomains).

    Args:
        host: The URL's normalised host.
        spec: What follows ``domain:``.
    """
    wanted = normal_host(spec)
    if wanted.startswith("*."):
        return host.endswith(wanted[1:])
    return bool(host) and host == wanted


def private_literal(host: str) -> bool:
    """Tell whether a host is plainly local: ``localhost`` names or a non-public address
    literal in any spelling (names that resolve to one are caught when WebFetch connects).

    Args:
        host: The URL's normalised host.
    """
    from nbagent.policy import addresses

    if not host or addresses.is_localhost_name(host):
        return True
    address = addresses.literal(host)
    return address is not None and not addresses.is_public(address)
