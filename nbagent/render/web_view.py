"""How web search shows in a transcript: the card of a search, and an answer's citations.

A search's card lists its pages (title, site, link); an answer that cites pages gets a
numbered marker after each cited passage, linking to the page, and its sources under it.
Every text from the web goes out through :mod:`nbagent.core.markup` (escaped), and only ``http``
and ``https`` addresses become links: any other address shows as text. Pure Python: no
IPython, no widgets.

>>> page = Citation("https://a.org/x", "A <b>page</b>", "a is so")
>>> marks = [Mark(8, Source(1, page), "a is so")]
>>> citation_inserts(marks)
[(8, '<sup><a href="https://a.org/x" title="a is so" target="_blank" \
rel="noopener noreferrer">[1]</a></sup>')]
>>> sources_html(marks).split("<br>")[1]
'[1] <a href="https://a.org/x" target="_blank" rel="noopener noreferrer">A &lt;b&gt;page&lt;/b&gt;\
</a> · a.org</p>'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from nbagent.core.events import Citation, WebPage, WebSearched
from nbagent.core.markup import NO_MATH, escape_html, web_link
from nbagent.core.text import cut, one_line

ERROR_TEXTS = {
    "max_uses_exceeded": "the searches one request may make were used up (raise "
    "c.NbAgent.web_search max_uses for more)",
    "too_many_requests": "too many searches at once (the API's rate limit); try again shortly",
    "invalid_tool_input": "the API refused the query as invalid; ask in other words",
    "query_too_long": "the query is longer than the API takes; ask for a shorter search",
    "unavailable": "web search is unavailable right now; try again later",
    "request_too_large": "the request is too large for a web search; %agent compact, then ask "
    "again",
}
"""What each ``error_code`` of a failed web search means, and what to do, in a few words."""

TITLE_CHARS = 120
"""The most characters of a page's title shown."""

QUOTE_CHARS = 200
"""The most characters of a cited passage shown when a marker is hovered."""


@dataclass(frozen=True)
class Source:
    """A cited page and its number in the transcript (the same page keeps its number)."""

    number: int
    """Its number, from 1."""
    citation: Citation
    """The page, and the words first cited from it."""


@dataclass(frozen=True)
class Mark:
    """A citation marker in an answer: after which character, which source, which words."""

    end: int
    """The length of the answer's text when the cited passage ended."""
    source: Source
    """The source cited."""
    cited_text: str = ""
    """The words of the page this passage cites."""


def site(url: str) -> str:
    """The site of an address, as a person reads it: its host without ``www.``.

    Args:
        url: An address.

    Returns:
        E.g. ``docs.python.org``; empty for an address without a host.
    """
    host = urlsplit(url.strip()).hostname or ""
    return host.removeprefix("www.")


def web_summary(search: WebSearched) -> str:
    """What a web search found, in a few words.

    Args:
        search: The search.

    Returns:
        E.g. ``3 results: docs.python.org, peps.python.org``, ``no result``, or what went
        wrong (``failed: too many searches at once …``).
    """
    if search.error:
        return f"failed: {ERROR_TEXTS.get(search.error, search.error)}"
    if not search.pages:
        return "no result"
    sites = ", ".join(dict.fromkeys(site(p.url) or p.url for p in search.pages))
    count = f"{len(search.pages)} result{'s' if len(search.pages) > 1 else ''}"
    return cut(f"{count}: {sites}", 80)


def pages_text(search: WebSearched) -> str:
    """A search's pages as text, a line each (a terminal, the card's raw result).

    Args:
        search: The search.

    Returns:
        E.g. ``1. What's New In Python 3.14 · https://docs.python.org/…``.
    """
    if search.error:
        return web_summary(search)
    return "\n".join(
        f"{n}. {cut(p.title, TITLE_CHARS) or site(p.url)} · {p.url}"
        for n, p in enumerate(search.pages, 1)
    )


def pages_html(search: WebSearched) -> str:
    """A search's pages as a list of links: title, site and age.

    Args:
        search: The search.

    Returns:
        The HTML (every text escaped; a page whose address is no web link shows it as text);
        for a failed search, what went wrong and what to do, in full (the card's line may be
        cut); empty when there is no page.
    """
    if search.error:
        return f'<p class="nbagent-web-error">{escape_html(web_summary(search))}</p>'
    if not search.pages:
        return ""
    items = "".join(f"<li>{_page_html(page)}</li>" for page in search.pages)
    return f'<ol class="nbagent-web {NO_MATH}">{items}</ol>'


def _page_html(page: WebPage) -> str:
    """One page of a search as HTML."""
    title = escape_html(cut(page.title, TITLE_CHARS) or site(page.url) or page.url)
    href = web_link(page.url)
    shown = (
        f'<a href="{escape_html(href)}" target="_blank" rel="noopener noreferrer">{title}</a>'
        if href
        else f"{title} <code>{escape_html(page.url)}</code>"
    )
    details = [site(page.url), page.page_age]
    notes = " · ".join(escape_html(d) for d in details if d)
    return f'{shown} <span class="nbagent-site">· {notes}</span>' if notes else shown


def citation_inserts(marks: Sequence[Mark]) -> list[tuple[int, str]]:
    """The markers of an answer's citations, for :func:`~nbagent.core.markup.model_html`.

    Args:
        marks: Its citation markers, in the order they came.

    Returns:
        Where each goes in the answer's text, and its HTML: the source's number, linking to
        its page, the cited words on hover (``<sup><a href="https://…">[1]</a></sup>``).
    """
    return [(end, "".join(_marker_html(m) for m in group)) for end, group in _grouped(marks)]


def cited_text(text: str, marks: Sequence[Mark]) -> str:
    """An answer's text with `` [1]`` after each passage that cites a page (a terminal).

    Args:
        text: The answer's text.
        marks: Its citation markers.

    Returns:
        The text.
    """
    return _with_markers(text, marks, lambda m: f" [{m.source.number}]")


def _with_markers(text: str, marks: Sequence[Mark], render: Callable[[Mark], str]) -> str:
    """Insert the rendering of each marker at its place in the text."""
    parts, start = [], 0
    for end, group in _grouped(marks):
        parts += [text[start:end], "".join(render(m) for m in group)]
        start = end
    return "".join([*parts, text[start:]])


def _grouped(marks: Sequence[Mark]) -> list[tuple[int, list[Mark]]]:
    """The markers by place, each source once a place, places in order."""
    places: dict[int, dict[int, Mark]] = {}
    for mark in marks:
        places.setdefault(mark.end, {}).setdefault(mark.source.number, mark)
    return [(end, list(group.values())) for end, group in sorted(places.items())]


def _marker_html(mark: Mark) -> str:
    """One marker: the source's number, linking to its page, the cited words on hover."""
    number = mark.source.number
    href = web_link(mark.source.citation.url)
    if href is None:
        return f"<sup>[{number}]</sup>"
    hover = escape_html(one_line(mark.cited_text, QUOTE_CHARS))
    return (
        f'<sup><a href="{escape_html(href)}" title="{hover}" target="_blank" '
        f'rel="noopener noreferrer">[{number}]</a></sup>'
    )


def sources(marks: Sequence[Mark]) -> list[Source]:
    """The sources an answer cites, each once, by number.

    Args:
        marks: Its citation markers.

    Returns:
        The sources.
    """
    found = {m.source.number: m.source for m in marks}
    return [found[n] for n in sorted(found)]


def sources_html(marks: Sequence[Mark]) -> str:
    """The sources under an answer: number, title linking to the page, and site.

    Args:
        marks: The answer's citation markers.

    Returns:
        The HTML (a line each); empty when the answer cites nothing.
    """
    lines = []
    for source in sources(marks):
        citation = source.citation
        title = escape_html(cut(citation.title, TITLE_CHARS) or site(citation.url))
        href = web_link(citation.url)
        shown = (
            f'<a href="{escape_html(href)}" target="_blank" rel="noopener noreferrer">{title}</a>'
            if href
            else f"{title} <code>{escape_html(citation.url)}</code>"
        )
        where = f" · {escape_html(site(citation.url))}" if href and site(citation.url) else ""
        lines.append(f"[{source.number}] {shown}{where}")
    if not lines:
        return ""
    listed = "<br>".join(["<b>Sources</b>", *lines])
    return f'<p class="nbagent-sources {NO_MATH}">{listed}</p>'


def sources_text(marks: Sequence[Mark]) -> str:
    """The sources under an answer as plain text (a terminal).

    Args:
        marks: The answer's citation markers.

    Returns:
        E.g. ``Sources:`` and ``[1] What's New In Python 3.14 · https://…`` lines; empty
        when the answer cites nothing.
    """
    lines = [
        f"[{s.number}] {cut(s.citation.title, TITLE_CHARS) or site(s.citation.url)} · "
        f"{s.citation.url}"
        for s in sources(marks)
    ]
    return "\n".join(["Sources:", *lines]) if lines else ""
