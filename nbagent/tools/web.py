"""The WebFetch tool: a web page as text, bounded in size and time.

HTML becomes Markdown-ish text (:mod:`nbagent.tools.html_markdown`); other text types
(plain, JSON, XML, CSV, JavaScript) come back as they are; binary types are refused. Long
pages are paged with ``offset``. The HTTP client is ``httpx2`` (what ``anthropic`` uses).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from nbagent import __version__
from nbagent.errors import ToolError
from nbagent.tool import Tool, ToolResult, tool
from nbagent.tools.context import Limits, ToolContext
from nbagent.tools.html_markdown import html_to_markdown

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


def fetch(url: str, limits: Limits) -> Page:
    """GET a URL, following redirects, within the time and size limits.

    Args:
        url: An http or https URL.
        limits: ``web_timeout`` (whole transfer) and ``web_bytes``.

    Returns:
        The page.

    Raises:
        ToolError: The URL is not http(s), the transfer failed or took too long.
    """
    import httpx2

    if urlsplit(url).scheme not in ("http", "https"):
        raise ToolError(f"WebFetch fetches http and https URLs only, not {url!r}.")
    deadline = time.monotonic() + limits.web_timeout
    chunks: list[bytes] = []
    size = 0
    cut = False
    headers = {"User-Agent": _USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"}
    try:
        with (
            httpx2.Client(
                follow_redirects=True, timeout=limits.web_timeout, headers=headers
            ) as client,
            client.stream("GET", url) as response,
        ):
            for chunk in response.iter_bytes():
                if time.monotonic() > deadline:
                    raise httpx2.ReadTimeout("the whole transfer took too long")
                chunks.append(chunk)
                size += len(chunk)
                if size > limits.web_bytes:
                    cut = True
                    break
            media, _, params = response.headers.get("content-type", "").partition(";")
            charset = re.search(r"charset=\"?([^\";\s]+)", params)
            return Page(
                url=str(response.url),
                status=response.status_code,
                content_type=media.strip().lower(),
                charset=charset.group(1) if charset else None,
                body=b"".join(chunks)[: limits.web_bytes],
                cut=cut,
            )
    except httpx2.TimeoutException:
        raise ToolError(f"Fetching {url} took longer than {limits.web_timeout:g} s.") from None
    except httpx2.HTTPError as exc:
        raise ToolError(f"Could not fetch {url}: {exc}") from None


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
        converted = html_to_markdown(text, page.url)
        return converted.title, converted.text
    return "", text


def web_fetch_tool(context: ToolContext) -> Tool:
    """Build the WebFetch tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="WebFetch",
        read_only=True,
        should_defer=True,
        search_hint="web page url http download internet browse documentation",
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
        page = fetch(url, limits)
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
