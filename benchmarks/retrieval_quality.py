r"""Retrieval quality of ToolSearch on LiveMCPBench, beside a plain BM25 baseline.

Every LiveMCPBench tool is registered as a deferred MCP tool (a name served by several
servers is several tools). Each task's text is run through ``ToolSearch`` with each ranker
(``keyword``, ``bm25``, ``semantic``, ``hybrid``) and through a plain BM25 baseline; hits
map back to (server, tool name) and a hit is relevant when its tool name is one the
annotator planned and its server is one of those listed for that name.

Metrics, per task, with R the task's relevant entries (``{name, servers}``) and each entry
counted once (a later hit matching an entry already found gains nothing)::

    Recall@k = |entries found in the top k| / |R|
    nDCG@5   = DCG@5 / IDCG@5,  DCG@5 = sum_{i=1..5} rel_i / log2(i + 1),
               IDCG@5 = sum_{i=1..min(|R|, 5)} 1 / log2(i + 1)     (binary rel_i)

averaged over the tasks with at least one relevant entry (94 of 95), with 95% percentile
bootstrap intervals (1,000 resamples of the tasks, seed 0, the same resamples for every
retriever so that differences are paired).

BM25 is ``bm25s`` (defaults: Lucene variant, k1 1.5, b 0.75) over ``"<tool name>
<description>"`` tokenised by ``bm25s.tokenize`` with its defaults (lower-case, pattern
``\b\w\w+\b``, English stop words) and no stemmer; documents scoring 0 are not returned
(ToolSearch never returns a zero-score tool either).

Two query modes are reported apart: the full task text (the published setting), and a
keyword mode that keeps only the content words of the text (:data:`STOP_WORDS` dropped),
closer to what a model types into ToolSearch.

The rankers' weights were fitted on separate dev sets (``benchmarks/fit_weights.py``), never
on these queries. The semantic and hybrid rankers embed the tools once (cached under
``~/.nbagent/embeddings``); ``--rankers`` picks which rankers run.

Run ``python benchmarks/retrieval_quality.py`` from the repo root (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from catalogue import (
    Catalogue,
    McpDefinition,
    build_catalogue,
    livemcpbench_definitions,
    livemcpbench_queries,
    markdown_table,
    run_line,
)

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import SearchQueryError

DEPTH = 10
"""How many hits each retriever returns (the deepest cut-off scored)."""
SEED = 0
"""The seed of the bootstrap resampling."""
RESAMPLES = 1_000
"""Bootstrap resamples of the full run."""

RANKER_NAMES = ("keyword", "bm25", "semantic", "hybrid")
"""The ToolSearch rankers compared."""

PUBLISHED = (
    ("BM25, published (LiveMCPBench, 525 tools)", 0.290, 0.317, 0.390),
    ("Qwen3-Embedding-8B, published", 0.493, 0.508, 0.611),
)
"""Published figures on this set: retriever, nDCG@5, Recall@5, Recall@10."""

STOP_WORDS = frozenset(
    {
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "get",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "i'm",
        "if",
        "in",
        "into",
        "is",
        "it",
        "it's",
        "its",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "need",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "want",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    }
)
"""English stop words dropped in the keyword query mode (a small fixed list)."""

Entry = tuple[str, frozenset[str]]
"""One relevant entry: a tool name and the servers accepted for it."""
Hit = tuple[str, str]
"""One retrieved tool: its server and its name, as the data spells them."""


@dataclass(frozen=True)
class Task:
    """One LiveMCPBench task with at least one relevant tool."""

    query: str
    """The full task text."""
    relevant: tuple[Entry, ...]
    """The tools the annotator planned to use."""


@dataclass
class Run:
    """What one retriever found for every task."""

    label: str
    """The row label."""
    hits: list[list[Hit]]
    """The ranked hits of each task."""
    failed: int = 0
    """Queries the retriever could not run (counted as zero hits)."""


def load_tasks(limit: int | None = None) -> list[Task]:
    """Load the tasks that have at least one relevant tool.

    Args:
        limit: Keep only the first ``limit`` of them.

    Returns:
        The tasks, in file order.
    """
    tasks = [
        Task(item["query"], tuple((r["name"], frozenset(r["servers"])) for r in item["relevant"]))
        for item in livemcpbench_queries()
        if item["relevant"]
    ]
    return tasks[:limit]


def content_words(query: str) -> str:
    """Shorten a task text to its content words, for the keyword query mode.

    Args:
        query: The task text.

    Returns:
        Its white-space-separated words, stripped of edge punctuation, lower-case, without
        stop words or repeats, in order.

    >>> content_words("Show me today's trending topics in the gaming world.")
    "show today's trending topics gaming world"
    """
    kept: dict[str, None] = {}
    for raw in query.split():
        word = raw.strip(".,;:!?\"'()[]{}<>").lower()
        if word and word not in STOP_WORDS:
            kept[word] = None
    return " ".join(kept)


def run_toolsearch(catalogue: Catalogue, queries: Sequence[str], ranker: str) -> Run:
    """Run the queries through ToolSearch with one ranker over the catalogue, all deferred.

    Args:
        catalogue: The tools.
        queries: One query per task.
        ranker: The ranker's name.

    Returns:
        The hits; a query the parser rejects counts as failed, with no hits.
    """
    registry = ToolRegistry(catalogue.tools)
    search = ToolSearch(registry, ranker=ranker)
    search.wait()
    run = Run(f"ToolSearch ({ranker} ranker)", [])
    for query in queries:
        try:
            found = search.search(query, max_results=DEPTH)
        except SearchQueryError:
            run.failed += 1
            found = []
        origins = [catalogue.origins[hit.name] for hit in found]
        run.hits.append([(d.server, d.name) for d in origins])
    return run


def run_bm25(definitions: Sequence[McpDefinition], queries: Sequence[str]) -> Run:
    """Run the queries through a plain bm25s index of ``name + description``.

    Args:
        definitions: The tools to index.
        queries: One query per task.

    Returns:
        The hits (positive scores only, ties by catalogue order); a query with no token
        left counts as failed, with no hits.
    """
    import bm25s

    corpus = [f"{d.name} {d.description}" for d in definitions]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stemmer=None, show_progress=False), show_progress=False)
    run = Run("BM25 (bm25s, name + description)", [])
    for tokens in bm25s.tokenize(list(queries), return_ids=False, show_progress=False):
        if not tokens:
            run.failed += 1
            run.hits.append([])
            continue
        scores = retriever.get_scores(tokens)
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        run.hits.append(
            [(definitions[i].server, definitions[i].name) for i in order if scores[i] > 0]
        )
    return run


def gains(hits: Sequence[Hit], relevant: Sequence[Entry]) -> list[int]:
    """Mark each hit 1 if it finds a relevant entry not found by an earlier hit, else 0.

    Args:
        hits: The ranked hits.
        relevant: The task's relevant entries.

    Returns:
        One binary gain per hit.
    """
    found: set[int] = set()
    marks = []
    for server, name in hits:
        match = next(
            (
                j
                for j, (want, servers) in enumerate(relevant)
                if j not in found and want == name and server in servers
            ),
            None,
        )
        if match is not None:
            found.add(match)
        marks.append(int(match is not None))
    return marks


def scores(hits: Sequence[Hit], relevant: Sequence[Entry]) -> tuple[float, float, float]:
    """Score one task's hits (see the module docstring for the formulas).

    Args:
        hits: The ranked hits.
        relevant: The task's relevant entries (at least one).

    Returns:
        nDCG@5, Recall@5 and Recall@10.
    """
    marks = gains(hits, relevant)
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(marks[:5]))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 5)))
    return dcg / ideal, sum(marks[:5]) / len(relevant), sum(marks[:10]) / len(relevant)


def per_task(run: Run, tasks: Sequence[Task]) -> np.ndarray:
    """Score every task of a run.

    Args:
        run: The retriever's hits.
        tasks: The tasks, in the same order.

    Returns:
        An array of shape (tasks, 3): nDCG@5, Recall@5, Recall@10.
    """
    pairs = zip(run.hits, tasks, strict=True)
    return np.array([scores(hits, task.relevant) for hits, task in pairs])


def cells(values: np.ndarray, resamples: np.ndarray) -> list[str]:
    """Format each metric's mean with its 95% bootstrap interval.

    Args:
        values: Per-task values, shape (tasks, metrics).
        resamples: Bootstrap task indices, shape (resamples, tasks).

    Returns:
        One ``mean [low, high]`` cell per metric.
    """
    means = values[resamples].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5], axis=0)
    triples = zip(values.mean(axis=0), low, high, strict=True)
    return [f"{mean:.3f} [{lo:.3f}, {hi:.3f}]" for mean, lo, hi in triples]


def mode_table(
    runs: Sequence[Run], tasks: Sequence[Task], resamples: np.ndarray, published: bool
) -> str:
    """Render one query mode's table: each retriever, paired differences, the anchors.

    Args:
        runs: ToolSearch's runs (one per ranker), then the BM25 baseline's (last).
        tasks: The tasks.
        resamples: Bootstrap task indices.
        published: Add the published figures (only comparable in the full-text mode).

    Returns:
        The Markdown table.
    """
    values = [per_task(run, tasks) for run in runs]
    rows = [
        (run.label, len(tasks), run.failed, *cells(v, resamples))
        for run, v in zip(runs, values, strict=True)
    ]
    baseline = runs[-1].label.split(" (")[0]
    for run, v in zip(runs[:-1], values[:-1], strict=True):
        rows.append(
            (
                f"difference: {run.label} − {baseline} (paired)",
                len(tasks),
                "—",
                *cells(v - values[-1], resamples),
            )
        )
    if published:
        rows += [
            (label, 94, "—", f"{n:.3f}", f"{r5:.3f}", f"{r10:.3f}")
            for label, n, r5, r10 in PUBLISHED
        ]
    return markdown_table(
        (
            "retriever",
            "queries",
            "failed queries",
            "nDCG@5 [95% CI]",
            "Recall@5 [95% CI]",
            "Recall@10 [95% CI]",
        ),
        rows,
        align="lrrlll",
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its tables.

    Args:
        argv: Command-line arguments (``--quick``, ``--rankers``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 tasks, 100 resamples, 2 rankers")
    parser.add_argument(
        "--rankers",
        default=None,
        help="comma-separated ToolSearch rankers (default: all; --quick: keyword,bm25)",
    )
    args = parser.parse_args(argv)
    default = RANKER_NAMES[:2] if args.quick else RANKER_NAMES
    rankers = args.rankers.split(",") if args.rankers else list(default)
    tasks = load_tasks(10 if args.quick else None)
    catalogue = build_catalogue(livemcpbench_definitions())
    definitions = [catalogue.origins[t.name] for t in catalogue.tools]
    resamples = np.random.default_rng(SEED).integers(
        0, len(tasks), size=(100 if args.quick else RESAMPLES, len(tasks))
    )
    modes: list[tuple[str, Callable[[str], str], bool]] = [
        ("Full task text as the query (the published setting)", str, True),
        (
            (
                "Keyword query mode: content words only (stop words dropped; not comparable "
                "with the published figures)"
            ),
            content_words,
            False,
        ),
    ]
    print("## Retrieval quality on LiveMCPBench\n")
    print(run_line(sys.argv))
    print()
    for title, rewrite, published in modes:
        queries = [rewrite(task.query) for task in tasks]
        runs = [run_toolsearch(catalogue, queries, name) for name in rankers]
        runs.append(run_bm25(definitions, queries))
        print(f"### {title}\n")
        print(mode_table(runs, tasks, resamples, published))
        print()
    example = tasks[0].query
    print(
        f"{len(catalogue.tools)} tools registered deferred over "
        f"{len({d.server for d in definitions})} servers; skipped (schema rejected by the Tool "
        f"model, so a miss for every retriever): {'; '.join(catalogue.skipped) or 'none'}. "
        f"{len(tasks)} tasks with a relevant tool; intervals from {len(resamples):,} bootstrap "
        f"resamples of the tasks (seed {SEED}). Keyword mode example: {example!r} -> "
        f"{content_words(example)!r}."
    )


if __name__ == "__main__":
    main()
