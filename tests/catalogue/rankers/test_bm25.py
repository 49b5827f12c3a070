"""Tests of nbagent.catalogue.rankers.bm25: field weights, required terms, ties, CJK, incremental
index."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.catalogue.rankers.bm25 import BM25Ranker, top
from nbagent.catalogue.rankers.fields import FIELDS
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool


def mcp(name: str, description: str = "", **kwargs) -> Tool:
    return Tool(name=name, description=description, is_mcp=True, **kwargs)


def ranked(r: BM25Ranker, query: str, limit: int = 10) -> list[str]:
    return [hit.name for hit in r.rank(parse_terms(query), limit)]


def indexed(*tools: Tool, **weights: float) -> BM25Ranker:
    r = BM25Ranker({**dict.fromkeys(FIELDS, 1.0), **weights})
    r.index(tools)
    return r


def default(*tools: Tool) -> BM25Ranker:
    r = BM25Ranker()
    r.index(tools)
    return r


ISSUE = mcp("mcp__github__create_issue", "Open a new ticket in a repository.")
PR = mcp("mcp__github__create_pull_request", "Open a pull request; mentions an issue.")
TIME = mcp("mcp__time__get_current_time", "Current time in a timezone.")


def test_a_name_match_beats_a_description_match() -> None:
    assert ranked(default(ISSUE, PR, TIME), "issue") == [ISSUE.name, PR.name]


def test_field_weights_decide_between_fields() -> None:
    name_only = indexed(ISSUE, PR, name=1.0, description=0.0)
    description_only = indexed(ISSUE, PR, name=0.0, description=1.0)
    assert ranked(name_only, "issue") == [ISSUE.name]
    assert ranked(description_only, "issue") == [PR.name]


def test_plurals_match_singular_names() -> None:
    assert ranked(default(ISSUE, TIME), "issues") == [ISSUE.name]


def test_required_terms_drop_tools_that_lack_them() -> None:
    r = default(ISSUE, PR, TIME)
    assert ranked(r, "+pull issue") == [PR.name]
    assert ranked(r, "+nothing issue") == []


def test_no_shared_word_means_no_hit() -> None:
    assert ranked(default(ISSUE, PR, TIME), "weather forecast") == []


def test_ties_break_by_name() -> None:
    tools = [mcp(f"mcp__s__{n}", "same words") for n in ("cc", "aa", "bb")]
    assert ranked(default(*tools), "words", 2) == ["mcp__s__aa", "mcp__s__bb"]


def test_chinese_and_japanese_queries_match_without_spaces() -> None:
    zh = mcp("mcp__im__post", "向频道发送一条消息")
    ja = mcp("mcp__fs__read", "ファイルの内容を読み込みます")
    r = default(zh, ja, TIME)
    assert ranked(r, "发送消息")[0] == zh.name
    assert ranked(r, "ファイル読み込み")[0] == ja.name


def test_parameters_are_searched() -> None:
    tool = mcp(
        "mcp__geo__lookup",
        "Look something up.",
        input_schema={
            "type": "object",
            "properties": {"latitude": {"type": "number", "description": "Degrees north"}},
        },
    )
    assert ranked(default(tool, TIME), "degrees north") == [tool.name]


def test_reasons_name_the_fields_that_matched() -> None:
    [hit] = default(ISSUE).rank(parse_terms("github issue ticket"), 5)
    assert hit.reasons == ("name: issue", "server: github", "description: ticket")


def test_reindexing_analyses_only_new_tools_and_forgets_removed_ones() -> None:
    r = default(ISSUE, PR)
    position = r.slots.positions[ISSUE.name]
    r.index([ISSUE, TIME])
    assert r.slots.positions[ISSUE.name] == position
    assert PR.name not in r.slots.positions
    assert ranked(r, "pull") == []
    assert ranked(r, "time") == [TIME.name]


def test_top_keeps_positive_scores_best_first_then_by_name() -> None:
    import numpy as np

    scores = np.array([0.0, 2.0, 1.0, 2.0, -1.0])
    assert top(scores, ["e", "d", "c", "b", "a"], 10) == [3, 1, 2]
    assert top(scores, ["e", "d", "c", "b", "a"], 1) == [3]


WORDS = st.sampled_from(["send", "message", "file", "read", "issue", "发送", "消息", "list"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(WORDS, max_size=5), min_size=1, max_size=6),
    st.lists(WORDS, min_size=1, max_size=3),
)
def test_incremental_index_ranks_like_a_fresh_one(
    descriptions: list[list[str]], query: list[str]
) -> None:
    """Adding and removing tools gives the same ranking as indexing the final set afresh."""
    tools = [mcp(f"mcp__s__t{i}", " ".join(words)) for i, words in enumerate(descriptions)]
    grown = BM25Ranker()
    grown.index(tools[: len(tools) // 2])
    grown.index(tools)
    grown.index(tools[1:])
    fresh = default(*tools[1:])
    terms = parse_terms(" ".join(query))
    assert grown.rank(terms, 10) == fresh.rank(terms, 10)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(WORDS, max_size=5), min_size=1, max_size=6),
    st.lists(WORDS, min_size=1, max_size=3),
)
def test_required_terms_agree_with_the_direct_check(
    descriptions: list[list[str]], required: list[str]
) -> None:
    """The mask read off the score matrices equals checking each tool's tokens."""
    from nbagent.catalogue.rankers.fields import ToolFields, has_term

    tools = [mcp(f"mcp__s__t{i}", " ".join(words)) for i, words in enumerate(descriptions)]
    r = BM25Ranker(dict.fromkeys(FIELDS, 1.0))
    r.index(tools)
    terms = parse_terms(" ".join("+" + word for word in required))
    expected = [
        all(has_term(ToolFields.of(tool).vocabulary, term) for term in terms) for tool in tools
    ]
    assert r.allowed(terms).tolist() == expected


def test_coverage_is_the_idf_weighted_share_of_the_query_a_tool_contains() -> None:
    r = default(ISSUE, PR, TIME)
    assert r.coverage(parse_terms("create issue")).tolist() == [1.0, 1.0, 0.0]
    issue, pr, time = r.coverage(parse_terms("open timezone")).tolist()
    assert issue == pr and 0 < issue < time < 1  # "timezone" is rarer than "open"
    # a word no tool has weighs the most, so a query of mostly unknown words is little covered
    assert r.coverage(parse_terms("current zebra quokka")).max() < 0.5
    assert not r.coverage([]).any()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(WORDS, max_size=5), min_size=1, max_size=6),
    st.lists(WORDS, min_size=1, max_size=3),
)
def test_coverage_is_a_share_and_full_for_a_tool_with_every_query_word(
    descriptions: list[list[str]], query: list[str]
) -> None:
    tools = [mcp(f"mcp__s__t{i}", " ".join(words)) for i, words in enumerate(descriptions)]
    covering = mcp("mcp__s__all", " ".join(query))
    r = default(*tools, covering)
    coverage = r.coverage(parse_terms(" ".join(query)))
    assert ((coverage >= 0) & (coverage <= 1 + 1e-6)).all()
    assert coverage[-1] == 1.0
