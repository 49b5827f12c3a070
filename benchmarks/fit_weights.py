"""Fit the BM25 field weights and the hybrid ranker's weights on the dev splits only.

The objective is the mean of two dev figures: MRR@5 of the 43 ``dev`` keyword queries (over
github-mcp-server and the reference servers) and Recall@5 of the 74 hand-written task-style
queries over the LiveMCPBench tools (``benchmarks/data/``). Neither the keyword ``test``
split, nor the multilingual queries, nor the LiveMCPBench queries are read.

1. BM25: coordinate ascent over :data:`GRID` for each field weight (three sweeps, from all
   weights 1), scoring from per-field BM25 scores computed once per query.
2. Hybrid: with those weights, a grid over MiniLM's share of the embeddings' average (0 to 1
   in steps of 0.1, the multilingual encoder having the rest) and the lexical weight (0 to 1
   in steps of 0.05); ties go to the smaller lexical weight, then the smaller MiniLM share.
3. The cut-off: the largest share of the best score (0 to 0.9 in steps of 0.05) whose
   objective is no lower than with no cut-off, at 5 hits and at 10.

It prints the fitted values; ``nbagent/rankers/bm25.py`` (``FIELD_WEIGHTS``),
``nbagent/rankers/embedder.py`` (``DEFAULT_EMBEDDERS``) and ``nbagent/rankers/hybrid.py``
(``LEXICAL_WEIGHT``, ``CUTOFF``) hold them.

Run ``python benchmarks/fit_weights.py`` from the repo root (embedding the LiveMCPBench
tools takes a minute or two the first time; vectors are cached under ``~/.nbagent``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from catalogue import Catalogue, build_catalogue, livemcpbench_definitions, run_line
from devsets import keyword_catalogue, keyword_queries, task_dev_queries

from nbagent.rankers.bm25 import BM25Ranker
from nbagent.rankers.embedder import DEFAULT_CACHE_DIR, DEFAULT_EMBEDDERS, EmbeddingCache
from nbagent.rankers.fields import FIELDS, ToolFields
from nbagent.rankers.semantic import only_cjk, rescaled, standardised
from nbagent.search import parse_terms

GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0)
"""The values tried for each field weight."""
SWEEPS = 3
"""Rounds of coordinate ascent."""
SHARES = np.round(np.arange(0, 1.0001, 0.1), 2)
"""The MiniLM shares tried."""
LEXICAL = np.round(np.arange(0, 1.0001, 0.05), 2)
"""The lexical weights tried."""
CUTOFFS = np.round(np.arange(0, 0.9001, 0.05), 2)
"""The cut-offs tried."""


@dataclass
class DevQuery:
    """One dev query, scored once per field and by each embedder."""

    fields: np.ndarray
    """Per-field BM25 scores, shape (fields, tools)."""
    cosines: list[np.ndarray]
    """Each default embedder's standardised similarity to each tool."""
    cjk: bool
    """Whether the query is written in Chinese, Japanese or Korean only."""
    entries: list[np.ndarray]
    """One boolean mask over the tools per relevant entry."""
    keyword: bool
    """A keyword query (scored by MRR@5) rather than a task (Recall@5)."""


def prepare(catalogue: Catalogue, queries: Sequence[tuple[str, list[np.ndarray]]], keyword: bool):
    """Score a dev set's queries field by field and by each default embedder.

    Args:
        catalogue: The tools searched.
        queries: Each query with its relevant entries' masks.
        keyword: Whether these are keyword queries.

    Returns:
        The prepared queries.
    """
    lexical = BM25Ranker(dict.fromkeys(FIELDS, 1.0))
    lexical.index(catalogue.tools)
    texts = [ToolFields.of(tool).text for tool in catalogue.tools]
    caches = [EmbeddingCache(factory(), DEFAULT_CACHE_DIR) for factory, _ in DEFAULT_EMBEDDERS]
    matrices = [cache.vectors(texts) for cache in caches]
    everything = np.ones(len(texts), dtype=bool)
    prepared = []
    for q, entries in queries:
        terms = parse_terms(q)
        text = " ".join(term.text for term in terms)
        cosines = [
            standardised(m @ c.embedder.embed([text])[0], everything)
            for c, m in zip(caches, matrices, strict=True)
        ]
        prepared.append(
            DevQuery(lexical.field_scores(terms), cosines, only_cjk(terms), entries, keyword)
        )
    return prepared


def objective(
    queries: Sequence[DevQuery], score: Callable[[DevQuery], np.ndarray], depth: int = 5
) -> float:
    """Mean of keyword MRR and task Recall at a depth (5 by default) under a scoring function.

    Args:
        queries: The prepared dev queries.
        score: Maps a query to one score per tool.
        depth: How many hits count.

    Returns:
        The objective (higher is better).
    """
    mrr, recall = [], []
    for query in queries:
        scores = score(query)
        order = np.argsort(-scores, kind="stable")[:depth]
        order = order[scores[order] > 0]
        if query.keyword:
            ranks = [i for i, p in enumerate(order) if query.entries[0][p]]
            mrr.append(1 / (ranks[0] + 1) if ranks else 0.0)
        else:
            recall.append(np.mean([mask[order].any() for mask in query.entries]))
    return (float(np.mean(mrr)) + float(np.mean(recall))) / 2


def hybrid(weights: np.ndarray, share: float, alpha: float, cutoff: float = 0.0):
    """The hybrid ranker's score, as :mod:`nbagent.rankers.hybrid` computes it.

    Args:
        weights: The BM25 field weights.
        share: MiniLM's share of the embeddings' average (the multilingual encoder's is the
            rest; an English-only model sits out CJK queries).
        alpha: The lexical weight.
        cutoff: Scores below this share of the best become 0.

    Returns:
        A scoring function for :func:`objective`.
    """

    def score(q: DevQuery) -> np.ndarray:
        lexical = weights @ q.fields
        top_score = lexical.max()
        lexical = lexical / top_score if top_score > 0 else lexical
        minilm, use = q.cosines
        mix = use if q.cjk or share == 0 else (share * minilm + (1 - share) * use)
        weight = 0.0 if q.cjk else alpha
        combined = weight * lexical + (1 - weight) * rescaled(mix, np.ones(mix.shape, dtype=bool))
        combined[combined < cutoff * combined.max()] = 0.0
        return combined

    return score


def main() -> None:
    """Fit and print the weights."""
    kw_catalogue = keyword_catalogue()
    key = {name: f"{d.server}/{d.name}" for name, d in kw_catalogue.origins.items()}
    names = [key[t.name] for t in kw_catalogue.tools]
    kw = [(q.query, [np.array([n in q.relevant for n in names])]) for q in keyword_queries("dev")]
    lmb = build_catalogue(livemcpbench_definitions())
    origins = [lmb.origins[t.name] for t in lmb.tools]
    tasks = [
        (
            t["query"],
            [
                np.array([d.name == e["name"] and d.server in e["servers"] for d in origins])
                for e in t["relevant"]
            ],
        )
        for t in task_dev_queries()
    ]
    queries = prepare(kw_catalogue, kw, True) + prepare(lmb, tasks, False)

    weights = np.ones(len(FIELDS), dtype=np.float32)
    best = objective(queries, lambda q: weights @ q.fields)
    print(run_line(sys.argv))
    print(f"all weights 1: objective {best:.4f}")
    for sweep in range(SWEEPS):
        for i in range(len(FIELDS)):
            for value in GRID:
                trial = weights.copy()
                trial[i] = value
                got = objective(queries, lambda q, w=trial: w @ q.fields)
                if got > best + 1e-9:
                    best, weights = got, trial
        fitted = dict(zip(FIELDS, weights, strict=True))
        print(f"sweep {sweep + 1}: objective {best:.4f}, weights {fitted}")

    grid = [
        (objective(queries, hybrid(weights, share, alpha)), -alpha, -share)
        for share in SHARES
        for alpha in LEXICAL
    ]
    got, alpha, share = max(grid)
    alpha, share = -alpha, -share
    print(f"hybrid: MiniLM share {share:.1f}, lexical weight {alpha:.2f}: objective {got:.4f}")
    for s in SHARES:
        row = [f"{o:.3f}" for o, a, sh in grid if -sh == s]
        print(f"  share {s:.1f}: " + " ".join(row))
    deep = objective(queries, hybrid(weights, share, alpha), 10)
    cutoff = max(
        c
        for c in CUTOFFS
        if objective(queries, hybrid(weights, share, alpha, c)) >= got - 1e-9
        and objective(queries, hybrid(weights, share, alpha, c), 10) >= deep - 1e-9
    )
    unfitted = [f for i, f in enumerate(FIELDS) if not any(q.fields[i].any() for q in queries)]
    if unfitted:
        print(f"\nNot fitted (empty in every dev tool): {', '.join(unfitted)}")
    pairs = ", ".join(f"{f!r}: {w:g}" for f, w in zip(FIELDS, weights, strict=True))
    print(f"\nFIELD_WEIGHTS = {{{pairs}}}")
    print(f"DEFAULT_EMBEDDERS weights: MiniLM {share:.1f}, USE {1 - share:.1f}")
    print(f"LEXICAL_WEIGHT = {alpha:.2f}  # objective {got:.4f}")
    print(f"CUTOFF = {cutoff:.2f}")


if __name__ == "__main__":
    main()
