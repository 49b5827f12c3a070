"""The WebFetch tool: a web page as text, bounded in size and time, from public addresses.

HTML becomes Markdown-ish text (:mod:`nbagent.tools.web.html_markdown`); other text types
(plain, JSON, XML, CSV, JavaScript) come back as they are; binary types are refused. Long
pages are paged with ``offset``. The HTTP client is ``httpx2`` (what ``anthropic`` uses).

The local network is out of reach, so that a prompt-injected model cannot send what it read
to a server on the user's machine or network, nor read cloud metadata: before each request
the host is resolved once (:func:`nbagent.policy.addresses.resolve`) and every address it
gives is checked; if any is not public (loopback, private, link-local, multicast, ...: see
:func:`nbagent.policy.addresses.kind`) the call is refused, unless the permission policy's
``names_host`` says an allow rule names the host (``WebFetch(domain:127.0.0.1)``).

Pinning. The connection then goes to the checked addresses and nowhere else: the client's
connection pool is an ``httpcore2.ConnectionPool`` whose network backend
(:class:`_PinnedBackend`) connects to the addresses checked for the request's host and port,
in turn, and refuses any host it was not given; there is no second DNS lookup for a
rebinding DNS server to answer differently. The URL is left as it is, so the ``Host`` header,
TLS SNI and the certificate check are all made for the real host name by httpx2 itself.
(``httpx2.HTTPTransport`` takes no network backend, so its private ``_pool`` is replaced by
one that has; ``extensions={"sni_hostname": ...}`` with an address in the URL would have
worked too, but would pin one address only and rewrite the URL and Host header by hand.)

Proxies. None: the client is built with ``trust_env=False`` and its own transport, so
``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY`` are ignored (a proxy resolves and connects
itself, past the check). ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` still name the certificates
trusted.

Redirects. Not followed by the client: WebFetch follows a redirect to the same origin (or
from http to https on the same host and default ports) itself, checking the new address,
up to :data:`MAX_REDIRECTS` times; a redirect elsewhere comes back to the model as
``REDIRECT DETECTED`` with the URL to fetch next, so that the permission policy judges the
new host, as in Claude Code.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.core.version import __version__
from nbagent.policy.addresses import Address, kind, resolve
from nbagent.tools.context import Limits, ToolContext

if TYPE_CHECKING:
    import httpcore2
    import httpx2

_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ld+json",
    "application/xhtml+xml",
    "application/rss+xml",
    "application/atom+xml",
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_USER_AGENT = f"nbagent/{__version__} (WebFetch)"
_DEFAULT_PORTS = {"http": 80, "https": 443}

MAX_REDIRECTS = 10
"""Redirects within one origin WebFetch follows in one call."""


@dataclass(frozen=True)
class Page:
    """A fetched page."""

    url: str
    """The URL after redirects."""
    status: int
    """The HTTP status."""
    content_type: str
    """The media type, lower case, without parameters."""
    charset: str | None
    """The charset the server named, if any."""
    body: bytes
    """The body, up to the size cap."""
    cut: bool
    """The body was longer than the cap."""
    redirect: str | None = None
    """The URL on another origin the page redirects to (not followed), or None."""


class _PinnedBackend:
    """The httpcore2 network backend of WebFetch's client: it connects to checked addresses only.

    It has the one method of ``httpcore2.NetworkBackend`` a connection pool without retries,
    proxy or Unix socket calls.
    """

    def __init__(self) -> None:
        self.pins: dict[tuple[str, int], list[Address]] = {}
        """(host, port), as httpcore2 names an origin, -> the addresses checked for it."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> httpcore2.NetworkStream:
        """Connect to the addresses pinned for ``host`` and ``port``, in turn.

        Args:
            host: The URL's host (an IDNA name in ASCII, or an address literal).
            port: The port.
            timeout: Seconds for all the attempts together.
            local_address: The local address to connect from, if any.
            socket_options: Socket options to set.

        Returns:
            The stream of the first address that answers.

        Raises:
            httpcore2.ConnectError: No address was checked for the host and port, or none
                answers.
            httpcore2.ConnectTimeout: The last address did not answer in time.
        """
        import httpcore2

        addresses = self.pins.get((host, port))
        if not addresses:
            raise httpcore2.ConnectError(f"{host}:{port} was not checked before connecting.")
        each = None if timeout is None else timeout / len(addresses)
        failures: list[httpcore2.ConnectError | httpcore2.ConnectTimeout] = []
        for address in addresses:
            try:
                return httpcore2.SyncBackend().connect_tcp(
                    str(address), port, each, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failures.append(exc)
        raise failures[-1]


def _client(backend: _PinnedBackend, timeout: float) -> httpx2.Client:
    """An httpx2 client that connects through ``backend`` only, never through a proxy."""
    import httpcore2
    import httpx2

    ssl_context = httpx2.create_ssl_context()
    transport = httpx2.HTTPTransport(verify=ssl_context)
    transport._pool = httpcore2.ConnectionPool(ssl_context=ssl_context, network_backend=backend)
    headers = {"User-Agent": _USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"}
    return httpx2.Client(transport=transport, trust_env=False, timeout=timeout, headers=headers)


def _origin(url: httpx2.URL) -> tuple[str, int]:
    """A URL's host (IDNA ASCII or address literal) and port, as httpcore2 connects to them."""
    return url.raw_host.decode("ascii"), url.port or _DEFAULT_PORTS[url.scheme]


def _checked(url: httpx2.URL, names_host: Callable[[str], bool]) -> list[Address]:
    """Resolve a URL's host and check that every address is public, or the host named.

    Raises:
        ToolError: The host does not resolve, or an address is not public and no rule names
            the host.
    """
    host = url.host.removesuffix(".")
    try:
        addresses = resolve(*_origin(url))
    except OSError as exc:
        raise ToolError(f"Could not fetch {url}: {url.host} does not resolve ({exc}).") from None
    for address in addresses:
        what = kind(address)
        if what != "public" and not names_host(host):
            where = f"{host} is {address}, which" if str(address) != host else host
            raise ToolError(
                f"WebFetch did not fetch {url}: {where} is not a public address ({what}), and "
                "WebFetch reaches the local network only where an allow rule names the host. "
                f"To allow it, the user can add 'WebFetch(domain:{host})' to "
                "c.NbAgent.allow_rules."
            )
    return addresses


def _same_origin(source: httpx2.URL, target: httpx2.URL) -> bool:
    """Tell whether a redirect stays on the source's origin, or goes from http to https on the
    same host and default ports."""
    if target.raw_host != source.raw_host:
        return False
    if target.scheme == source.scheme:
        return target.port == source.port
    return (
        (source.scheme, target.scheme) == ("http", "https") and not source.port and not target.port
    )


def fetch(url: str, limits: Limits, names_host: Callable[[str], bool]) -> Page:
    """GET a URL from a public address, within the time and size limits.

    Redirects within the origin (and from http to https on the same host) are followed, each
    new address checked, up to :data:`MAX_REDIRECTS`; a redirect to another origin is not:
    the page returned has its URL in ``redirect``.

    Args:
        url: An http or https URL.
        limits: ``web_timeout`` (the whole call) and ``web_bytes``.
        names_host: Tells whether an allow rule names a host, which lets WebFetch reach it
            at a non-public address.

    Returns:
        The page.

    Raises:
        ToolError: The URL is not http(s), its host is not public and not named, the transfer
            failed or took too long, or the page redirects too often.
    """
    import httpx2

    try:
        current = httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise ToolError(f"Could not fetch {url}: {exc}") from None
    if current.scheme not in _DEFAULT_PORTS or not current.host:
        raise ToolError(f"WebFetch fetches http and https URLs only, not {url!r}.")
    deadline = time.monotonic() + limits.web_timeout
    backend = _PinnedBackend()
    try:
        with _client(backend, limits.web_timeout) as client:
            for _ in range(MAX_REDIRECTS + 1):
                backend.pins[_origin(current)] = _checked(current, names_host)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise httpx2.ReadTimeout("the whole transfer took too long")
                with client.stream("GET", current, timeout=left) as response:
                    if not response.has_redirect_location:
                        return _read(response, deadline, limits.web_bytes)
                    if response.next_request is None:
                        raise ToolError(
                            f"{current} redirects to an invalid URL: "
                            f"{response.headers['location']!r}."
                        )
                    target = response.next_request.url
                    if not _same_origin(current, target):
                        return Page(
                            url=str(current),
                            status=response.status_code,
                            content_type="",
                            charset=None,
                            body=b"",
                            cut=False,
                            redirect=str(target),
                        )
                    current = target
            raise ToolError(f"{url} redirects more than {MAX_REDIRECTS} times.")
    except httpx2.TimeoutException:
        raise ToolError(f"Fetching {url} took longer than {limits.web_timeout:g} s.") from None
    except httpx2.HTTPError as exc:
        raise ToolError(f"Could not fetch {url}: {exc}") from None


def _read(response: httpx2.Response, deadline: float, cap: int) -> Page:
    """Read a response's body up to ``cap`` bytes, by the deadline.

    Raises:
        httpx2.ReadTimeout: The deadline passed.
    """
    import httpx2

    chunks: list[bytes] = []
    size = 0
    cut = False
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise httpx2.ReadTimeout("the whole transfer took too long")
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            cut = True
            break
    media, _, params = response.headers.get("content-type", "").partition(";")
    charset = re.search(r"charset=\"?([^\";\s]+)", params)
    return Page(
        url=str(response.url),
        status=response.status_code,
        content_type=media.strip().lower(),
        charset=charset.group(1) if charset else None,
        body=b"".join(chunks)[:cap],
        cut=cut,
    )


def page_text(page: Page) -> tuple[str, str]:
    """Turn a page into ``(title, text)``.

    Args:
        page: The page.

    Raises:
        ToolError: The page is not text.
    """
    kind = page.content_type
    is_html = kind in ("text/html", "application/xhtml+xml") or (
        not kind and page.body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    )
    if not (is_html or kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith("+json")):
        raise ToolError(
            f"{page.url} is {kind or 'of no stated type'}, not text: WebFetch returns web "
            "pages and text only. Download it with Bash (curl) to work with it."
        )
    charset = page.charset
    if charset is None and is_html:
        meta = _META_CHARSET.search(page.body[:4096])
        charset = meta.group(1).decode("ascii") if meta else None
    try:
        text = page.body.decode(charset or "utf-8", "replace")
    except LookupError:
        text = page.body.decode("utf-8", "replace")
    if is_html:
        from nbagent.tools.web.html_markdown import html_to_markdown  # html.parser, at first use

        converted = html_to_markdown(text, page.url)
        return converted.title, converted.text
    return "", text


def web_fetch_tool(context: ToolContext) -> Tool:
    """Build the WebFetch tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    def names_host(host: str) -> bool:
        named = getattr(context.policy(), "names_host", None)
        return named is not None and bool(named(host))

    @tool(
        name="WebFetch",
        read_only=True,
        should_defer=True,
        search_hint="web page url http download internet browse documentation",
        touches=lambda i: [Touch("fetch", i.get("url") or "")],
    )
    def web_fetch(url: str, offset: int = 0) -> ToolResult:
        """Fetch a web page and return it as text; HTML is converted to Markdown.

        Long pages come back in parts: call again with the `offset` the answer names.

        Args:
            url: The http or https URL.
            offset: Characters of the page's text to skip (to read on).
        """
        if offset < 0:
            raise ToolError("offset must be 0 or more.")
        page = fetch(url, limits, names_host)
        if page.redirect:
            return ToolResult(
                f"REDIRECT DETECTED: the page at {page.url} redirects to {page.redirect}. "
                "To read it, call WebFetch again with that URL.",
                metadata={"summary": f"redirects to {page.redirect}"},
            )
        if page.status >= 400:
            try:
                _, text = page_text(page)
            except ToolError:
                text = ""
            detail = f"\n{text[:500]}" if text.strip() else ""
            raise ToolError(f"{page.url} answered HTTP {page.status}.{detail}")
        title, text = page_text(page)
        lines = [f"URL: {page.url}" + (f" (redirected from {url})" if page.url != url else "")]
        if title:
            lines.append(f"Title: {title}")
        end = min(len(text), offset + limits.output_chars)
        if offset and offset >= len(text):
            raise ToolError(
                f"offset {offset} is past the end of the text ({len(text):,} characters)."
            )
        body = text[offset:end]
        lines += ["", body or "(The page has no text.)"]
        said = f"{len(text):,} characters" if text else "no text"
        if offset or end < len(text):
            more = f" Call again with offset={end} for more." if end < len(text) else ""
            lines.append(f"\n[Characters {offset:,}-{end:,} of {len(text):,}.{more}]")
            said = f"characters {offset:,}-{end:,} of {len(text):,}"
        if page.cut:
            lines.append(
                f"[The download stopped at {limits.web_bytes:,} bytes: the rest of the page "
                "is missing.]"
            )
            said += ", download cut"
        return ToolResult("\n".join(lines), metadata={"summary": said})

    return web_fetch
