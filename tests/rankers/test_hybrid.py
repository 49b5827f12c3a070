"""Tests of nbagent.rankers.hybrid: the weighted sum, required terms, index reuse."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.rankers.bm25 import BM25Ranker
from nbagent.rankers.hybrid import HybridRanker
from nbagent.rankers.semantic import SemanticRanker
from nbagent.search import parse_terms
from nbagent.tool import Tool

ISSUE = Tool(name="mcp__github__create_issue", description="Open a ticket.", is_mcp=True)
TIME = Tool(name="mcp__time__now", description="Current time in a timezone.", is_mcp=True)


def hybrid(embedder: Any, weight: float) -> HybridRanker:
    r = HybridRanker(BM25Ranker(), SemanticRanker(embedder, cache_dir=None), weight)
    r.index([ISSUE, TIME])
    return r


@pytest.mark.parametrize("weight", [0.0, 0.15, 0.5, 1.0])
def test_score_is_the_weighted_sum_of_normalised_bm25_and_cosine(
    hashing: Any, weight: float
) -> None:
    r = hybrid(hashing, weight)
    terms = parse_terms("github issue timezone")
    lexical = r.lexical.scores(terms)
    cosine = r.semantic.scores(terms).clip(0)
    expected = weight * lexical / lexical.max() + (1 - weight) * cosine
    hits = {hit.name: hit.score for hit in r.rank(terms, 5)}
    for position, tool in enumerate([ISSUE, TIME]):
        if expected[position] > 0:
            assert hits[tool.name] == pytest.approx(expected[position], abs=1e-3)


def test_required_terms_are_applied(hashing: Any) -> None:
    r = hybrid(hashing, 0.15)
    assert [hit.name for hit in r.rank(parse_terms("+timezone issue"), 5)] == [TIME.name]


def test_reasons_show_both_components(hashing: Any) -> None:
    [hit, *_] = hybrid(hashing, 0.15).rank(parse_terms("issue"), 5)
    assert hit.name == ISSUE.name
    assert hit.reasons[0].startswith("bm25 1.000") and hit.reasons[1].startswith("cosine ")


def test_an_empty_index_finds_nothing(hashing: Any) -> None:
    r = HybridRanker(BM25Ranker(), SemanticRanker(hashing, cache_dir=None))
    r.index([])
    assert r.rank(parse_terms("issue"), 5) == []


def test_cjk_queries_use_bm25_alone_with_an_english_only_embedder(
    hashing: Any,
) -> None:
    zh = Tool(name="mcp__im__post", description="向频道发送一条消息", is_mcp=True)
    r = HybridRanker(BM25Ranker(), SemanticRanker(hashing, cache_dir=None), 0.15)
    r.index([zh, TIME])
    [hit] = r.rank(parse_terms("发送消息"), 5)
    assert (hit.name, hit.score) == (zh.name, 1.0)
    assert hit.reasons[1] == "cosine 0.000"
    hashing.multilingual = True
    [hit, *_] = r.rank(parse_terms("发送消息"), 5)
    assert hit.score < 1.0
