"""How a web search and an answer's citations show: the card, the markers, the sources."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.events import (
    Citation,
    RunFinished,
    TextCited,
    TextDelta,
    Usage,
    UsageReported,
    WebPage,
    WebSearched,
)
from nbagent.core.markup import escape_html, model_html, web_link
from nbagent.render.transcript.items import AnswerItem, Call
from nbagent.render.transcript.model import Transcript
from nbagent.render.transcript.text import item_text
from nbagent.render.web_view import Mark, Source, citation_inserts, cited_text, web_summary

DOCS = WebPage(
    "What's New In Python 3.14", "https://docs.python.org/3/whatsnew/3.14.html", "3 days"
)
HOSTILE = WebPage('<img src=x onerror="alert(1)"> *bold* $5 and $6', "javascript:alert(1)")
USAGE = Usage(input_tokens=10, output_tokens=5, web_search_requests=1)
NEWS = WebPage("Python news", "https://www.example.com/news?q=a b(c)")


def run_with_search(*pages: WebPage, error: str = "") -> Transcript:
    """A transcript of narration, a search, and an answer citing its pages."""
    transcript = Transcript()
    events = [
        TextDelta("Let me search."),
        WebSearched("srvtoolu_1", "python 3.14", pages, error),
        TextDelta("Python 3.14 is out."),
        TextCited(tuple(Citation(p.url, p.title, f"about {p.title}") for p in pages)),
        TextDelta(" More soon."),
        UsageReported(USAGE),
        RunFinished("end_turn", "Python 3.14 is out. More soon.", USAGE),
    ]
    for event in events:
        transcript.apply(event)
    return transcript


def test_a_search_is_a_card_between_the_narration_and_the_answer() -> None:
    transcript = run_with_search(DOCS, NEWS)
    narration, card, answer = transcript.items
    assert isinstance(narration, AnswerItem) and isinstance(answer, AnswerItem) and answer.final
    assert isinstance(card, Call) and card.name == "web_search" and card.status == "ok"
    line = item_text(card).splitlines()
    assert line[0] == '✓ web_search "python 3.14" → 2 results: docs.python.org, example.com'
    assert line[1:] == [
        f"    1. What's New In Python 3.14 · {DOCS.url}",
        f"    2. Python news · {NEWS.url}",
    ]
    assert "1 web search" in transcript.meter()


def test_the_card_links_each_page_with_its_site_and_age() -> None:
    markdown = run_with_search(DOCS, NEWS).to_markdown()
    assert (
        f'<a href="{DOCS.url}" target="_blank" rel="noopener noreferrer">'
        "What&#x27;s New In Python 3.14</a> "
        '<span class="nbagent-site">· docs.python.org · 3 days</span>'
    ) in markdown
    assert 'href="https://www.example.com/news?q=a%20b%28c%29"' in markdown


def test_the_answer_marks_what_it_cites_and_lists_its_sources() -> None:
    transcript = run_with_search(DOCS, NEWS)
    answer = transcript.items[-1]
    assert isinstance(answer, AnswerItem)
    markdown = transcript.to_markdown()
    news = "https://www.example.com/news?q=a%20b%28c%29"
    tab = 'target="_blank" rel="noopener noreferrer"'
    assert (
        f'Python 3.14 is out.<sup><a href="{DOCS.url}" title="about What&#x27;s New In Python '
        f'3.14" {tab}>[1]</a></sup><sup><a href="{news}" title="about Python news" {tab}>[2]</a>'
        "</sup> More soon."
    ) in markdown
    assert (
        f'<b>Sources</b><br>[1] <a href="{DOCS.url}" {tab}>What&#x27;s New In Python 3.14</a> '
        f'· docs.python.org<br>[2] <a href="{news}" {tab}>Python news</a> · example.com</p>'
    ) in markdown
    assert markdown.index("Sources") < markdown.rindex("</div>")
    assert answer.plain.splitlines()[0] == "Python 3.14 is out. [1] [2] More soon."
    assert f"[1] What's New In Python 3.14 · {DOCS.url}" in answer.plain


def test_a_page_cited_again_keeps_its_number() -> None:
    transcript = run_with_search(DOCS)
    transcript.apply(TextDelta(" Again."))
    transcript.apply(TextCited((Citation(NEWS.url, NEWS.title, "n"), Citation(DOCS.url, "", "d"))))
    answer = transcript.items[-1]
    assert isinstance(answer, AnswerItem)
    assert "More soon. Again. [2] [1]\n" in answer.plain


def test_web_text_is_escaped_and_only_web_addresses_become_links() -> None:
    transcript = run_with_search(HOSTILE)
    markdown = transcript.to_markdown()
    assert "<img" not in markdown
    assert "javascript:alert(1)" not in re.findall(r'href="([^"]*)"', markdown)
    assert escape_html(HOSTILE.title) in markdown
    assert (
        "*bold* &#36;5 and &#36;6" in markdown
        and 'class="nbagent-sources tex2jax_ignore"' in markdown
    )
    assert "<sup>[1]</sup>" in markdown


def test_a_failed_search_says_why_in_one_line() -> None:
    card = run_with_search(error="max_uses_exceeded").items[1]
    assert isinstance(card, Call) and card.status == "error"
    assert item_text(card) == (
        '✗ web_search "python 3.14" → failed: the searches one request may make were used up '
        "(raise c.NbAgent.web_search max_uses for more)"
    )
    card_html = run_with_search(error="too_many_requests").to_markdown()
    assert card_html.count("too many searches at once") == 3  # the line, its title, the body
    assert '<p class="nbagent-web-error">failed: too many searches at once' in card_html
    unknown = WebSearched("s", "q", (), "new_code")
    assert web_summary(unknown) == "failed: new_code"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_a_link_is_a_web_address_that_cannot_break_out(url: str) -> None:
    href = web_link(url)
    if href is not None:
        assert re.match(r"(?i)https?://", href)
        assert not set(href) & set(" \n\t\"'<>()`\\")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.lists(st.integers(min_value=0, max_value=60), max_size=5))
def test_markers_go_where_the_passages_end_and_leave_the_text_whole(
    text: str, ends: list[int]
) -> None:
    source = Source(1, Citation("https://a.org/", "A", "a"))
    marks = [Mark(min(end, len(text)), source, "a") for end in ends]
    assert cited_text(text, marks).replace(" [1]", "") == text.replace(" [1]", "")
    plain = "".join(c for c in text if c.isalnum() or c in ".,\n") or "x"
    kept = [Mark(min(m.end, len(plain)), source, "a") for m in marks]
    rendered = model_html(plain, citation_inserts(kept))
    assert rendered.count("<sup>") == len({m.end for m in kept})
