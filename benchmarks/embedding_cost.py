"""What embedding tools costs, and that nobody waits for it.

1. Cold embedding, per 1,000 tools: the distinct tool texts of LiveMCPBench, the GitHub MCP
   server and the reference servers, embedded with no cache by all-MiniLM-L6-v2 cut at 256
   word pieces (the model's length, the ranker's default before), at 128 (now), and by the
   multilingual USE v3 (now beside it); the median of three runs each, one BLAS thread.
2. The first searches after 500 new tools arrive: a ToolSearch with the default ranker
   (hybrid) over the LiveMCPBench tools, embedded and ready; 500 tools of new servers are
   registered at once (as a connecting MCP server does) and five searches run at once. Each
   search's time, and how it was ranked; then the time until the new tools are embedded and
   what the next search used. Three rounds, each with an empty vector cache.

Run ``python benchmarks/embedding_cost.py`` from the repo root.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from catalogue import (
    build_catalogue,
    github_definitions,
    livemcpbench_definitions,
    markdown_table,
    run_line,
)
from devsets import reference_definitions

from nbagent.catalogue.rankers.fields import ToolFields
from nbagent.catalogue.rankers.hybrid import HybridRanker
from nbagent.catalogue.rankers.minilm import MAX_TOKENS, TOOL_TOKENS, MiniLMEmbedder
from nbagent.catalogue.rankers.semantic import SemanticIndex
from nbagent.catalogue.rankers.usem import USEEmbedder
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch

RUNS = 3
"""Timed runs of each cold embedding."""
NEW_TOOLS = 500
"""Tools registered at once in the waiting test."""
QUERIES = (
    "create a pull request",
    "read a file",
    "current time in Tokyo",
    "search the knowledge graph",
    "list commits of a repository",
)
"""The searches run right after the new tools arrive."""
WAIT_LIMIT_S = 0.3
"""The most a search may wait for nbagent's own work."""


def cold_costs() -> str:
    """Time cold embedding per 1,000 tools for each model setting.

    Returns:
        The Markdown table.
    """
    definitions = livemcpbench_definitions() + github_definitions() + reference_definitions()
    texts = list(dict.fromkeys(ToolFields.of(t).text for t in build_catalogue(definitions).tools))
    settings = [
        (
            f"all-MiniLM-L6-v2, {MAX_TOKENS} word pieces (before)",
            MiniLMEmbedder(max_tokens=MAX_TOKENS),
        ),
        (f"all-MiniLM-L6-v2, {TOOL_TOKENS} word pieces", MiniLMEmbedder()),
        ("multilingual USE v3", USEEmbedder()),
    ]
    seconds = {}
    for label, embedder in settings:
        runs = []
        for _ in range(RUNS):
            begin = time.perf_counter()
            embedder.embed(texts)
            runs.append(time.perf_counter() - begin)
        seconds[label] = statistics.median(runs) * 1000 / len(texts)
    before = seconds[settings[0][0]]
    now = seconds[settings[1][0]] + seconds[settings[2][0]]
    rows = [(label, f"{s:.1f}", "") for label, s in seconds.items()]
    rows.append(
        (
            f"now: MiniLM at {TOOL_TOKENS} + USE (both, the hybrid default)",
            f"{now:.1f}",
            f"{now / before:.2f}",
        )
    )
    return f"{len(texts)} distinct tool texts, median of {RUNS} runs.\n\n" + markdown_table(
        ("model", "seconds per 1,000 tools", "ratio to before"), rows, "lrr"
    )


def waiting() -> str:
    """Register 500 new tools into a ready hybrid search and time the searches that follow.

    Returns:
        The Markdown table.
    """
    rows = []
    for round_number in range(1, 4):
        with tempfile.TemporaryDirectory() as directory:
            registry = ToolRegistry(build_catalogue(livemcpbench_definitions()).tools)
            search = ToolSearch(
                registry, HybridRanker(semantic=SemanticIndex(cache_dir=Path(directory)))
            )
            search.wait()
            new = build_catalogue(github_definitions() + reference_definitions(), NEW_TOOLS)
            new_tools = [
                dataclasses.replace(t, name=t.name.replace("mcp__", f"mcp__r{round_number}", 1))
                for t in new.tools
            ]
            registry.register_many(new_tools)
            begin_all = time.perf_counter()
            times, rankings = [], []
            for query in QUERIES:
                begin = time.perf_counter()
                search.search(query)
                times.append(time.perf_counter() - begin)
                rankings.append(search.ranker.ranking)
            search.wait()
            ready = time.perf_counter() - begin_all
            search.search(QUERIES[0])
            rows.append(
                (
                    round_number,
                    f"{max(times) * 1000:.0f}",
                    f"{statistics.median(times) * 1000:.0f}",
                    "yes" if max(times) <= WAIT_LIMIT_S else "NO",
                    rankings[0],
                    f"{ready:.1f}",
                    search.ranker.ranking,
                )
            )
    return markdown_table(
        (
            "round",
            "slowest of 5 first searches (ms)",
            "median (ms)",
            f"≤ {WAIT_LIMIT_S} s",
            "first search ranked by",
            "new tools embedded after (s)",
            "then ranked by",
        ),
        rows,
        "rrrrlrl",
    )


def main() -> None:
    """Print both tables."""
    print(run_line(sys.argv))
    print("\n### Cold embedding\n")
    print(cold_costs())
    print(f"\n### The first searches after {NEW_TOOLS} new tools\n")
    print(waiting())


if __name__ == "__main__":
    main()
