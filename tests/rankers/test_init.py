"""Tests of nbagent.rankers: every ranker is registered by name and loads its imports lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nbagent.rankers.bm25 import BM25Ranker
from nbagent.rankers.hybrid import HybridRanker
from nbagent.rankers.semantic import SemanticRanker
from nbagent.search import RANKERS, make_ranker


@pytest.mark.parametrize(
    ("name", "kind"),
    [("bm25", BM25Ranker), ("semantic", SemanticRanker), ("hybrid", HybridRanker)],
)
def test_rankers_are_registered_by_name(name: str, kind: type) -> None:
    ranker = make_ranker(name)
    assert isinstance(ranker, kind) and ranker.name == name
    assert set(RANKERS) >= {"keyword", "bm25", "semantic", "hybrid"}


def test_importing_the_search_loads_no_heavy_library() -> None:
    code = (
        "import sys, nbagent.search, nbagent.rankers, nbagent.preload, nbagent.promotion; "
        "from nbagent.search import make_ranker; make_ranker('hybrid'); "
        "print(sorted(m for m in ('numpy', 'bm25s', 'threadpoolctl') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
