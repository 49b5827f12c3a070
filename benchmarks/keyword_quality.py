"""Retrieval quality on short keyword queries, as a model types them into ToolSearch.

The catalogue is the 117 tools of github-mcp-server plus the 50 tools of the MCP reference
servers (everything, filesystem, memory, time, git; ``benchmarks/data/reference_servers.json``),
all deferred. The queries (``benchmarks/data/keyword_queries.json``, 2 to 5 words each) were
written by hand from those tool lists before any ranker ran on them; each lists the tools
that answer it. The ``test`` split (86 queries) is reported; the ``dev`` split (43) is the one
the weights were fitted on (``benchmarks/fit_weights.py``) and is shown for reference.

Recall@k is the share of queries with an answering tool among the first k hits.

A second table runs the 25 multilingual queries (``multilingual_queries.json``: Chinese,
Japanese and English, over the LiveMCPBench tools, 61 of which are described in Chinese).

Run ``python benchmarks/keyword_quality.py`` from the repo root (``--quick`` for a smoke run:
the keyword and bm25 rankers on the first 10 queries).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from catalogue import build_catalogue, livemcpbench_definitions, markdown_table, run_line
from devsets import KeywordQuery, keyword_catalogue, keyword_queries, multilingual_queries

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch

RANKER_NAMES = ("keyword", "bm25", "semantic", "hybrid")
"""The rankers compared."""
TARGET = 0.95
"""The Recall@5 target on the test split."""


def recall(search: ToolSearch, names: dict[str, str], queries: Sequence[KeywordQuery]):
    """Run the queries and measure Recall@1 and Recall@5.

    Args:
        search: The ToolSearch to query.
        names: ``server/tool`` of each tool, by its nbagent name.
        queries: The queries.

    Returns:
        Recall@1, Recall@5 and the queries missed at 5.
    """
    at1 = at5 = 0
    missed = []
    for query in queries:
        hits = [names[hit.name] for hit in search.search(query.query, max_results=5)]
        at1 += bool(hits) and hits[0] in query.relevant
        found = any(hit in query.relevant for hit in hits)
        at5 += found
        if not found:
            missed.append(query.query)
    return at1 / len(queries), at5 / len(queries), missed


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its table.

    Args:
        argv: Command-line arguments (``--quick``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rankers, 10 queries")
    args = parser.parse_args(argv)
    catalogue = keyword_catalogue()
    names = {name: f"{d.server}/{d.name}" for name, d in catalogue.origins.items()}
    registry = ToolRegistry(catalogue.tools)
    splits = {split: keyword_queries(split) for split in ("test", "dev")}
    rankers = RANKER_NAMES[:2] if args.quick else RANKER_NAMES
    if args.quick:
        splits = {split: queries[:10] for split, queries in splits.items()}
    rows, misses = [], []
    for ranker in rankers:
        search = ToolSearch(registry, ranker=ranker)
        search.wait()
        test1, test5, missed = recall(search, names, splits["test"])
        dev1, dev5, _ = recall(search, names, splits["dev"])
        rows.append(
            (
                ranker,
                f"{test1:.3f}",
                f"{test5:.3f}",
                "yes" if test5 >= TARGET else "no",
                f"{dev1:.3f}",
                f"{dev5:.3f}",
            )
        )
        misses.append(f"- {ranker}: {'; '.join(missed) or 'none'}")
    print("## Retrieval quality on keyword queries\n")
    print(run_line(sys.argv))
    print()
    print(
        markdown_table(
            (
                "ranker",
                f"test Recall@1 ({len(splits['test'])} q)",
                "test Recall@5",
                f"Recall@5 ≥ {TARGET}",
                f"dev Recall@1 ({len(splits['dev'])} q)",
                "dev Recall@5",
            ),
            rows,
            align="lrrlrr",
        )
    )
    print(
        f"\n{len(catalogue.tools)} deferred tools (github-mcp-server and the MCP reference "
        "servers). Test queries missed at 5:\n"
    )
    print("\n".join(misses))
    if not args.quick:
        print("\n### Multilingual queries (LiveMCPBench tools)\n")
        print(multilingual_table(rankers))


def multilingual_table(rankers: Sequence[str]) -> str:
    """Run the multilingual queries with each ranker.

    Args:
        rankers: The rankers.

    Returns:
        A Markdown table of Recall@1 / Recall@5 (a relevant tool in the first 1 or 5 hits)
        per language and ranker, over all queries, and over those asking in another language
        for a tool described in English.
    """
    catalogue = build_catalogue(livemcpbench_definitions())
    names = {name: f"{d.server}/{d.name}" for name, d in catalogue.origins.items()}
    registry = ToolRegistry(catalogue.tools)
    items = multilingual_queries()
    languages = list(dict.fromkeys(item["language"] for item in items))
    rows = []
    for ranker in rankers:
        search = ToolSearch(registry, ranker=ranker)
        search.wait()
        cells = []
        for language in languages:
            queries = [
                KeywordQuery(i["query"], frozenset(i["relevant"]), "test")
                for i in items
                if i["language"] == language
            ]
            at1, at5, _ = recall(search, names, queries)
            cells.append(f"{at1:.2f} / {at5:.2f}")
        groups = (items, [i for i in items if "described_in" in i])
        for group in groups:
            queries = [KeywordQuery(i["query"], frozenset(i["relevant"]), "test") for i in group]
            at1, at5, _ = recall(search, names, queries)
            cells.append(f"{at1:.2f} / {at5:.2f}")
        rows.append((ranker, *cells))
    counts = {lang: sum(i["language"] == lang for i in items) for lang in languages}
    across = sum("described_in" in i for i in items)
    return markdown_table(
        (
            "ranker",
            *(f"{lang} ({counts[lang]} q): R@1 / R@5" for lang in languages),
            f"all ({len(items)} q)",
            f"tool described in English ({across} q)",
        ),
        rows,
        align="l" + "r" * (len(languages) + 2),
    )


if __name__ == "__main__":
    main()
