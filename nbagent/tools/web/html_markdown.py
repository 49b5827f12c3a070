"""A small HTML to Markdown-ish text converter for WebFetch (standard library only).

It keeps what a reader needs: headings, paragraphs, lists, links, emphasis, code blocks,
quotes and simple tables; it drops scripts, styles, forms and other non-content. It is not a
full Markdown renderer: nested tables, ``colspan`` and CSS layout are flattened.

>>> html_to_markdown("<h1>Hi</h1><p>A <a href='/x'>link</a>.</p>", "https://e.org/a").text
'# Hi\\n\\nA [link](https://e.org/x).'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "iframe",
        "object",
        "canvas",
        "select",
        "button",
        "head",
    }
)
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "figure",
        "figcaption",
        "table",
        "dl",
        "dt",
        "dd",
        "address",
        "details",
        "summary",
        "form",
        "fieldset",
        "body",
        "html",
    }
)
_VOID = frozenset(
    {
        "br",
        "hr",
        "img",
        "input",
        "meta",
        "link",
        "area",
        "base",
        "col",
        "embed",
        "source",
        "track",
        "wbr",
        "param",
    }
)
_EMPHASIS = {"code": "`", "strong": "**", "b": "**", "em": "*", "i": "*"}
"""Inline tags and the Markdown marks that open and close them (no code marks inside <pre>)."""
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


@dataclass(frozen=True)
class Converted:
    """A page as text."""

    title: str
    """The ``<title>``, if any."""
    text: str
    """The body as Markdown-ish text."""


def html_to_markdown(html: str, base_url: str = "") -> Converted:
    """Convert an HTML page to Markdown-ish text.

    Args:
        html: The page.
        base_url: Resolves relative links and images.

    Returns:
        The title and the text.
    """
    parser = _Converter(base_url)
    parser.feed(html)
    parser.close()
    text = "\n".join(line.rstrip() for line in "".join(parser.out).split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return Converted(title=_SPACES.sub(" ", "".join(parser.title)).strip(), text=text)


class _Converter(HTMLParser):
    """Streams Markdown as tags open and close."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False
        self._pre = 0
        self._quote = 0
        self._lists: list[list[int]] = []  # one [kind, counter] per open list; kind 0=ul 1=ol
        self._links: list[str | None] = []
        self._row_cells = 0
        self._header_row = False
        self._pending = 0
        self._blank_prefix = ""

    # Writing -------------------------------------------------------------------------

    def _prefix(self) -> str:
        return "> " * self._quote + "   " * max(len(self._lists) - 1, 0)

    def _after_space(self) -> bool:
        """Tell whether the text so far ends where a leading space would be noise."""
        if self._pending:
            return True
        last = next((piece for piece in reversed(self.out) if piece), "")
        return not last or last[-1] in " \n["

    def _break(self, blank: bool = True) -> None:
        """End the line before the next text (with a blank line after it when ``blank``).

        Breaks wait for the next text, so several in a row make one, and the prefix (quote
        marks, list indent) is the one in force where the text starts.
        """
        if not self._pending:
            self._blank_prefix = self._prefix().rstrip()
        self._pending = max(self._pending, 2 if blank else 1)

    def _write(self, text: str) -> None:
        if self._skip or not text:
            return
        if self._pending and self.out:
            prefix = self._prefix()
            shared = min(self._blank_prefix, prefix.rstrip(), key=len)
            blank = "\n" + shared if self._pending == 2 else ""
            self.out.append(blank + "\n" + prefix)
        elif not self.out:
            self.out.append(self._prefix())
        self._pending = 0
        self.out.append(text)

    # Parser callbacks ----------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open an element."""
        if tag == "title":
            self._in_title = True
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip += 1
            return
        if self._skip:
            return
        attr = dict(attrs)
        if tag in _BLOCKS:
            self._break()
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._break()
            self._write("#" * int(tag[1]) + " ")
        elif tag == "br":
            self._break(blank=False)
        elif tag == "hr":
            self._break()
            self._write("---")
            self._break()
        elif tag in ("ul", "ol"):
            self._break(blank=not self._lists)
            self._lists.append([1 if tag == "ol" else 0, 0])
        elif tag == "li":
            self._break(blank=False)
            if self._lists:
                kind = self._lists[-1]
                kind[1] += 1
                self._write(f"{kind[1]}. " if kind[0] else "- ")
            else:
                self._write("- ")
        elif tag == "blockquote":
            self._quote += 1
            self._break()
        elif tag == "pre":
            self._break()
            self._write("```\n" + self._prefix())
            self._pre += 1
        elif tag in _EMPHASIS and not (tag == "code" and self._pre):
            self._write(_EMPHASIS[tag])
        elif tag == "a":
            href = attr.get("href") or ""
            usable = href and not href.startswith(("#", "javascript:"))
            self._links.append(urljoin(self.base_url, href) if usable else None)
            if usable:
                self._write("[")
        elif tag == "img":
            src = attr.get("src")
            if src:
                self._write(f"![{attr.get('alt') or ''}]({urljoin(self.base_url, src)})")
        elif tag == "tr":
            self._break(blank=False)
            self._write("|")
            self._row_cells = 0
            self._header_row = False
        elif tag in ("td", "th"):
            self._row_cells += 1
            self._header_row = self._header_row or tag == "th"
            self._write(" ")

    def handle_endtag(self, tag: str) -> None:
        """Close an element."""
        if tag == "title":
            self._in_title = False
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip = max(self._skip - 1, 0)
            return
        if self._skip:
            return
        if tag in _BLOCKS or tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._break()
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._break(blank=not self._lists)
        elif tag == "blockquote":
            self._quote = max(self._quote - 1, 0)
            self._break()
        elif tag == "pre":
            self._pre = max(self._pre - 1, 0)
            self._write("\n" + self._prefix() + "```")
            self._break()
        elif tag in _EMPHASIS and not (tag == "code" and self._pre):
            self._write(_EMPHASIS[tag])
        elif tag == "a":
            href = self._links.pop() if self._links else None
            if href:
                self._write(f"]({href})")
        elif tag in ("td", "th"):
            self._write(" |")
        elif tag == "tr" and self._header_row:
            self._break(blank=False)
            self._write("|" + " --- |" * self._row_cells)

    def handle_data(self, data: str) -> None:
        """Add text: whitespace collapsed, except inside ``<pre>``."""
        if self._in_title:
            self.title.append(data)
        if self._skip:
            return
        if self._pre:
            self._write(data.replace("\n", "\n" + self._prefix()))
            return
        text = _SPACES.sub(" ", data)
        if self._after_space():
            text = text.lstrip()
        if text:
            self._write(text)
