r"""The one way text from outside becomes output: inert, and shown as it was written.

Text that nbagent did not write itself (the model's answers and plans, tool names,
descriptions, inputs and results, web titles and addresses, task subjects, ids, server names,
errors) can hold markup. Output made in the session is trusted by Jupyter, and saving signs
the notebook, so markup that ran once would run again at every reopen. Every such text goes
out through this module:

- in HTML, :func:`escape_html`;
- in Markdown, :func:`plain_markdown` (a text as written), :func:`code_markdown` (as inline
  code), :func:`table_cell` and :func:`code_block`;
- the model's own Markdown, :func:`model_html` (and :func:`model_markdown` inside Markdown):
  rendered here by markdown-it-py with raw HTML off, so any ``<tag>`` in it shows as text;
  links only to ``http`` and ``https`` addresses, images shown as links (an image from
  outside that loaded by itself would tell its server that the notebook was opened), and
  mathematics kept as written for MathJax;
- everywhere, :func:`show_controls`: control characters, bidirectional overrides and other
  invisible characters are written as escapes (``\x1b``, ``\u202e``), so that what a question
  or a card shows is what will run.

Every function here redacts the secrets of the text (:func:`nbagent.core.secrets.redact`) before it
escapes, cuts or renders it: once escaped, a secret holding ``&``, ``<``, ``$`` or ``\`` would no
longer be found, and once cut, only its start would be there.

HTML made here holds no ``$`` and no ``\`` (they are character references): JupyterLab
lifts mathematics out of Markdown before rendering it and escapes it again when it puts it
back, which would spoil text that is already escaped; with neither character it leaves the
HTML alone, and MathJax still finds the mathematics in the page.

>>> escape_html('<img src=x onerror="alert(1)">')
'&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
>>> plain_markdown("*not* <b>bold</b>")
'\\*not\\* \\<b\\>bold\\</b\\>'
>>> code_markdown("a ``b`` c")
'```a ``b`` c```'
>>> model_html("**Hi** <script>x</script> [a](javascript:x)")
'<p><strong>Hi</strong> &lt;script&gt;x&lt;/script&gt; [a](javascript:x)</p>'
>>> show_controls("ls\x1b[8m; rm -rf ~\u202e")
'ls\\x1b[8m; rm -rf ~\\u202e'
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from nbagent.core.secrets import redact, redaction_spans
from nbagent.core.text import first_line

if TYPE_CHECKING:  # markdown-it (25 ms to import) is imported at the first rendering
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

NO_MATH = "tex2jax_ignore"
"""The class of the elements whose text MathJax leaves alone (JupyterLab's and nbconvert's)."""

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f]"
)
"""Characters that do not show as themselves: controls but the newline and the tab (C0, DEL,
C1), format characters (zero-width spaces and joiners, direction marks, embeddings,
overrides and isolates, invisible operators, the byte-order mark, tag characters), line and
paragraph separators, and lone surrogates."""

_EMOJI = re.compile("[\u2600-\u27bf\ufe0f\U0001f000-\U0001faff]")
"""Characters that a zero-width joiner between two of them binds into one emoji (👩‍💻)."""


def show_controls(text: str) -> str:
    r"""Write every invisible or controlling character of a text as an escape.

    A terminal obeys ``\x1b[8m`` (what follows is hidden) and ``\r`` (the line is written
    over); a right-to-left override shows ``txt.exe`` as ``exe.txt``. Newlines and tabs stay,
    a Windows line end (``\r\n``) becomes a newline, and a zero-width joiner inside an emoji
    stays too.

    Args:
        text: Any text.

    Returns:
        The text, each such character as ``\xNN``, ``\uNNNN`` or ``\UNNNNNNNN``.
    """
    lines = text.replace("\r\n", "\n")

    def escape(found: re.Match[str]) -> str:
        char, at = found.group(), found.start()
        if char == "\u200d" and _EMOJI.match(lines, at - 1) and _EMOJI.match(lines, at + 1):
            return char
        code = ord(char)
        if code < 0x100:
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return _INVISIBLE.sub(escape, lines)


def escape_html(text: str) -> str:
    """A text as HTML that shows it as written: every character of markup escaped.

    Args:
        text: Any text.

    Returns:
        The HTML text (fit for an element or a quoted attribute), its secrets redacted, its
        invisible characters shown (:func:`show_controls`), ``$`` and ``\\`` as character
        references.
    """
    escaped = html.escape(show_controls(redact(text)))
    return escaped.replace("$", "&#36;").replace("\\", "&#92;")


_URL_SAFE = ":/?#[]@!$&'*+,;=%~"
"""Characters kept in a link's address; others (spaces, parentheses, quotes) are encoded."""


def web_link(url: str) -> str | None:
    """A web address fit to be a link: ``http`` or ``https`` with a host, else None.

    ``javascript:``, ``data:``, ``vbscript:``, ``file:`` and relative addresses are never
    links.

    Args:
        url: An address from outside.

    Returns:
        The address, its secrets redacted, with spaces, parentheses, quotes, angle brackets
        and every character beyond ASCII or invisible percent-encoded (so it cannot end a
        Markdown link or an HTML attribute early, nor hide part of itself), or None.
    """
    url = redact(url)
    parts = urlsplit(url.strip())
    try:
        host = parts.hostname
    except ValueError:  # a malformed IPv6 host
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return quote(url.strip(), safe=_URL_SAFE).replace("'", "%27")


# Text as written, in Markdown.

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&$|~#!])")
"""Characters with a meaning anywhere in a line of Markdown (CommonMark and GFM)."""

_LINE_START = re.compile(r"^([ \t]*)([-+=]|\d+(?=[.)]))", re.MULTILINE)
"""What starts a list, a heading underline or a rule at the start of a line."""


def plain_markdown(text: str) -> str:
    r"""Escape a text so that Markdown shows it as written, and nothing in it is markup.

    Every character that means something in Markdown is backslash-escaped (emphasis, code
    spans, links and images, raw HTML and autolinks, entities, tables, strikethrough,
    headings, lists), however many there are. In a text holding two dollars or a backslash,
    each line is also wrapped in a span of the class MathJax ignores: JupyterLab typesets the
    rendered page, where ``\$`` is a plain dollar again.

    Args:
        text: Any text, e.g. ``cost $5 or $10 *now*``.

    Returns:
        The Markdown, e.g. ``<span class="tex2jax_ignore">cost \$5 or \$10
        \*now\*</span>``, its secrets redacted.
    """
    shown = show_controls(redact(text))
    markdown = _MARKDOWN_SPECIAL.sub(r"\\\1", shown)
    markdown = _LINE_START.sub(_escape_line_start, markdown)
    if shown.count("$") < 2 and "\\" not in shown:
        return markdown
    return "\n".join(  # a line holding the tag alone would open a block of raw HTML
        f'<span class="{NO_MATH}">{line}</span>' if line.strip() else line
        for line in markdown.split("\n")
    )


def _escape_line_start(found: re.Match[str]) -> str:
    """A list marker or underline at a line's start, escaped (``1\\.``, ``\\-``)."""
    indent, mark = found.groups()
    return f"{indent}{mark}\\" if mark[0].isdigit() else f"{indent}\\{mark}"


def code_markdown(text: str) -> str:
    """A text as inline code in Markdown, whatever backticks or pipes it holds.

    The span's backticks outnumber every run inside it; a text with a pipe (which would end a
    table cell even inside a code span) becomes a ``<code>`` element around escaped text.

    Args:
        text: A name, an id, a command (lines are joined by a space).

    Returns:
        The Markdown.
    """
    line = " ".join(show_controls(redact(text)).splitlines())
    if "|" in line or not line.strip():
        return f"<code>{plain_markdown(line)}</code>"
    fence = "`" * (max(map(len, re.findall("`+", line)), default=0) + 1)
    padded = line[0] == "`" or line[-1] == "`" or (line[0] == " " and line[-1] == " ")
    pad = " " if padded else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def table_cell(text: str | None, width: int = 80) -> str:
    """Text for one Markdown table cell: its first line, cut, shown as written.

    Args:
        text: Any text, or None.
        width: The most characters before escaping.

    Returns:
        The cell's Markdown (:func:`plain_markdown`, which escapes pipes too).
    """
    return plain_markdown(first_line(redact(text or ""), width))


def code_block(text: str) -> str:
    """A Markdown fenced block that shows a text as it is (a fence longer than any inside).

    Args:
        text: Any text, e.g. a server's stderr.

    Returns:
        The block, its secrets redacted.
    """
    text = redact(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{show_controls(text)}\n{fence}"


def html_block(markup: str) -> str:
    """HTML that Markdown keeps whole, as one HTML block, whatever text it holds.

    In CommonMark (JupyterLab, nbconvert, GitHub) an HTML block that starts with a tag such as
    ``<details>`` ends at the first blank line; what follows is Markdown again, so a tool
    result's ``## heading`` would become a heading of the notebook and an indented line a code
    block. Blank lines inside become an empty ``<span></span>``, which shows (and copies) as
    the same empty line. A carriage return ends a line for Markdown too; it becomes a newline
    first (as HTML reads it anyway).

    Args:
        markup: HTML whose text is escaped.

    Returns:
        The HTML with no blank line.
    """
    lines = markup.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line if line.strip() else "<span></span>" for line in lines)


# The model's Markdown, rendered here.

MATH_CHARS = 4000
"""The longest formula kept as written (a lone dollar is looked past no further)."""

_MATH = re.compile(
    r"\$\$(?!\$).+?\$\$"
    r"|\$(?![\s$])(?:[^$\\`]|\\.)+?(?<![\s\\])\$(?!\d)"
    r"|\\\(.+?\\\)"
    r"|\\\[.+?\\\]"
    r"|\\begin\{([A-Za-z]+\*?)\}.+?\\end\{\1\}",
    re.DOTALL,
)
"""Mathematics as MathJax finds it: ``$$…$$``, ``$…$`` (no space inside the dollars, no digit
after: ``$5 and $10`` is money; no backtick, which starts code), ``\\(…\\)``, ``\\[…\\]`` and
LaTeX environments."""

_SENTINEL = re.compile("\ue000(\\d+)\ue001")
"""Where nbagent's own markup goes into the model's text (see :func:`model_html`)."""

_SENTINEL_URL = re.compile("%EE%80%80\\d+%EE%80%81")
"""A sentinel inside a link's address, as the address is percent-encoded."""


def _math(state: StateInline, silent: bool) -> bool:
    """The inline rule that keeps a formula as it was written (no emphasis, no escapes)."""
    if state.src[state.pos] not in "$\\":
        return False
    found = _MATH.match(state.src, state.pos, min(state.posMax, state.pos + MATH_CHARS))
    if found is None:
        return False
    if not silent:
        state.push("math", "", 0).content = found.group()
    state.pos = found.end()
    return True


def _render_math(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    """A formula, as text."""
    from markdown_it.common.utils import escapeHtml

    return escapeHtml(tokens[idx].content)


def _render_link(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    """A link, opened in a new tab without telling the page where it came from."""
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


def _render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    """An image as a link to it: nothing is fetched until the person clicks."""
    from markdown_it.common.utils import escapeHtml

    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = escapeHtml(str(token.attrGet("src") or ""))
    return (
        f'<a class="nbagent-image" href="{src}" target="_blank" rel="noopener noreferrer">'
        f"image: {escapeHtml(alt) or 'no description'}</a>"
    )


def _web_links_only(url: str) -> bool:
    """Tell whether an address may be a link's: ``http`` or ``https`` with a host.

    Args:
        url: The address, normalised by markdown-it.

    Returns:
        Whether it is a web address; any other stays text, as written.
    """
    return web_link(url) is not None


@functools.cache
def _markdown_renderer() -> MarkdownIt:
    """markdown-it-py for the model's Markdown: CommonMark with tables and strikethrough, no
    raw HTML, no bare-address links, links (and images) to web addresses only; made at the
    first rendering."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = _web_links_only  # type: ignore[method-assign]
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("escape", "math", _math)
    md.add_render_rule("math", _render_math)
    md.add_render_rule("link_open", _render_link)
    md.add_render_rule("image", _render_image)
    return md


def model_html(text: str, inserts: Sequence[tuple[int, str]] = ()) -> str:
    """Render Markdown from outside (the model's answer, a plan, a tool's description) as HTML.

    Headings, lists, code, tables, emphasis, quotes and web links render; raw HTML shows as
    text, other links as written, images as links to them, formulas as written (for MathJax).

    Args:
        text: The Markdown.
        inserts: nbagent's own HTML (a citation marker) to put after a character of the
            text: its offset and the HTML. An insert that falls in code, a formula or an
            address is left out.

    Returns:
        The HTML: nothing in it but markdown-it's elements, its secrets redacted, every text
        escaped (:func:`escape_html`'s rules).
    """
    text, inserts = _without_secrets(text, inserts)
    source = text.replace("\ue000", "\ufffd").replace("\ue001", "\ufffd")
    for number, (end, _) in sorted(enumerate(inserts), key=lambda p: (-p[1][0], -p[0])):
        source = f"{source[:end]}\ue000{number}\ue001{source[end:]}"
    md = _markdown_renderer()
    tokens = md.parse(source)
    for token in tokens:
        _place_inserts(token, [markup for _, markup in inserts])
    rendered = md.renderer.render(tokens, md.options, {})
    shown = show_controls(rendered.rstrip("\n"))
    return shown.replace("$", "&#36;").replace("\\", "&#92;")


def _without_secrets(
    text: str, inserts: Sequence[tuple[int, str]]
) -> tuple[str, Sequence[tuple[int, str]]]:
    """A text with its secrets redacted, and its inserts moved with what they follow (an
    insert inside a secret goes after it)."""
    spans = redaction_spans(text)
    if not spans:
        return text, inserts
    labels = [f"[redacted {label}]" for _, _, label in spans]

    def moved(offset: int) -> int:
        shift = 0
        for (start, end, _), label in zip(spans, labels, strict=True):
            if offset <= start:
                break
            if offset < end:
                return start + shift + len(label)
            shift += len(label) - (end - start)
        return offset + shift

    parts, at = [], 0
    for (start, end, _), label in zip(spans, labels, strict=True):
        parts += [text[at:start], label]
        at = end
    return "".join([*parts, text[at:]]), [(moved(offset), html) for offset, html in inserts]


def _place_inserts(token: Token, markups: list[str]) -> None:
    """Turn the sentinels in a token's text into nbagent's HTML; drop them anywhere else."""
    from markdown_it.token import Token

    token.content = _SENTINEL.sub("", token.content)
    if token.attrs:
        token.attrs = {
            name: _SENTINEL_URL.sub("", _SENTINEL.sub("", value))
            if isinstance(value, str)
            else value
            for name, value in token.attrs.items()
        }
    if not token.children:
        return
    children: list[Token] = []
    for child in token.children:
        if child.type != "text" or not _SENTINEL.search(child.content):
            _place_inserts(child, markups)
            children.append(child)
            continue
        parts = _SENTINEL.split(child.content)
        for index, part in enumerate(parts):
            if index % 2:
                children.append(Token("html_inline", "", 0, content=markups[int(part)]))
            elif part:
                children.append(Token("text", "", 0, content=part))
    token.children = children


def model_markdown(text: str, css_class: str = "nbagent-markdown") -> str:
    """Markdown from outside, rendered (:func:`model_html`), as one block of a Markdown output.

    Args:
        text: The Markdown.
        css_class: The class of the ``<div>`` around it.

    Returns:
        An HTML block that any Markdown renderer keeps whole.
    """
    return html_block(f'<div class="{css_class}">{model_html(text)}</div>')


class Markdown:
    """Markdown that renders as Markdown in notebooks and as plain text in a terminal.

    (IPython's own ``Markdown`` shows ``<IPython.core.display.Markdown object>`` as text.)
    Both show control characters and direction overrides as escapes
    (:func:`~nbagent.core.markup.show_controls`); text from outside in the Markdown is redacted and
    escaped by its maker (:mod:`nbagent.core.markup`), and both are redacted again here
    (:func:`~nbagent.core.secrets.redact`).

    Args:
        text: The Markdown source.
        plain: The plain-text rendering; the Markdown source by default.
    """

    def __init__(self, text: str, plain: str | None = None) -> None:
        self.text = show_controls(redact(text, shapes=False))
        self.plain = self.text if plain is None else show_controls(redact(plain))

    def _repr_markdown_(self) -> str:
        """The Markdown, for rich front ends."""
        return self.text

    def bundle(self) -> dict[str, str]:
        """Its MIME bundle, to display raw (IPython's formatters need not look for others)."""
        return {"text/markdown": self.text, "text/plain": self.plain}

    def __repr__(self) -> str:
        """The plain text, for plain front ends."""
        return self.plain
