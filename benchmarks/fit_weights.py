"""Fit the BM25 field weights and the hybrid ranker's weights on the dev splits only.

The objective is the mean of four dev figures, each the mean of its values at 5 hits and at
10 (the depths of the targets): MRR of the 43 ``dev`` keyword queries (over github-mcp-server
and the reference servers), MRR of the 40 ``dev`` paraphrased and cross-language queries
(over the LiveMCPBench tools), Recall of the 74 hand-written task-style queries over the
LiveMCPBench tools, and Recall of the 103 MCP-Bench tasks over its own servers' tools
(``benchmarks/data/``): paraphrases and other languages weigh as much as keywords. Neither
the keyword nor the paraphrase ``test`` split, nor the multilingual queries, nor the
LiveMCPBench queries are read.

1. BM25: coordinate ascent over :data:`GRID` for each field weight (three sweeps, from all
   weights 1), scoring from per-field BM25 scores computed once per query, on the dev sets
   other than the paraphrases (written to avoid the tools' words, they cannot tell which
   field's words matter).
2. Hybrid: with those weights, a grid over the query window (:data:`WINDOWS` terms) and the
   best window's share (:data:`WINDOW_SHARES`), MiniLM's share of the embeddings' average (0
   to 1 in steps of 0.1, the multilingual encoder having the rest) and the lexical weight (0
   to 1 in steps of 0.05); ties go to the smaller lexical weight, then the smaller MiniLM
   share, then the larger window, then the smaller window share.
3. The adaptive lexical weight: with that similarity, a grid over the lexical weight and the
   query coverages (:meth:`~nbagent.catalogue.rankers.bm25.BM25Ranker.coverage`, the best
   tool's) below which BM25 has no share (:data:`LOWS`) and from which it has its full share
   (:data:`HIGHS`), for queries of at most the window's terms (a longer one keeps the full
   share); ties go to the smaller lexical weight, then the lower coverages.
4. The cut-off: the largest share of the best score (0 to 0.9 in steps of 0.05) whose
   objective is no lower than with no cut-off.

With ``--fusion-only`` the query window, the window share, MiniLM's share and the cut-off stay
as shipped and only the BM25 field weights, the lexical weight and the coverages are fitted.

It prints the fitted values; ``nbagent/catalogue/rankers/bm25.py`` (``FIELD_WEIGHTS``),
``nbagent/catalogue/rankers/embedder.py`` (``DEFAULT_EMBEDDERS``),
``nbagent/catalogue/rankers/semantic.py`` (``WINDOW``, ``WINDOW_SHARE``) and
``nbagent/catalogue/rankers/hybrid.py`` (``LEXICAL_WEIGHT``, ``NO_LEXICAL_BELOW``,
``FULL_LEXICAL_FROM``, ``CUTOFF``) hold them.

Run ``python benchmarks/fit_weights.py`` from the repo root (embedding the tools takes a
minute or two the first time; vectors are cached under ``~/.nbagent``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from catalogue import Catalogue, build_catalogue, livemcpbench_definitions, run_line
from devsets import (
    keyword_catalogue,
    keyword_queries,
    mcpbench_catalogue,
    mcpbench_tasks,
    paraphrase_queries,
    task_dev_queries,
)

from nbagent.catalogue.rankers.bm25 import BM25Ranker
from nbagent.catalogue.rankers.embedder import DEFAULT_CACHE_DIR, DEFAULT_EMBEDDERS, EmbeddingCache
from nbagent.catalogue.rankers.fields import FIELDS, ToolFields
from nbagent.catalogue.rankers.hybrid import CUTOFF, lexical_share
from nbagent.catalogue.rankers.semantic import (
    WINDOW,
    WINDOW_SHARE,
    only_cjk,
    pooled,
    query_texts,
    rescaled,
    standardised,
)
from nbagent.catalogue.toolsearch import parse_terms

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
DEPTHS = (5, 10)
"""The numbers of hits the objective counts at."""
WINDOWS = (8, 12, 16, 20, 24)
"""The query windows tried, in terms."""
WINDOW_SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The best window's shares tried."""
LOWS = np.round(np.arange(0, 0.6001, 0.1), 2)
"""The query coverages tried below which BM25 has no share."""
HIGHS = np.round(np.arange(0, 1.0001, 0.1), 2)
"""The query coverages tried from which BM25 has its full share (not below the low one;
equal to it: a step)."""
MRR_SETS = ("keyword", "paraphrase")
"""The dev sets scored by MRR (one answer wanted); the others by Recall."""


@dataclass
class DevQuery:
    """One dev query, scored once per field and by each embedder."""

    fields: np.ndarray
    """Per-field BM25 scores, shape (fields, tools)."""
    rows: dict[int, list[list[np.ndarray]]]
    """By window size, each default embedder's standardised similarities to each tool: the
    whole query's, then each window's (:func:`~nbagent.catalogue.rankers.semantic.query_texts`)."""
    cjk: bool
    """Whether the query is written in Chinese, Japanese or Korean only."""
    coverage: float
    """How much of the query the best-covering tool contains (shipped BM25 fields)."""
    length: int
    """How many terms the query has (a long one keeps BM25's full share)."""
    entries: list[np.ndarray]
    """One boolean mask over the tools per relevant entry."""
    dev_set: str
    """The dev set it belongs to (:data:`MRR_SETS` are scored by MRR, the others by
    Recall)."""


def prepare(
    catalogue: Catalogue, queries: Sequence[tuple[str, list[np.ndarray]]], dev_set: str
) -> list[DevQuery]:
    """Score a dev set's queries field by field and by each default embedder (each distinct
    query text, whole or window, embedded once).

    Args:
        catalogue: The tools searched.
        queries: Each query with its relevant entries' masks.
        dev_set: The dev set's name.

    Returns:
        The prepared queries.
    """
    lexical = BM25Ranker(dict.fromkeys(FIELDS, 1.0))
    lexical.index(catalogue.tools)
    shipped = BM25Ranker()
    shipped.index(catalogue.tools)
    texts = [ToolFields.of(tool).text for tool in catalogue.tools]
    caches = [EmbeddingCache(factory(), DEFAULT_CACHE_DIR) for factory, _ in DEFAULT_EMBEDDERS]
    matrices = [cache.vectors(texts) for cache in caches]
    asked = [EmbeddingCache(cache.embedder) for cache in caches]
    everything = np.ones(len(texts), dtype=bool)
    prepared = []
    for q, entries in queries:
        terms = parse_terms(q)
        rows = {
            window: [
                [standardised(m @ v, everything) for v in a.vectors(query_texts(terms, window))]
                for a, m in zip(asked, matrices, strict=True)
            ]
            for window in WINDOWS
        }
        coverage = float(shipped.coverage(terms).max(initial=0.0))
        prepared.append(
            DevQuery(
                lexical.field_scores(terms),
                rows,
                only_cjk(terms),
                coverage,
                len(terms),
                entries,
                dev_set,
            )
        )
    return prepared


def objective(
    queries: Sequence[DevQuery],
    score: Callable[[DevQuery], np.ndarray],
    depths: Sequence[int] = DEPTHS,
) -> float:
    """Mean over the dev sets of their MRR or Recall, averaged over the depths.

    Args:
        queries: The prepared dev queries.
        score: Maps a query to one score per tool.
        depths: How many hits count (each depth weighs the same).

    Returns:
        The objective (higher is better).
    """
    figures: dict[str, list[float]] = {}
    for query in queries:
        scores = score(query)
        ranked = np.argsort(-scores, kind="stable")[: max(depths)]
        ranked = ranked[scores[ranked] > 0]
        for depth in depths:
            order = ranked[:depth]
            if query.dev_set in MRR_SETS:
                ranks = [i for i, p in enumerate(order) if query.entries[0][p]]
                figure = 1 / (ranks[0] + 1) if ranks else 0.0
            else:
                figure = float(np.mean([mask[order].any() for mask in query.entries]))
            figures.setdefault(query.dev_set, []).append(figure)
    return float(np.mean([np.mean(values) for values in figures.values()]))


def similarity(q: DevQuery, window: int, window_share: float, share: float) -> np.ndarray:
    """The embeddings' similarity, as :mod:`nbagent.catalogue.rankers.semantic` computes it.

    Args:
        q: The query.
        window: The query window, in terms.
        window_share: The best window's share.
        share: MiniLM's share of the embeddings' average (the multilingual encoder's is the
            rest; an English-only model sits out CJK queries).

    Returns:
        One similarity in [0, 1] per tool.
    """
    minilm, use = (pooled(rows, window_share) for rows in q.rows[window])
    mix = use if q.cjk or share == 0 else (share * minilm + (1 - share) * use)
    return rescaled(mix, np.ones(mix.shape, dtype=bool))


def hybrid(
    weights: np.ndarray,
    alpha: float,
    cutoff: float = 0.0,
    similarities: Callable[[DevQuery], np.ndarray] | None = None,
    low: float = 0.0,
    high: float = 0.0,
    window: int = WINDOWS[0],
):
    """The hybrid ranker's score, as :mod:`nbagent.catalogue.rankers.hybrid` computes it.

    Args:
        weights: The BM25 field weights.
        alpha: The lexical weight.
        cutoff: Scores below this share of the best become 0.
        similarities: Each query's embedding similarity (see :func:`similarity`).
        low: The query coverage below which BM25 has no share.
        high: The query coverage from which BM25 has its full share (0: always).
        window: Queries of more terms than this keep the full share.

    Returns:
        A scoring function for :func:`objective`.
    """

    def score(q: DevQuery) -> np.ndarray:
        lexical = weights @ q.fields
        top_score = lexical.max()
        lexical = lexical / top_score if top_score > 0 else lexical
        coverage = 1.0 if q.length > window else q.coverage
        weight = 0.0 if q.cjk else lexical_share(alpha, coverage, low, high)
        combined = weight * lexical + (1 - weight) * similarities(q)
        combined[combined < cutoff * combined.max()] = 0.0
        return combined

    return score


def memo(function: Callable[[DevQuery], np.ndarray]) -> Callable[[DevQuery], np.ndarray]:
    """Compute a query's similarity once per grid point (keyed by the query's identity)."""
    done: dict[int, np.ndarray] = {}

    def cached(q: DevQuery) -> np.ndarray:
        if id(q) not in done:
            done[id(q)] = function(q)
        return done[id(q)]

    return cached


@dataclass
class DevSet:
    """One dev set: its tools and its queries."""

    name: str
    """``keyword``, ``task`` or ``mcpbench``."""
    catalogue: Catalogue
    """The tools searched."""
    queries: list[tuple[str, list[np.ndarray]]]
    """Each query with one boolean mask over the tools per relevant entry."""


def dev_sets() -> list[DevSet]:
    """Load the four dev sets (see the module docstring).

    Returns:
        The keyword, paraphrase, task and MCP-Bench dev sets, in that order.
    """
    kw_catalogue = keyword_catalogue()
    key = {name: f"{d.server}/{d.name}" for name, d in kw_catalogue.origins.items()}
    names = [key[t.name] for t in kw_catalogue.tools]
    kw = [(q.query, [np.array([n in q.relevant for n in names])]) for q in keyword_queries("dev")]
    lmb = build_catalogue(livemcpbench_definitions())
    origins = [lmb.origins[t.name] for t in lmb.tools]
    lmb_names = [f"{d.server}/{d.name}" for d in origins]
    para = [
        (q["query"], [np.array([n in q["relevant"] for n in lmb_names])])
        for q in paraphrase_queries("dev")
    ]
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
    mcp = mcpbench_catalogue()
    mcp_origins = [mcp.origins[t.name] for t in mcp.tools]
    mcp_tasks = [
        (
            t["query"],
            [
                np.array([d.name == e["name"] and d.server == e["server"] for d in mcp_origins])
                for e in t["relevant"]
            ],
        )
        for t in mcpbench_tasks()
    ]
    return [
        DevSet("keyword", kw_catalogue, kw),
        DevSet("paraphrase", lmb, para),
        DevSet("task", lmb, tasks),
        DevSet("mcpbench", mcp, mcp_tasks),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """Fit and print the weights.

    Args:
        argv: Command-line arguments (``--fusion-only``); ``sys.argv[1:]`` by default.
    """
    global WINDOWS, WINDOW_SHARES, SHARES, CUTOFFS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fusion-only",
        action="store_true",
        help="keep the shipped query window, window share, MiniLM share and cut-off",
    )
    if parser.parse_args(argv).fusion_only:
        WINDOWS, WINDOW_SHARES = (WINDOW,), (WINDOW_SHARE,)
        SHARES, CUTOFFS = np.array([DEFAULT_EMBEDDERS[0][1]]), np.array([CUTOFF])
    queries = [q for s in dev_sets() for q in prepare(s.catalogue, s.queries, s.name)]

    lexical = [q for q in queries if q.dev_set != "paraphrase"]
    weights = np.ones(len(FIELDS), dtype=np.float32)
    best = objective(lexical, lambda q: weights @ q.fields)
    print(run_line(sys.argv))
    print(f"all weights 1: objective {best:.4f}")
    for sweep in range(SWEEPS):
        for i in range(len(FIELDS)):
            for value in GRID:
                trial = weights.copy()
                trial[i] = value
                got = objective(lexical, lambda q, w=trial: w @ q.fields)
                if got > best + 1e-9:
                    best, weights = got, trial
        fitted = dict(zip(FIELDS, weights, strict=True))
        print(f"sweep {sweep + 1}: objective {best:.4f}, weights {fitted}")

    grid = []
    for window in WINDOWS:
        for window_share in WINDOW_SHARES:
            for share in SHARES:
                similar = memo(
                    lambda q, w=window, ws=window_share, s=share: similarity(q, w, ws, s)
                )
                for alpha in LEXICAL:
                    got = objective(queries, hybrid(weights, alpha, similarities=similar))
                    grid.append((got, -alpha, -share, window, -window_share))
        print(f"window {window}: best objective {max(g for g in grid if g[3] == window)[0]:.4f}")
    got, alpha, share, window, window_share = max(grid)
    alpha, share, window_share = -alpha, -share, -window_share
    print(
        f"hybrid: window {window} terms, window share {window_share:.2f}, MiniLM share "
        f"{share:.1f}, lexical weight {alpha:.2f}: objective {got:.4f}"
    )
    similar = memo(lambda q: similarity(q, window, window_share, share))
    fixed_alpha = alpha
    adaptive = []
    for low in LOWS:
        for high in HIGHS[HIGHS >= low]:
            for trial in LEXICAL:
                score = hybrid(
                    weights, trial, similarities=similar, low=low, high=high, window=window
                )
                adaptive.append((objective(queries, score), -trial, -low, -high))
    got, alpha, low, high = max(adaptive)
    alpha, low, high = -alpha, -low, -high
    print(
        f"adaptive: lexical weight {alpha:.2f}, none below coverage {low:.1f}, full from "
        f"{high:.1f}: objective {got:.4f}"
    )

    def fitted(cutoff: float = 0.0, adapt: bool = True):
        if adapt:
            return hybrid(weights, alpha, cutoff, similar, low, high, window)
        return hybrid(weights, fixed_alpha, cutoff, similar)

    kept = (c for c in CUTOFFS if objective(queries, fitted(c)) >= got - 1e-9)
    cutoff = max(kept, default=float(CUTOFFS[0]))
    print("  by dev set, with the fitted cut-off (fixed lexical weight → adaptive):")
    for dev_set in ("keyword", "paraphrase", "task", "mcpbench"):
        part = [q for q in queries if q.dev_set == dev_set]
        at = [
            f"at {d} {objective(part, fitted(cutoff, False), (d,)):.3f} → "
            f"{objective(part, fitted(cutoff), (d,)):.3f}"
            for d in DEPTHS
        ]
        print(f"    {dev_set}: {', '.join(at)}")
    unfitted = [f for i, f in enumerate(FIELDS) if not any(q.fields[i].any() for q in queries)]
    if unfitted:
        print(f"\nNot fitted (empty in every dev tool): {', '.join(unfitted)}")
    pairs = ", ".join(f"{f!r}: {w:g}" for f, w in zip(FIELDS, weights, strict=True))
    print(f"\nFIELD_WEIGHTS = {{{pairs}}}")
    print(f"DEFAULT_EMBEDDERS weights: MiniLM {share:.1f}, USE {1 - share:.1f}")
    print(f"WINDOW = {window}")
    print(f"WINDOW_SHARE = {window_share:.2f}")
    print(f"LEXICAL_WEIGHT = {alpha:.2f}  # objective {got:.4f}")
    print(f"NO_LEXICAL_BELOW = {low:.1f}")
    print(f"FULL_LEXICAL_FROM = {high:.1f}")
    print(f"CUTOFF = {cutoff:.2f}")


if __name__ == "__main__":
    main()
