"""Tests of nbagent.catalogue.rankers.keyword: the reference weights, required terms, ties, CJK."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.rankers.keyword import KeywordRanker, explain
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool


def ranker(*tools: Tool) -> KeywordRanker:
    r = KeywordRanker()
    r.index(tools)
    return r


def scores(r: KeywordRanker, query: str, limit: int = 50) -> dict[str, float]:
    return {hit.name: hit.score for hit in r.rank(parse_terms(query), limit)}


MCP = Tool(name="mcp__slack__send_message", description="Post a note.", is_mcp=True)
LOCAL = Tool(name="SendMessage", description="Post a note.")


@pytest.mark.parametrize(
    ("query", "mcp_score", "local_score"),
    [
        ("send", 12, 10),  # a whole name part
        ("sen", 6, 5),  # inside a name part
        ("note", 2, 2),  # the description
    ],
)
def test_reference_weights(query: str, mcp_score: float, local_score: float) -> None:
    assert scores(ranker(MCP, LOCAL), query) == {MCP.name: mcp_score, LOCAL.name: local_score}


def test_search_hint_scores_four_and_each_term_counts_once_at_its_best() -> None:
    t = Tool(name="Grep", description="Search files for grep patterns.", search_hint="grep regex")
    r = ranker(t)
    assert scores(r, "regex") == {"Grep": 4}
    assert scores(r, "grep") == {"Grep": 10}  # name beats hint and description
    assert scores(r, "grep regex patterns") == {"Grep": 16}


def test_required_terms_drop_tools_that_lack_them() -> None:
    slack = Tool(name="mcp__slack__send", description="", is_mcp=True)
    mail = Tool(name="mcp__mail__send", description="", is_mcp=True)
    r = ranker(slack, mail)
    assert scores(r, "+slack send") == {slack.name: 24}
    assert scores(r, "slack send") == {slack.name: 24, mail.name: 12}
    assert scores(r, "+nothing send") == {}


def test_zero_scores_are_never_returned_and_ties_break_by_name() -> None:
    tools = [Tool(name=n, description="same words") for n in ("Cc", "Aa", "Bb", "Zz")]
    r = ranker(*tools)
    assert [h.name for h in r.rank(parse_terms("words"), 3)] == ["Aa", "Bb", "Cc"]
    assert r.rank(parse_terms("absent"), 5) == []


def test_reasons_say_which_term_matched_where() -> None:
    [hit] = ranker(MCP).rank(parse_terms("slack note"), 5)
    assert hit.reasons == ("'slack' name part (12)", "'note' description (2)")


def test_multi_word_terms_need_every_word() -> None:
    t = Tool(name="Merge", description="Merge a pull-request into main.")
    r = ranker(t)
    assert scores(r, "pull-request") == {"Merge": 2}
    assert scores(r, "pull-rebase") == {}


def test_chinese_and_japanese_descriptions_are_found_in_their_language() -> None:
    zh = Tool(name="mcp__im__post", description="向频道发送一条消息", is_mcp=True)
    ja = Tool(name="mcp__fs__read", description="ファイルの内容を読み込みます", is_mcp=True)
    en = Tool(name="mcp__fs__write", description="Write a file", is_mcp=True)
    r = ranker(zh, ja, en)
    assert list(scores(r, "发送消息")) == [zh.name]
    assert list(scores(r, "ファイル 読み込み")) == [ja.name]
    assert scores(r, "发送消息到频道")[zh.name] > 0  # a long run: a third of its bigrams suffice
    assert scores(r, "天气预报") == {}


def test_reindexing_reuses_analysed_tools_and_forgets_removed_ones() -> None:
    r = ranker(MCP, LOCAL)
    doc = r.slots.docs[r.slots.positions[MCP.name]]
    r.index([MCP])
    assert r.slots.docs[r.slots.positions[MCP.name]] is doc
    assert LOCAL.name not in r.slots.positions
    assert scores(r, "send") == {MCP.name: 12}


WORDS = st.sampled_from(
    [
        "send",
        "message",
        "slack",
        "mess",
        "file",
        "read",
        "a",
        "发送",
        "消息",
        "ファイル",
        "get",
        "issue",
        "issues",
        "pull-request",
    ]
)


@st.composite
def tools_and_query(draw: st.DrawFn) -> tuple[list[Tool], str]:
    tools = []
    for i in range(draw(st.integers(1, 6))):
        words = draw(st.lists(WORDS, max_size=6))
        parts = draw(
            st.lists(
                st.sampled_from(["send", "message", "get", "issues", "file"]),
                min_size=1,
                max_size=3,
            )
        )
        tools.append(
            Tool(
                name=("mcp__s__" if draw(st.booleans()) else "") + "_".join(parts) + str(i),
                description=" ".join(words),
                search_hint=" ".join(draw(st.lists(WORDS, max_size=2))),
                is_mcp=draw(st.booleans()),
            )
        )
    query = " ".join(
        ("+" if draw(st.booleans()) else "") + w
        for w in draw(st.lists(WORDS, min_size=1, max_size=4))
    )
    return tools, query


@given(tools_and_query())
def test_indexed_scores_equal_the_direct_reference_scoring(case: tuple[list[Tool], str]) -> None:
    tools, query = case
    terms = parse_terms(query)
    r = ranker(*tools)
    expected = {}
    for tool in tools:
        doc = r.slots.docs[r.slots.positions[tool.name]]
        per_term = [explain(term, doc)[0] for term in terms]
        if all(s > 0 for s, t in zip(per_term, terms, strict=True) if t.required) and sum(per_term):
            expected[tool.name] = round(sum(per_term), 3)
    assert scores(r, query) == expected
