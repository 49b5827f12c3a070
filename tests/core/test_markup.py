"""Text from outside never becomes markup: nbagent.core.markup, and every renderer that uses it.

Each rendering (HTML, Markdown, plain text) of transcripts, cards, tables and answers made of
an injection corpus goes through real renderers that keep raw HTML: markdown-it-py in its
CommonMark preset with ``html=True`` (as JupyterLab's marked and VS Code's markdown-it do)
and mistune (nbconvert's). The HTML that comes out is parsed: only an allow-list of elements
and attributes may appear, links only to web addresses, and no text that a terminal or a
browser would not show as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import mistune
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from nbagent.core.events import (
    Citation,
    Event,
    Notice,
    PermissionAnswered,
    PermissionRequested,
    RunFinished,
    TaskItem,
    TaskListChanged,
    TextCited,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
    WebPage,
    WebSearched,
)
from nbagent.core.markup import (
    NO_MATH,
    code_block,
    code_markdown,
    escape_html,
    model_html,
    model_markdown,
    plain_markdown,
    show_controls,
    table_cell,
)
from nbagent.jupyter.widgets import TranscriptView
from nbagent.loop.agent import AgentResult
from nbagent.render.schema_view import parameters_html, parameters_markdown
from nbagent.render.transcript.model import Transcript

INJECTIONS = (
    "<img src=x onerror=\"document.title='PWNED'\">",
    '<iframe srcdoc="<script>parent.PWNED=1</script>"></iframe>',
    "<script>window.PWNED=1</script>",
    "<svg onload=alert(1)>",
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "<details open ontoggle=alert(1)>",
    '<a href="https://ok.example" onclick="alert(1)">x</a>',
    "<a href='javascript:alert(1)'>x</a>",
    "<img src=x onerror=alert(1)",
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    "<style>@import url(http://evil.example/)</style>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<object data=javascript:alert(1)>",
    "<base href=javascript:alert(1)//>",
    "<meta http-equiv=refresh content='0;url=javascript:alert(1)'>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<!-- x --><b>bold</b>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](java\tscript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "[a]: javascript:alert(1)\n\n[a]",
    "<javascript:alert(1)>",
    '<http://evil.example/"onmouseover="alert(1)>',
    "![beacon](http://evil.example/leak.png)",
    "![x](javascript:alert(1))",
    "``<img src=x onerror=alert(1)>`",
    "`` ` <img src=x onerror=alert(1)> ``",
    "```\n<script>x</script>\n```",
    "\n\n    <img src=x onerror=alert(1)>",
    "&lt;img src=x onerror=alert(1)&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
    "\\<img src=x onerror=alert(1)>",
    "|a|b|\n|-|-|\n|<img src=x onerror=alert(1)>|x|",
    "x\\|<img src=x onerror=alert(1)>",
    "$<img src=x onerror=alert(1)>$",
    "\n$a$ $b$ <img src=x onerror=alert(1)//>",
    "@@0@@ $x$ \\(y\\) \\begin{align}a&<b\\end{align}",
    "\r\n\r\n<img src=x onerror=alert(1)>",
    "\x1b[8mhidden\x1b[0m",
    "rm -rf ~\u202e/txt.exe",
    "\u2066\u2067\u2068\u2069\u200b\ufeff\U000e0041\x00\x85\u2028",
    "*a* _b_ **c** # d\n- e\n1. f\n> g\n---",
    "\"'<>&",
)
"""Markup, links, code-span tricks, entities, unclosed tags, controls and direction marks."""

PAYLOAD = st.lists(
    st.one_of(st.sampled_from(INJECTIONS), st.text(max_size=12)), min_size=1, max_size=3
).map("".join)
"""A text from outside: pieces of the corpus and anything else, joined."""

TAGS = {
    "p", "code", "pre", "em", "strong", "b", "s", "ul", "ol", "li", "a", "h1", "h2", "h3",
    "h4", "h5", "h6", "blockquote", "br", "hr", "span", "div", "table", "thead", "tbody", "tr",
    "th", "td", "caption", "details", "summary", "sup", "sub", "kbd",
}  # fmt: skip
"""The elements allowed in any output: text formatting, tables, and nbagent's cards."""

ATTRIBUTES = {"class", "title", "href", "target", "rel", "open", "start", "style", "align"}
"""The attributes allowed (``href`` to web addresses only, ``style`` without ``url(``)."""


class Inert(HTMLParser):
    """Checks an HTML page: allowed elements and attributes only, links to the web only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Check an element and its attributes."""
        if tag not in TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name not in ATTRIBUTES or name.startswith("on") or name == "srcdoc":
                self.problems.append(f"<{tag} {name}>")
            elif name == "href" and not re.match(r"https?://[^\s/]", value):
                self.problems.append(f"<{tag} href={value!r}>")
            elif name == "style" and re.search(r"url\(|expression\(|@import", value, re.I):
                self.problems.append(f"<{tag} style={value!r}>")

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        """Keep the text."""
        self.text.append(data)


def check_html(page: str) -> Inert:
    """Parse a page and fail on any element, attribute or link not allowed.

    Args:
        page: HTML.

    Returns:
        The checker (its text).
    """
    checker = Inert()
    checker.feed(page)
    checker.close()
    assert not checker.problems, (checker.problems, page)
    assert_visible(page)
    return checker


def assert_visible(text: str) -> None:
    """Fail on a control character, direction mark or other invisible character in a text."""
    hidden = {
        c
        for c in text
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") and c not in "\n\t"
    }
    assert not hidden, (hidden, text)


MARKDOWN_IT = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
MISTUNE = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])
MARKDOWN_RENDERERS: dict[str, Callable[[str], str]] = {
    "markdown-it": MARKDOWN_IT.render,
    "mistune": lambda text: str(MISTUNE(text)),
}


def check_markdown(markdown: str) -> None:
    """Render Markdown with each renderer that keeps raw HTML, and check each page."""
    assert_visible(markdown)
    for render in MARKDOWN_RENDERERS.values():
        check_html(render(markdown))


def check_plain(text: str) -> None:
    """Plain text (a terminal): every character shows as itself."""
    assert_visible(text)


def hits(*names: str) -> tuple[Any, ...]:
    """ToolSearch hits with the given names."""
    return tuple(SimpleNamespace(name=n, score=1.0, reasons=(f"{n} matched",)) for n in names)


def run_events(p: list[str], answered: bool) -> list[Event]:
    """A run in which every text from outside is one of ``p``."""
    page = WebPage(p[9], p[10], p[11])
    events: list[Event] = [
        TextDelta(p[0]),
        ToolCallStarted("c1", p[1], {"command": p[2], p[3]: p[4]}),
        PermissionRequested("c1", p[1], p[2], p[5], p[6]),
        WebSearched("s1", p[8], (page, WebPage(p[10], "https://ok.example/" + p[11])), ""),
        TextDelta(p[12]),
        TextCited((Citation(p[10], p[9], p[13]), Citation("https://ok.example/", p[14], p[0]))),
        TaskListChanged((TaskItem("1", p[14]), TaskItem(p[15], p[16], "completed"))),
        Notice(p[17], "warning"),
        Notice(p[18]),
        ToolCallStarted("c2", "ToolSearch", {"query": p[19]}),
        ToolSearchResults("c2", p[19], hits(p[20], "Read"), (p[20],), p[21]),
        ToolSearchResults("orphan", p[22], hits(p[23]), (), ""),
        ToolSetAnnounced((p[20], p[23]), (p[1],), p[3]),
        ToolCallStarted("c3", "Agent", {"prompt": p[4]}),
        ToolProgress("c3", TextDelta(p[5])),
        ToolProgress("c3", ToolCallStarted("i1", p[6], {"file_path": p[7]})),
        ToolCallFinished("c3", "Agent", "ok", [{"type": "text", "text": p[8]}], 1.0),
    ]
    if answered:
        events += [
            PermissionAnswered("c1", "always", p[7]),
            ToolCallFinished("c1", p[1], "error", p[13] * 50, 7.0, p[2], p[15]),
            TextDelta(p[16]),
            RunFinished("max_tokens", p[16], Usage()),
        ]
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PAYLOAD, min_size=24, max_size=24), st.booleans(), st.booleans())
def test_every_rendering_of_a_transcript_is_inert(
    payloads: list[str], answered: bool, verbose: bool
) -> None:
    transcript = Transcript()
    view = TranscriptView(transcript, verbose=verbose)
    for event in run_events(payloads, answered):
        item = transcript.apply(event)
        if item is not None:
            view.show(item)
    check_html(transcript.to_html(verbose=verbose))
    check_markdown(transcript.to_markdown(verbose=verbose))
    check_plain(transcript.to_text(verbose=verbose))
    for child in (*view._items.children, *view._asking.children):
        if hasattr(child, "value"):
            check_html(child.value)
        for output in getattr(child, "outputs", ()):
            check_markdown(output["data"]["text/markdown"])
            check_plain(output["data"]["text/plain"])
    view.close()


@settings(max_examples=200, deadline=None)
@given(PAYLOAD)
def test_the_markup_functions_give_inert_output(text: str) -> None:
    check_html(escape_html(text))
    check_html(f'<a title="{escape_html(text)}" href="https://ok.example/">x</a>')
    check_html(model_html(text))
    for markdown in (
        model_markdown(text),
        plain_markdown(text),
        f"- {plain_markdown(text)}\n- {code_markdown(text)}",
        f"| a | b |\n|---|---|\n| {table_cell(text)} | {code_markdown(text)} |",
        f"> **{plain_markdown(text)}** {code_markdown(text)}",
        code_block(text),
    ):
        check_markdown(markdown)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(PAYLOAD, st.fixed_dictionaries({"description": PAYLOAD}), max_size=3))
def test_parameter_tables_are_inert(properties: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": properties}
    check_html(parameters_html(schema))
    check_markdown(parameters_markdown(schema))


# What each function shows.


def rendered_text(markdown: str) -> str:
    """The text a Markdown renders to, as a reader sees it (markdown-it, raw HTML kept)."""
    return "".join(check_html(MARKDOWN_IT.render(markdown)).text).strip()


LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=40
).filter(lambda t: t.strip() == t)
"""A line of text as it shows (Markdown strips a paragraph's outer spaces)."""


@settings(max_examples=300, deadline=None)
@given(LINE.filter(bool))
def test_plain_markdown_shows_the_text_as_written(text: str) -> None:
    assert rendered_text(plain_markdown(text)) == text
    assert rendered_text(f"| a |\n|---|\n| {table_cell(text)} |").removeprefix("a").strip() == (
        text.strip()
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cn", "Cs", "Zl", "Zp"))))
def test_code_markdown_is_one_code_span_with_the_text_whatever_it_holds(text: str) -> None:
    line = " ".join(text.splitlines())
    for markdown in (f"x {code_markdown(text)} y", f"| a |\n|---|\n| {code_markdown(text)} |"):
        page = MARKDOWN_IT.render(markdown)
        check_html(page)
        code = re.findall(r"<code>(.*?)</code>", page, re.S)
        assert len(code) == 1
        shown = "".join(check_html(code[0]).text)
        assert shown == line or (shown.strip() == line.strip() and not line.strip()), markdown


def test_plain_markdown_escapes_however_many_backticks() -> None:
    for trick in ("``<img src=x onerror=alert(1)>`", "`<b>`", "```<b>```", "` `` <b> `` `"):
        assert "<img" not in MARKDOWN_IT.render(plain_markdown(trick)).replace("&lt;img", "")
        assert "<b>" not in MARKDOWN_IT.render(plain_markdown(trick))


def test_plain_markdown_keeps_mathematics_and_markers_as_text() -> None:
    assert plain_markdown("cost $5 or $10 *now*") == (
        f'<span class="{NO_MATH}">cost \\$5 or \\$10 \\*now\\*</span>'
    )
    assert plain_markdown("- a\n1. b\n# c") == "\\- a\n1\\. b\n\\# c"


def test_code_markdown_picks_a_longer_fence() -> None:
    assert code_markdown("a``b") == "```a``b```"
    assert code_markdown("`x`") == "`` `x` ``"
    assert code_markdown("a|b") == "<code>a\\|b</code>"


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x1b", "\\x1b"),
        ("\x00", "\\x00"),
        ("\r", "\\x0d"),
        ("\x85", "\\x85"),
        ("\u202e", "\\u202e"),
        ("\u2066", "\\u2066"),
        ("\u200b", "\\u200b"),
        ("\ufeff", "\\ufeff"),
        ("\u2028", "\\u2028"),
        ("\U000e0041", "\\U000e0041"),
        ("\ud800", "\\ud800"),
    ],
)
def test_show_controls_writes_escapes(char: str, shown: str) -> None:
    assert show_controls(f"a{char}b") == f"a{shown}b"


def test_show_controls_leaves_text_lines_tabs_and_emoji_alone() -> None:
    assert show_controls("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert show_controls("👩\u200d💻 and x\u200dy") == "👩\u200d💻 and x\\u200dy"
    assert show_controls("naïve 日本語 ¿qué?") == "naïve 日本語 ¿qué?"


def test_show_controls_escapes_every_invisible_character() -> None:
    invisible = [
        chr(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
        and chr(code) not in "\n\t"
    ]
    missed = [c for c in invisible if show_controls(c) == c]
    assert not missed, [hex(ord(c)) for c in missed]


def test_model_markdown_still_renders_as_markdown() -> None:
    text = (
        "# Result\n\nThe mean is **42** and *rising*; see [the docs](https://docs.python.org/3/)"
        ".\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```python\nx = [1, 2]\n\ny = x < 3\n```\n\n"
        "| a | b |\n|---|--:|\n| `c` | 2 |\n\n~~old~~ and $x_1 * y_2$ and $$a \\\\ b$$"
    )
    page = MARKDOWN_IT.render(model_markdown(text))
    check_html(page)
    for part in (
        "<h1>Result</h1>",
        "<strong>42</strong>",
        "<em>rising</em>",
        '<a href="https://docs.python.org/3/" target="_blank" rel="noopener noreferrer">the docs',
        "<li>one</li>",
        "<ol>",
        "<blockquote>",
        '<pre><code class="language-python">x = [1, 2]\n<span></span>\ny = x &lt; 3\n</code></pre>',
        '<th style="text-align:right">b</th>',
        "<td><code>c</code></td>",
        "<s>old</s>",
        "&#36;x_1 * y_2&#36;",
        "&#36;&#36;a &#92;&#92; b&#36;&#36;",
    ):
        assert part in page, part


def test_model_markdown_shows_html_as_text_and_links_only_to_the_web() -> None:
    html = model_html(
        "<b>x</b> [a](javascript:alert(1)) [b](file:///etc/passwd) <https://ok.example/> "
        "![beacon](http://evil.example/leak.png) ![no](data:image/png;base64,AAAA)"
    )
    check_html(html)
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "[a](javascript:alert(1))" in html and "[b](file:///etc/passwd)" in html
    assert '<a href="https://ok.example/"' in html
    assert '<a class="nbagent-image" href="http://evil.example/leak.png"' in html
    assert "image: beacon" in html and "<img" not in html
    assert "![no](data:image/png;base64,AAAA)" in html


def test_html_made_here_holds_no_dollar_or_backslash_for_jupyterlab_to_lift() -> None:
    for html in (escape_html("a $x$ \\(y\\)"), model_html("a $x$ \\(y\\) `$z$` \\$")):
        assert "$" not in html and "\\" not in html


@settings(max_examples=50, deadline=None)
@given(PAYLOAD)
def test_a_result_kept_in_a_variable_shows_its_answer_inert(text: str) -> None:
    check_markdown(AgentResult(text, "end_turn", [])._repr_markdown_())


SECRET = "p&<w>$d\\sk-9Zq8Yx7W"
"""A secret that escaping would change (``&amp;``, ``&#36;``, ``\\$``): found only before."""


def test_every_function_redacts_before_it_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", SECRET)
    text = f"key {SECRET} | `{SECRET}`"
    for out in (
        escape_html(text),
        plain_markdown(text),
        code_markdown(text),
        table_cell(f"{SECRET} " * 30, width=20),
        code_block(text),
        model_html(text),
        model_markdown(text),
    ):
        assert "9Zq8Yx7W" not in out and "redacted SERVICE" in out, out


def test_citation_markers_move_with_a_redacted_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", SECRET)
    text = f"The key is {SECRET}. Rotate it."
    after_key, inside_key = text.index(". Rotate"), text.index("9Zq8")
    html = model_html(text, [(after_key, "<sup>[1]</sup>"), (inside_key, "<sup>[2]</sup>")])
    assert "9Zq8Yx7W" not in html
    assert "The key is [redacted SERVICE_TOKEN]<sup>[1]</sup><sup>[2]</sup>. Rotate it." in html
