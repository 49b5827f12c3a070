"""Tests of nbagent.catalogue.rankers.semantic: background embedding, the averaged similarity,
caching."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.rankers.fields import ToolFields
from nbagent.catalogue.rankers.semantic import (
    WINDOW,
    SemanticIndex,
    pooled,
    query_texts,
    rescaled,
    standardised,
)
from nbagent.catalogue.toolsearch import parse_terms
from nbagent.core.tool import Tool


def mcp(name: str, description: str) -> Tool:
    return Tool(name=name, description=description, is_mcp=True)


SLACK = mcp("mcp__slack__post_message", "Post a message to a channel.")
FILES = mcp("mcp__fs__read_file", "Read the contents of a file.")
ZH = mcp("mcp__im__fa_song", "向频道发送一条消息")


def ready(embedders: list[Any], tools: list[Tool], **kwargs: Any) -> SemanticIndex:
    index = SemanticIndex(embedders, cache_dir=None, **kwargs)
    index.index(tools)
    assert index.wait(30)
    return index


def test_index_returns_at_once_and_scores_only_when_the_vectors_are_ready(
    hashing: Any, gated: Any
) -> None:
    gated = gated(hashing)
    index = SemanticIndex([gated], cache_dir=None)
    index.index([SLACK, FILES])
    assert gated.entered.wait(30)
    assert not index.ready and index.similarity(parse_terms("read file")) is None
    assert index.status.startswith("embedding the tools: 0 of 2")
    gated.gate.set()
    assert index.wait(30) and index.ready and index.status == "ready"
    scores = index.similarity(parse_terms("read file contents")).values
    assert scores is not None and scores.argmax() == 1


def test_a_newer_tool_set_supersedes_the_one_being_embedded(hashing: Any, gated: Any) -> None:
    gated = gated(hashing)
    index = SemanticIndex([gated], cache_dir=None)
    index.index([SLACK])
    assert gated.entered.wait(30)
    index.index([SLACK, FILES])
    gated.gate.set()
    assert index.wait(30)
    scores = index.similarity(parse_terms("read file")).values
    assert scores is not None and len(scores) == 2


def test_each_tool_text_is_embedded_once(hashing: Any) -> None:
    index = ready([hashing], [SLACK, FILES])
    index.index([FILES])
    index.wait(30)
    index.index([FILES, SLACK, ZH])
    index.wait(30)
    tool_texts = [t for t in hashing.embedded if t.startswith(("slack:", "fs:", "im:"))]
    assert len(tool_texts) == 3


def test_placing_tools_embeds_only_the_new_ones_at_their_positions(hashing: Any) -> None:
    index = ready([hashing], [SLACK, FILES])
    hashing.embedded.clear()
    index.place(3, {0: None, 2: ZH})
    assert index.wait(30) and index.ready
    assert [t for t in hashing.embedded if ":" in t] == [ToolFields.of(ZH).text]
    scores = index.similarity(parse_terms("read file")).values
    assert len(scores) == 3 and np.isnan(scores[0]) and scores[1] == 1.0


def test_vectors_persist_on_disk_across_indexes(
    hashing: Any, new_hashing: Any, tmp_path: Path
) -> None:
    first = SemanticIndex([hashing], cache_dir=tmp_path)
    first.index([SLACK, FILES])
    assert first.wait(30)
    second = new_hashing()
    index = SemanticIndex([second], cache_dir=tmp_path)
    index.index([SLACK, FILES])
    assert index.wait(30)
    assert second.embedded == []


def test_a_text_the_model_cannot_embed_gets_no_similarity(refusing: Any) -> None:
    index = ready([refusing("fs:", ValueError("cannot read this text"))], [SLACK, FILES, ZH])
    scores = index.similarity(parse_terms("post message")).values
    assert scores is not None and np.isnan(scores[1]) and scores[0] == 1.0 and scores[2] == 0
    [reason] = index.caches[0].failed.values()
    assert reason == "ValueError: cannot read this text"


def test_models_that_fail_to_load_leave_the_index_idle_and_say_why() -> None:
    def broken() -> Any:
        raise RuntimeError("no weights here")

    index = SemanticIndex([broken], cache_dir=None)
    index.index([SLACK])
    assert index.wait(30) and not index.ready
    assert index.status == "embeddings unavailable: RuntimeError: no weights here"
    assert index.similarity(parse_terms("post")) is None


def test_an_english_only_embedder_sits_out_a_cjk_query(hashing: Any) -> None:
    index = ready([hashing], [ZH, SLACK])
    assert index.similarity(parse_terms("发送消息")) is None
    hashing.multilingual = True
    assert index.similarity(parse_terms("发送消息")) is not None


def test_similarities_are_averaged_with_the_weights(hashing: Any, new_hashing: Any) -> None:
    other = new_hashing()
    other.model_id = "test/other"
    both = ready([hashing, other], [SLACK, FILES], weights=[0.7, 0.3])
    one = ready([hashing], [SLACK, FILES])
    terms = parse_terms("post a message")
    assert np.allclose(both.similarity(terms).values, one.similarity(terms).values)


@given(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=30))
def test_rescaled_similarities_span_zero_to_one(values: list[float]) -> None:
    array = np.array(values, dtype=np.float32)
    mask = np.ones(len(values), dtype=bool)
    out = rescaled(standardised(array, mask), mask)
    assert np.all((out >= 0) & (out <= 1 + 1e-6))
    if array.max() - array.min() > 1e-3:
        assert out[array.argmax()] == pytest.approx(1) and out[array.argmin()] == 0


@given(st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), unique=True, max_size=60))
def test_a_long_query_is_embedded_whole_and_in_windows_covering_it(words: list[str]) -> None:
    query = " ".join(["find", *words])
    texts = query_texts(parse_terms(query))
    whole = " ".join(term.text for term in parse_terms(query))
    assert texts[0] == whole
    windows = texts[1:]
    if len(whole.split()) <= WINDOW:
        assert windows == []
    else:
        assert " ".join(windows) == whole
        assert all(0 < len(window.split()) <= WINDOW for window in windows)


def test_a_short_query_keeps_its_similarity_and_a_long_one_adds_its_best_window() -> None:
    whole, first, second = np.array([0.0, 1.0]), np.array([2.0, 0.0]), np.array([0.0, 3.0])
    assert pooled([whole]) is whole
    assert np.allclose(pooled([whole, first, second], 0.5), [1.0, 2.0])
    assert np.allclose(pooled([whole, first, second], 0.0), whole)


def test_a_tool_only_the_last_step_of_a_long_task_asks_for_comes_up(
    hashing: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    semantic = importlib.import_module("nbagent.catalogue.rankers.semantic")
    tools = [
        mcp("mcp__wiki__search", "Search encyclopedia articles about history, science and art."),
        mcp("mcp__wiki__summarise", "Summarise an encyclopedia article about history or art."),
        mcp("mcp__wiki__links", "List the links of an encyclopedia article."),
        mcp("mcp__wiki__sections", "List the sections of an article about science."),
        mcp("mcp__units__convert", "Convert a length between miles and kilometres."),
    ]
    index = ready([hashing], tools)
    task = parse_terms(
        "I am writing a long report on the history of science and art in Europe, so search "
        "the encyclopedia articles about history, list the sections and links of each "
        "article, summarise every article about art and science for the report, and at the "
        "end convert miles to kilometres"
    )
    # windows of 16 terms (the fitted WINDOW changes with the dev sets; this cut is the test's)
    monkeypatch.setattr(semantic, "query_texts", lambda terms: query_texts(terms, 16))
    assert len(semantic.query_texts(task)) > 1
    assert index.similarity(task).values.argmax() == 4
    monkeypatch.setattr(semantic, "query_texts", lambda terms: query_texts(terms, len(terms)))
    assert index.similarity(task).values.argmin() == 4


def test_an_index_dropped_by_its_owner_is_freed_with_its_vectors(hashing: Any) -> None:
    import gc
    import weakref

    index = ready([hashing], [SLACK, FILES])
    dropped = weakref.ref(index)
    del index
    gc.collect()
    assert dropped() is None
