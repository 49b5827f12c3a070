"""Retrieval quality on paraphrased and cross-language queries, beside the other query sets.

Every ranker (``keyword``, ``bm25``, ``semantic``, ``hybrid``) runs, in one process, over:

- the paraphrase set's ``test`` split (``benchmarks/data/paraphrase_queries.json``, see
  ``devsets.py``): English queries that avoid the words of their target tools' names and
  descriptions, and queries in another language for tools described in English, over the
  LiveMCPBench tools; its ``dev`` split is shown for reference (weights are fitted on it);
- the keyword queries' ``test`` split (github-mcp-server and the reference servers);
- the multilingual queries (LiveMCPBench tools; nothing is fitted on them).

Per set: Recall@5 and Recall@10 (the share of queries with an answering tool among the first 5
or 10 hits) and MRR@10 (the mean of 1 / the rank of the first answering tool, 0 when none is in
the first 10).

Run ``python benchmarks/paraphrase_quality.py`` from the repo root (the tools' vectors are
cached under ``~/.nbagent``); ``--lexical-weight W`` adds a hybrid ranker giving BM25 the share
``W`` whatever the query (the shipped one scales it by the query's coverage, see
``nbagent/catalogue/rankers/hybrid.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from catalogue import Catalogue, build_catalogue, livemcpbench_definitions, markdown_table, run_line
from devsets import (
    keyword_catalogue,
    keyword_queries,
    multilingual_queries,
    paraphrase_holdout,
    paraphrase_queries,
)

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import Ranker, ToolSearch

RANKER_NAMES = ("keyword", "bm25", "semantic", "hybrid")
"""The rankers compared."""
DEPTH = 10
"""How many hits each query asks for."""


@dataclass(frozen=True)
class QuerySet:
    """One set of queries over one catalogue."""

    name: str
    """What the table calls it."""
    catalogue: str
    """``livemcpbench`` or ``keyword``."""
    queries: list[tuple[str, frozenset[str]]]
    """Each query with its answering tools (``server/tool``)."""


def query_sets() -> list[QuerySet]:
    """Load the query sets the table reports (see the module docstring).

    Returns:
        Paraphrase test (all, English paraphrases, other languages), paraphrase dev, keyword
        test and multilingual.
    """
    para = paraphrase_queries()

    def pick(split: str, kind: str | None = None) -> list[tuple[str, frozenset[str]]]:
        return [
            (q["query"], frozenset(q["relevant"]))
            for q in para
            if q["split"] == split and kind in (None, q["kind"])
        ]

    holdout = paraphrase_holdout()

    def held(kind: str) -> list[tuple[str, frozenset[str]]]:
        return [(q["query"], frozenset(q["relevant"])) for q in holdout if q["kind"] == kind]

    return [
        QuerySet("paraphrase test", "livemcpbench", pick("test")),
        QuerySet("  English paraphrases", "livemcpbench", pick("test", "paraphrase")),
        QuerySet("  other languages", "livemcpbench", pick("test", "cross-language")),
        QuerySet("paraphrase dev (fitted on)", "livemcpbench", pick("dev")),
        QuerySet("paraphrase holdout", "livemcpbench", held("paraphrase") + held("cross-language")),
        QuerySet("  English paraphrases", "livemcpbench", held("paraphrase")),
        QuerySet("  other languages", "livemcpbench", held("cross-language")),
        QuerySet(
            "keyword test",
            "keyword",
            [(q.query, q.relevant) for q in keyword_queries("test")],
        ),
        QuerySet(
            "multilingual",
            "livemcpbench",
            [(q["query"], frozenset(q["relevant"])) for q in multilingual_queries()],
        ),
    ]


def figures(
    search: ToolSearch, names: dict[str, str], queries: Sequence[tuple[str, frozenset[str]]]
) -> tuple[float, float, float]:
    """Run the queries and measure them.

    Args:
        search: The ToolSearch to query.
        names: ``server/tool`` of each tool, by its nbagent name.
        queries: The queries with their answering tools.

    Returns:
        Recall@5, Recall@10 and MRR@10.
    """
    at5 = at10 = reciprocal = 0.0
    for query, relevant in queries:
        hits = [names[hit.name] for hit in search.search(query, max_results=DEPTH)]
        ranks = [i for i, hit in enumerate(hits) if hit in relevant]
        if ranks:
            at5 += ranks[0] < 5
            at10 += 1
            reciprocal += 1 / (ranks[0] + 1)
    count = len(queries)
    return at5 / count, at10 / count, reciprocal / count


def rankers(lexical_weights: Sequence[float]) -> list[tuple[str, Callable[[], str | Ranker]]]:
    """The rankers to compare: the named ones, then a hybrid per extra lexical weight.

    Args:
        lexical_weights: The lexical weights of extra hybrid rankers that give BM25 that
            share whatever the query (as before the share depended on the query's coverage).

    Returns:
        Each ranker's label and a function making it (one per catalogue).
    """
    from nbagent.catalogue.rankers.hybrid import HybridRanker

    chosen: list[tuple[str, Callable[[], str | Ranker]]] = [
        (name, partial(str, name)) for name in RANKER_NAMES
    ]
    for weight in lexical_weights:
        label = f"hybrid, fixed lexical weight {weight:g}"
        chosen.append((label, partial(HybridRanker, lexical_weight=weight, full_lexical_from=0.0)))
    return chosen


def main(argv: Sequence[str] | None = None) -> None:
    """Run every ranker over every set and print the table.

    Args:
        argv: Command-line arguments; ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lexical-weight", type=float, action="append", default=[], help="an extra hybrid"
    )
    args = parser.parse_args(argv)
    catalogues: dict[str, Catalogue] = {
        "livemcpbench": build_catalogue(livemcpbench_definitions()),
        "keyword": keyword_catalogue(),
    }
    registries = {key: ToolRegistry(c.tools) for key, c in catalogues.items()}
    names = {
        key: {name: f"{d.server}/{d.name}" for name, d in c.origins.items()}
        for key, c in catalogues.items()
    }
    sets = query_sets()
    rows = []
    for label, make in rankers(args.lexical_weight):
        cells = []
        searches: dict[str, ToolSearch] = {}
        for query_set in sets:
            key = query_set.catalogue
            if key not in searches:
                searches[key] = ToolSearch(registries[key], ranker=make())
                searches[key].wait()
            at5, at10, mrr = figures(searches[key], names[key], query_set.queries)
            cells.append(f"{at5:.3f} / {at10:.3f} / {mrr:.3f}")
        rows.append((label, *cells))
    print("## Paraphrased and cross-language queries\n")
    print(run_line(sys.argv))
    print()
    print(
        markdown_table(
            ("ranker", *(f"{s.name.strip()} ({len(s.queries)} q)" for s in sets)),
            rows,
            align="l" + "r" * len(sets),
        )
    )
    print("\nEach cell: Recall@5 / Recall@10 / MRR@10.")


if __name__ == "__main__":
    main()
