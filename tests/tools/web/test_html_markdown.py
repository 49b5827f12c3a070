"""The HTML to Markdown-ish converter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.web.html_markdown import html_to_markdown


@pytest.mark.parametrize(
    ("html", "markdown"),
    [
        ("<h2>Sub  title</h2><p>Text</p>", "## Sub title\n\nText"),
        ("<p>a <b>bold</b> <em>it</em> <code>x[0]</code></p>", "a **bold** *it* `x[0]`"),
        ("<p>one<br>two</p>", "one\ntwo"),
        ("<ol><li>first</li><li>second</li></ol>", "1. first\n2. second"),
        ("<ul><li>a<ul><li>b</li></ul></li></ul>", "- a\n   - b"),
        ("<pre>def f():\n    return 1</pre>", "```\ndef f():\n    return 1\n```"),
        ("<blockquote><p>q1</p><p>q2</p></blockquote><p>after</p>", "> q1\n>\n> q2\n\nafter"),
        (
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>",
            "| a | b |\n| --- | --- |\n| 1 | 2 |",
        ),
        ("<p>x</p><hr><p>y</p>", "x\n\n---\n\ny"),
        ("<a href='#top'>top</a> <a href='javascript:void(0)'>js</a>", "top js"),
        ("<img src='p.png' alt='plot'>", "![plot](https://h.org/d/p.png)"),
        ("<style>p {}</style><script>x()</script><noscript>n</noscript><p>kept</p>", "kept"),
        ("<p>&amp; &lt;tag&gt; &eacute;</p>", "& <tag> é"),
        ("<svg><text>drawn</text></svg><p>k</p>", "k"),
    ],
)
def test_conversions(html: str, markdown: str) -> None:
    assert html_to_markdown(html, "https://h.org/d/page.html").text == markdown


def test_the_title_comes_apart() -> None:
    converted = html_to_markdown("<html><head><title> A\n title </title></head><p>b</p></html>")
    assert converted.title == "A title" and converted.text == "b"


@given(st.text(max_size=300))
def test_any_input_converts_without_error(html: str) -> None:
    converted = html_to_markdown(html)
    assert "\n\n\n" not in converted.text
    assert converted.text == converted.text.strip("\n")
