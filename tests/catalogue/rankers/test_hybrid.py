"""Tests of nbagent.catalogue.rankers.hybrid: the weighted sum, the BM25 fallback, required
terms."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.rankers.bm25 import BM25Ranker
from nbagent.catalogue.rankers.hybrid import NO_LEXICAL_BELOW, HybridRanker, lexical_share
from nbagent.catalogue.rankers.semantic import SemanticIndex, query_texts
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool

ISSUE = Tool(name="mcp__github__create_issue", description="Open a ticket.", is_mcp=True)
TIME = Tool(name="mcp__time__now", description="Current time in a timezone.", is_mcp=True)


def hybrid(embedder: Any, weight: float, cutoff: float = 0.0) -> HybridRanker:
    r = HybridRanker(
        BM25Ranker(),
        SemanticIndex([embedder], cache_dir=None),
        weight,
        cutoff,
        full_lexical_from=0.0,
    )
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
    assert closest.startswith('closest to "')
    assert "miles" in closest or "kilometres" in closest  # the part about units, wherever cut
    short = r.rank(parse_terms("convert miles"), 5)
    assert all(not reason.startswith("closest") for hit in short for reason in hit.reasons)


CHARGER = Tool(
    name="mcp__osm__find_ev_charging_stations",
    description="Locate electric vehicle charging stations near a location.",
    is_mcp=True,
)
PARKING = Tool(
    name="mcp__osm__find_parking_facilities",
    description="Locate parking facilities near a location, where I can leave my car.",
    is_mcp=True,
)
SYNONYMS = {"plug": "charging", "tesla": "electric vehicle", "juice": "charging"}


class SynonymEmbedder:
    """Embeds like the hashing embedder after rewriting synonyms: a paraphrase that shares no
    word with its target is still similar to it."""

    model_id = "test/synonyms"
    dimension = 64
    multilingual = False

    def __init__(self, hashing: Any) -> None:
        self.inner = hashing
        self.queries: list[list[str]] = []

    def embed(self, texts: Any) -> Any:
        rewritten = [
            " ".join(SYNONYMS.get(word, word) for word in text.lower().split()) for text in texts
        ]
        return self.inner.embed(rewritten)

    def embed_query(self, texts: Any) -> Any:
        self.queries.append(list(texts))
        return self.embed(texts)


def paraphrase_ranker(hashing: Any, **options: float) -> HybridRanker:
    r = HybridRanker(
        BM25Ranker(), SemanticIndex([SynonymEmbedder(hashing)], cache_dir=None), **options
    )
    r.index([CHARGER, PARKING])
    assert r.wait(30)
    return r


def test_a_paraphrase_sharing_no_word_with_its_target_ranks_it_by_similarity(
    hashing: Any,
) -> None:
    query = parse_terms("plug in my tesla")
    assert float(paraphrase_ranker(hashing).lexical.coverage(query).max()) < 0.5
    fixed = paraphrase_ranker(hashing, lexical_weight=0.9, full_lexical_from=0.0, cutoff=0.0)
    assert fixed.rank(query, 2)[0].name == PARKING.name  # "can", "my": BM25 picks the decoy
    adaptive = paraphrase_ranker(
        hashing, lexical_weight=0.9, no_lexical_below=0.5, full_lexical_from=0.8, cutoff=0.0
    )
    similarity = adaptive.semantic.similarity(query).values
    assert list(similarity) == [1.0, 0.0]  # the decoy is the least similar of the two
    # similarity alone: the decoy's BM25 match adds nothing, so it scores 0 and is dropped
    assert [(h.name, h.score) for h in adaptive.rank(query, 2)] == [(CHARGER.name, 1.0)]


def test_by_default_a_query_few_of_whose_words_a_tool_holds_ranks_as_the_embeddings_alone(
    hashing: Any,
) -> None:
    query = parse_terms("can I plug in my tesla")
    default = paraphrase_ranker(hashing)
    assert 0 < float(default.lexical.coverage(query).max()) < NO_LEXICAL_BELOW
    semantic = paraphrase_ranker(hashing, lexical_weight=0.0)
    assert default.rank(query, 2) == semantic.rank(query, 2)


def test_a_query_a_tool_covers_keeps_the_full_lexical_share(hashing: Any) -> None:
    r = paraphrase_ranker(
        hashing, lexical_weight=0.5, no_lexical_below=0.5, full_lexical_from=0.8, cutoff=0.0
    )
    terms = parse_terms("parking facilities")
    lexical = r.lexical.scores(terms)
    expected = 0.5 * lexical / lexical.max() + 0.5 * r.semantic.similarity(terms).values
    hits = {hit.name: hit.score for hit in r.rank(terms, 2)}
    assert hits[PARKING.name] == pytest.approx(float(expected[1]), abs=1e-3)


def test_a_long_query_keeps_the_full_lexical_share_however_little_a_tool_covers(
    hashing: Any,
) -> None:
    r = paraphrase_ranker(
        hashing, lexical_weight=0.5, no_lexical_below=0.5, full_lexical_from=0.8, cutoff=0.0
    )
    terms = parse_terms(
        "we land late on friday with two bags, a stroller and a grumpy toddler, so first "
        "we need parking facilities close to the arrivals hall"
    )
    assert len(terms) > 16 and r.lexical.coverage(terms).max() < 0.5
    lexical = r.lexical.scores(terms)
    expected = 0.5 * lexical / lexical.max() + 0.5 * r.semantic.similarity(terms).values
    hits = {hit.name: hit.score for hit in r.rank(terms, 2)}
    assert hits[PARKING.name] == pytest.approx(float(expected[1]), abs=1e-3)


@given(
    weight=st.floats(0, 1),
    low=st.floats(0, 1),
    span=st.floats(0, 1),
    coverages=st.lists(st.floats(0, 1), min_size=2, max_size=8),
)
def test_the_lexical_share_grows_with_coverage_from_none_to_the_full_weight(
    weight: float, low: float, span: float, coverages: list[float]
) -> None:
    high = low + span
    shares = [lexical_share(weight, c, low, high) for c in sorted(coverages)]
    assert all(0 <= s <= weight for s in shares)
    assert shares == sorted(shares)
    assert lexical_share(weight, high, low, high) == weight
    assert lexical_share(weight, 0.7, 0.0, 0.0) == weight
    if low < high:
        assert lexical_share(weight, low, low, high) == 0.0


@pytest.mark.parametrize(
    "query",
    [
        "plug in my tesla",
        "find somewhere to leave the car near the station tonight, and then a place where "
        "an electric vehicle can get some juice before the long drive back home tomorrow",
    ],
)
def test_a_search_embeds_its_query_in_one_batch_per_embedder(hashing: Any, query: str) -> None:
    first, second = SynonymEmbedder(hashing), SynonymEmbedder(hashing)
    second.model_id = "test/synonyms-2"
    r = HybridRanker(BM25Ranker(), SemanticIndex([first, second], cache_dir=None))
    r.index([CHARGER, PARKING])
    assert r.wait(30)
    r.rank(parse_terms(query), 5)
    assert len(first.queries) == len(second.queries) == 1
    assert first.queries[0] == query_texts(parse_terms(query))  # the whole and any windows
