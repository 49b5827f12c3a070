"""Fit the BM25 field weights and the hybrid ranker's lexical weight on the dev splits only.

The objective is the mean of two dev figures: MRR@5 of the 43 ``dev`` keyword queries (over
github-mcp-server and the reference servers) and Recall@5 of the 32 hand-written task-style
queries over the LiveMCPBench tools (``benchmarks/data/``). Neither the keyword ``test``
split nor the LiveMCPBench queries are read.

1. BM25: coordinate ascent over :data:`GRID` for each field weight (three sweeps, from all
   weights 1), scoring from per-field BM25 scores computed once per query.
2. Hybrid: with those weights, a sweep of the lexical weight from 0 to 1 in steps of 0.05.

It prints the fitted values; ``nbagent/rankers/bm25.py`` (``FIELD_WEIGHTS``) and
``nbagent/rankers/hybrid.py`` (``LEXICAL_WEIGHT``) hold them.

Run ``python benchmarks/fit_weights.py`` from the repo root (embedding the LiveMCPBench
tools takes a minute or two the first time; vectors are cached under ``~/.nbagent``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from catalogue import Catalogue, build_catalogue, livemcpbench_definitions, run_line
from devsets import keyword_catalogue, keyword_queries, task_dev_queries

from nbagent.rankers.bm25 import BM25Ranker
from nbagent.rankers.fields import FIELDS
from nbagent.rankers.semantic import SemanticRanker
from nbagent.search import parse_terms

GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0)
"""The values tried for each field weight."""
SWEEPS = 3
"""Rounds of coordinate ascent."""


@dataclass
class DevQuery:
    """One dev query, scored once per field and by embeddings."""

    fields: np.ndarray
    """Per-field BM25 scores, shape (fields, tools)."""
    cosine: np.ndarray
    """Embedding similarity to each tool."""
    entries: list[np.ndarray]
    """One boolean mask over the tools per relevant entry."""
    keyword: bool
    """A keyword query (scored by MRR@5) rather than a task (Recall@5)."""


def prepare(catalogue: Catalogue, queries: Sequence[tuple[str, list[np.ndarray]]], keyword: bool):
    """Score a dev set's queries field by field and by embeddings.

    Args:
        catalogue: The tools searched.
        queries: Each query with its relevant entries' masks.
        keyword: Whether these are keyword queries.

    Returns:
        The prepared queries.
    """
    lexical = BM25Ranker(dict.fromkeys(FIELDS, 1.0))
    lexical.index(catalogue.tools)
    semantic = SemanticRanker()
    semantic.index(catalogue.tools)
    return [
        DevQuery(
            lexical.field_scores(parse_terms(q)),
            np.maximum(semantic.scores(parse_terms(q)), 0),
            entries,
            keyword,
        )
        for q, entries in queries
    ]


def objective(queries: Sequence[DevQuery], score) -> float:
    """Mean of keyword MRR@5 and task Recall@5 under a scoring function.

    Args:
        queries: The prepared dev queries.
        score: Maps a query to one score per tool.

    Returns:
        The objective (higher is better).
    """
    mrr, recall = [], []
    for query in queries:
        scores = score(query)
        order = np.argsort(-scores, kind="stable")[:5]
        order = order[scores[order] > 0]
        if query.keyword:
            ranks = [i for i, p in enumerate(order) if query.entries[0][p]]
            mrr.append(1 / (ranks[0] + 1) if ranks else 0.0)
        else:
            recall.append(np.mean([mask[order].any() for mask in query.entries]))
    return (float(np.mean(mrr)) + float(np.mean(recall))) / 2


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

    def hybrid(q: DevQuery, alpha: float) -> np.ndarray:
        lexical = weights @ q.fields
        top_score = lexical.max()
        return alpha * (lexical / top_score if top_score > 0 else lexical) + (1 - alpha) * q.cosine

    sweep_alpha = [
        (objective(queries, lambda q, a=a: hybrid(q, a)), a) for a in np.arange(0, 1.0001, 0.05)
    ]
    for got, alpha in sweep_alpha:
        print(f"lexical weight {alpha:.2f}: objective {got:.4f}")
    got, alpha = max(sweep_alpha)
    unfitted = [f for i, f in enumerate(FIELDS) if not any(q.fields[i].any() for q in queries)]
    if unfitted:
        print(f"\nNot fitted (empty in every dev tool): {', '.join(unfitted)}")
    pairs = ", ".join(f"{f!r}: {w:g}" for f, w in zip(FIELDS, weights, strict=True))
    print(f"\nFIELD_WEIGHTS = {{{pairs}}}")
    print(f"LEXICAL_WEIGHT = {alpha:.2f}  # objective {got:.4f}")


if __name__ == "__main__":
    main()
