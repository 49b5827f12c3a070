"""Tests of nbagent.catalogue.rankers.hybrid: the weighted sum, the BM25 fallback, required
terms."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.catalogue.rankers.bm25 import BM25Ranker
from nbagent.catalogue.rankers.hybrid import HybridRanker
from nbagent.catalogue.rankers.semantic import SemanticIndex
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool

ISSUE = Tool(name="mcp__github__create_issue", description="Open a ticket.", is_mcp=True)
TIME = Tool(name="mcp__time__now", description="Current time in a timezone.", is_mcp=True)


def hybrid(embedder: Any, weight: float, cutoff: float = 0.0) -> HybridRanker:
    r = HybridRanker(BM25Ranker(), SemanticIndex([embedder], cache_dir=None), weight, cutoff)
    r.index([ISSUE, TIME])
    assert r.wait(30)
    return r


@pytest.mark.parametrize("weight", [0.0, 0.15, 0.5, 1.0])
def test_score_is_the_weighted_sum_of_normalised_bm25_and_similarity(
    hashing: Any, weight: float
) -> None:
    r = hybrid(hashing, weight)
    terms = parse_terms("github issue timezone")
    lexical = r.lexical.scores(terms)
    similarity = r.semantic.similarity(terms).values
    expected = weight * lexical / lexical.max() + (1 - weight) * similarity
    hits = {hit.name: hit.score for hit in r.rank(terms, 5)}
    for position, tool in enumerate([ISSUE, TIME]):
        if expected[position] > 0:
            assert hits[tool.name] == pytest.approx(expected[position], abs=1e-3)
    assert r.ranking == "hybrid"


def test_hits_below_the_cutoff_share_of_the_best_are_dropped(hashing: Any) -> None:
    assert len(hybrid(hashing, 0.15, cutoff=0.0).rank(parse_terms("issue"), 5)) == 1
    r = hybrid(hashing, 0.15, cutoff=0.0)
    r.semantic._weights = [1.0]
    names = {h.name for h in r.rank(parse_terms("github issue timezone"), 5)}
    assert names == {ISSUE.name, TIME.name}
    r.cutoff = 0.99
    assert len(r.rank(parse_terms("github issue timezone"), 5)) == 1


def test_required_terms_are_applied(hashing: Any) -> None:
    r = hybrid(hashing, 0.15)
    assert [hit.name for hit in r.rank(parse_terms("+timezone issue"), 5)] == [TIME.name]


def test_reasons_show_both_components(hashing: Any) -> None:
    [hit, *_] = hybrid(hashing, 0.15).rank(parse_terms("issue"), 5)
    assert hit.name == ISSUE.name
    assert hit.reasons[0].startswith("bm25 1.000")
    assert hit.reasons[1].startswith("relative similarity ")


def test_an_empty_index_finds_nothing(hashing: Any) -> None:
    r = HybridRanker(BM25Ranker(), SemanticIndex([hashing], cache_dir=None))
    r.index([])
    assert r.rank(parse_terms("issue"), 5) == []


def test_bm25_ranks_while_the_embeddings_are_not_ready_then_the_hybrid_score(
    hashing: Any, gated: Any
) -> None:
    slow = gated(hashing)
    r = HybridRanker(BM25Ranker(), SemanticIndex([slow], cache_dir=None), 0.15, 0.0)
    r.index([ISSUE, TIME])
    assert slow.entered.wait(30)
    assert r.ranking == "bm25 (embedding the tools: 0 of 2 done)"
    [hit] = r.rank(parse_terms("timezone"), 5)
    assert (hit.name, hit.score) == (TIME.name, 1.0)
    assert hit.reasons == ("bm25 1.000 (normalised)",)
    slow.gate.set()
    assert r.wait(30) and r.ranking == "hybrid"
    assert r.rank(parse_terms("timezone"), 5)[0].reasons[1].startswith("relative similarity ")


def test_a_tool_that_cannot_be_embedded_still_ranks_by_bm25(refusing: Any) -> None:
    embedder = refusing("time:", UnicodeError("unreadable"))
    r = HybridRanker(BM25Ranker(), SemanticIndex([embedder], cache_dir=None), 0.15, 0.0)
    r.index([ISSUE, TIME])
    assert r.wait(30) and r.ranking == "hybrid"
    [hit] = r.rank(parse_terms("timezone"), 5)
    assert (hit.name, hit.score) == (TIME.name, 1.0)
    assert hit.reasons[1] == "not embedded: ranked by bm25"


def test_cjk_queries_use_bm25_alone_with_an_english_only_embedder(hashing: Any) -> None:
    zh = Tool(name="mcp__im__post", description="向频道发送一条消息", is_mcp=True)
    r = HybridRanker(BM25Ranker(), SemanticIndex([hashing], cache_dir=None), 0.15)
    r.index([zh, TIME])
    assert r.wait(30)
    [hit] = r.rank(parse_terms("发送消息"), 5)
    assert (hit.name, hit.score) == (zh.name, 1.0)
    assert hit.reasons[1] == "no embedder reads this language"
    hashing.multilingual = True
    [hit, *_] = r.rank(parse_terms("发送消息"), 5)
    assert hit.reasons[1].startswith("relative similarity ")


def test_tool_search_embeds_new_tools_before_anyone_searches_and_says_how_it_ranked(
    hashing: Any, gated: Any
) -> None:
    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.catalogue.toolsearch import ToolSearch

    slow = gated(hashing, marker="github:")
    registry = ToolRegistry([TIME])
    registry.override(TIME.name, True)
    ranker = HybridRanker(BM25Ranker(), SemanticIndex([slow], cache_dir=None), 0.15, 0.0)
    search = ToolSearch(registry, ranker)
    search.prepare()
    assert search.wait(30)
    registry.register(ISSUE)
    registry.override(ISSUE.name, True)
    assert slow.entered.wait(30)  # the registry change alone started the embedding
    first = search.tool.handler(query="ticket")
    assert first.metadata["ranking"] == "bm25 (embedding the tools: 1 of 2 done)"
    assert [h.name for h in first.metadata["hits"]] == [ISSUE.name]
    slow.gate.set()
    assert search.wait(30)
    second = search.tool.handler(query="ticket")
    assert second.metadata["ranking"] == "hybrid"
    assert second.metadata["hits"][0].reasons[1].startswith("relative similarity ")


def test_a_long_querys_hits_name_the_part_of_it_closest_to_each_tool(hashing: Any) -> None:
    convert = Tool(
        name="mcp__units__convert",
        description="Convert a length between miles and kilometres.",
        is_mcp=True,
    )
    r = HybridRanker(BM25Ranker(), SemanticIndex([hashing], cache_dir=None), cutoff=0.0)
    r.index([ISSUE, TIME, convert])
    assert r.wait(30)
    task = parse_terms(
        "Open the issue tracker of our github repository and file an issue about the broken "
        "timezone handling in the scheduler that users keep reporting, then convert miles to "
        "kilometres for the distances table"
    )
    reasons = {hit.name: hit.reasons for hit in r.rank(task, 5)}
    closest = reasons[convert.name][-1]
    assert closest.startswith('closest to "') and "convert miles" in closest
    short = r.rank(parse_terms("convert miles"), 5)
    assert all(not reason.startswith("closest") for hit in short for reason in hit.reasons)
