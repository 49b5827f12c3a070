"""ToolSearch latency over catalogues of 100, 1,000 and 10,000 deferred MCP tools.

For each size, from the real definitions cycled under numbered server copies (see
``catalogue.py``), it measures with ``time.perf_counter_ns``:

- registering: building the Tools (each construction validates its schema) and one
  ``register_many`` call;
- the index build: the first search of a fresh ToolSearch (cold), which indexes every
  deferred tool and then answers;
- warm searches: a fixed set of short queries of the kind a model types, each run many
  times after a warm-up; the median and 99th percentile over all runs.

Targets: a warm search under 1 ms at 1,000 tools and under 10 ms at 10,000.

A second table compares the rankers (``keyword``, ``bm25``, ``semantic``, ``hybrid``) at
1,000, 10,000 and 50,000 tools: the index build (until a fresh ToolSearch's full scoring is
ready; for the embedding rankers, with the models already loaded), warm searches, the first search
after one tool is added (registering it included; the median over several additions, each
followed by one search; the embedding rankers answer by BM25 while they embed it) with the
same query searched warm just before each addition, and the ratio of those two medians.
Targets: hybrid under 20 ms per query at 10,000 tools; the first search after adding one tool
at most 3 times a warm search (keyword, bm25, hybrid); a warm keyword search under 2 ms at
50,000 tools.
Sentence embeddings cost about the same per tool whatever the catalogue, and the large
catalogues repeat the real definitions under numbered server copies, so the embedding
rankers embed each distinct definition once, before the comparison (text with the copy
number taken out, see :class:`CopyEmbedder`): their build figures are those of a warm
vector cache (``benchmarks/embedding_cost.py`` measures the cold cost). Query embeddings are
never cached.

Run ``python benchmarks/search_latency.py`` from the repo root (``--quick`` for a smoke run;
``--rankers`` to pick rankers, ``--ranker-sizes`` their catalogue sizes, e.g.
``--quick --ranker-sizes 1000,10000,50000``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from catalogue import (
    McpDefinition,
    build_catalogue,
    github_definitions,
    interleave_servers,
    livemcpbench_definitions,
    markdown_table,
    run_line,
)

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch, make_ranker

SIZES = (100, 1_000, 10_000)
"""Catalogue sizes of the full run."""
QUICK_SIZES = (20, 50)
"""Catalogue sizes of the smoke run."""

TARGETS_MS = {1_000: 1.0, 10_000: 10.0}
"""The warm-search latency targets, in milliseconds, by catalogue size."""

RANKER_SIZES = (1_000, 10_000, 50_000)
"""Catalogue sizes of the ranker comparison."""
RANKER_NAMES = ("keyword", "bm25", "semantic", "hybrid")
"""The rankers compared."""
HYBRID_TARGET_MS = 20.0
"""The hybrid ranker's warm-search target at 10,000 tools, in milliseconds."""
KEYWORD_TARGET_MS = 2.0
"""The keyword ranker's warm-search target at 50,000 tools, in milliseconds."""
ADD_RATIO_TARGET = 3.0
"""The most the first search after adding one tool may take, in warm searches."""
ADDS = 9
"""Tools added one at a time, each timed with the first search after it and, just before it,
the same query warm (the medians are reported)."""
_COPY = re.compile(r"^([^:]*?) ?\d+:")

KEYWORD_QUERIES = (
    "github create issue",
    "+slack send message",
    "read file",
    "list pull requests",
    "take screenshot",
    "stock price history",
    "mcp__github",
    "查询火车票",
)
"""Short queries as a model would type them; a ``select:`` query is added per catalogue."""

TASK_QUERY = (
    "I am preparing the quarterly report for our team. First find the open issues in the "
    "analytics repository that mention the dashboard and list who is assigned to each one. "
    "Then read the sales spreadsheet saved in the shared folder, compute the total revenue "
    "per region and plot it as a bar chart. Look up the current exchange rate from euros to "
    "dollars so the totals can be shown in both currencies, check tomorrow's weather in Berlin "
    "for the team meeting, and finally send a short summary with the chart to the reporting "
    "channel on Slack."
)
"""A long request of several steps (96 words, 74 distinct terms), as a model passing the
user's task on would send it: the embedding rankers embed it whole and window by window."""


@dataclass(frozen=True)
class SizeResult:
    """The measurements of one catalogue size."""

    size: int
    """The number of deferred tools."""
    build_ms: float
    """Building the Tools (schema validation included)."""
    register_ms: float
    """One ``register_many`` of all of them."""
    cold_ms: float
    """Median time of the first search of a fresh ToolSearch (index build included)."""
    warm_ns: list[int]
    """Every timed warm search, all queries together."""
    per_query_ns: list[float]
    """The median warm time of each query, in :func:`queries_for` order."""
    skipped: list[str]
    """Definitions the Tool model rejected (left out of the cycle)."""


def queries_for(names: Sequence[str]) -> list[str]:
    """Return the benchmark queries for a catalogue.

    Args:
        names: The catalogue's tool names, in order.

    Returns:
        :data:`KEYWORD_QUERIES` plus a ``select:`` of the first and last tools.
    """
    return [*KEYWORD_QUERIES, f"select:{names[0]},{names[-1]}"]


def measure(
    definitions: Sequence[McpDefinition], size: int, repeats: int, warmup: int, cold_runs: int
) -> SizeResult:
    """Measure registering, indexing and searching one catalogue size.

    Args:
        definitions: The real definitions to cycle.
        size: The number of deferred tools.
        repeats: Timed runs of each query.
        warmup: Untimed runs of each query before timing.
        cold_runs: Fresh ToolSearch objects whose first search is timed.

    Returns:
        The measurements.
    """
    start = time.perf_counter_ns()
    catalogue = build_catalogue(definitions, size)
    tools = catalogue.tools
    built = time.perf_counter_ns()
    registry = ToolRegistry()
    registry.register_many(tools)
    registered = time.perf_counter_ns()
    queries = queries_for([t.name for t in tools])

    cold: list[int] = []
    for _ in range(cold_runs):
        search = ToolSearch(registry)
        begin = time.perf_counter_ns()
        search.search(queries[0])
        cold.append(time.perf_counter_ns() - begin)

    warm: list[int] = []
    per_query: list[float] = []
    for query in queries:
        for _ in range(warmup):
            search.search(query)
        samples = []
        for _ in range(repeats):
            begin = time.perf_counter_ns()
            search.search(query)
            samples.append(time.perf_counter_ns() - begin)
        per_query.append(statistics.median(samples))
        warm += samples
    return SizeResult(
        size=size,
        build_ms=(built - start) / 1e6,
        register_ms=(registered - built) / 1e6,
        cold_ms=statistics.median(cold) / 1e6,
        warm_ns=warm,
        per_query_ns=per_query,
        skipped=catalogue.skipped,
    )


def p99(samples: Sequence[int]) -> float:
    """Return the 99th percentile of a sample (inclusive method; needs two values or more).

    Args:
        samples: The values.

    Returns:
        The percentile.
    """
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def summary_table(results: Sequence[SizeResult]) -> str:
    """Render the per-size table.

    Args:
        results: One result per catalogue size.

    Returns:
        The Markdown table.
    """
    rows = []
    for r in results:
        median_ms, p99_ms = statistics.median(r.warm_ns) / 1e6, p99(r.warm_ns) / 1e6
        target = TARGETS_MS.get(r.size)
        rows.append(
            (
                f"{r.size:,}",
                f"{r.build_ms:,.0f}",
                f"{r.build_ms * 1000 / r.size:,.0f}",
                f"{r.register_ms:,.1f}",
                f"{r.cold_ms:,.1f}",
                f"{median_ms:.3f}",
                f"{p99_ms:.3f}",
                f"< {target:g} ms" if target else "—",
                (f"{_met(median_ms < target)} / {_met(p99_ms < target)}" if target else "—"),
            )
        )
    return markdown_table(
        (
            "deferred tools",
            "build Tools (ms)",
            "per tool (µs)",
            "register_many (ms)",
            "index build, cold first search (ms)",
            "warm median (ms)",
            "warm p99 (ms)",
            "target",
            "met (median / p99)",
        ),
        rows,
        align="rrrrrrrll",
    )


def per_query_table(results: Sequence[SizeResult]) -> str:
    """Render the median warm latency of each query at each size.

    Args:
        results: One result per catalogue size.

    Returns:
        The Markdown table (``select:`` names shortened to ``select:<first>,<last>``).
    """
    labels = [*KEYWORD_QUERIES, "select:<first>,<last>"]
    rows = [
        (f"`{label}`", *(f"{r.per_query_ns[i] / 1e3:,.1f}" for r in results))
        for i, label in enumerate(labels)
    ]
    return markdown_table(
        ("query", *(f"{r.size:,} tools (µs)" for r in results)),
        rows,
        align="l" + "r" * len(results),
    )


class CopyEmbedder:
    """Wraps an embedder so that numbered server copies reuse the original's vector.

    A tool text (``github7: create issue. ...``; MCP tool texts start with ``server:``) is
    embedded as ``github: create issue. ...``, once. Texts without a colon (the benchmark's
    queries) are embedded every time.

    Args:
        inner: The real embedder.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.multilingual = inner.multilingual
        self.dimension = inner.dimension
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts, reusing vectors of tool texts that differ only by a copy number."""
        if not any(":" in text for text in texts):
            return self.inner.embed(texts)
        keys = [_COPY.sub(r"\1:", text, count=1) for text in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if missing:
            self._memo.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.stack([self._memo[k] for k in keys])


@dataclass(frozen=True)
class RankerResult:
    """The measurements of one ranker at one catalogue size."""

    ranker: str
    """The ranker's name."""
    size: int
    """The number of deferred tools."""
    build_ms: float
    """Indexing a fresh ToolSearch's tools until the full scoring is ready."""
    add_one_ns: list[int]
    """Each first search after one more tool was registered, registering included
    (incremental re-index; the embedding rankers answer by BM25 while the tool is embedded)."""
    settled_ns: list[int]
    """From each addition until the full scoring is ready again (the embedding rankers'
    background merge; the same as the first search for the others)."""
    before_add_ns: list[int]
    """The same query searched warm just before each addition."""
    warm_ns: list[int]
    """Every timed warm search of the short queries."""
    task_ns: list[int]
    """Every timed warm search of :data:`TASK_QUERY`."""


def fresh_ranker(name: str, embedders):
    """Build a ranker; the embedding rankers share ``embedders`` and keep vectors in memory."""
    from nbagent.catalogue.rankers.embedder import DEFAULT_EMBEDDERS
    from nbagent.catalogue.rankers.hybrid import HybridRanker
    from nbagent.catalogue.rankers.semantic import SemanticIndex

    if name not in ("semantic", "hybrid"):
        return make_ranker(name)
    index = SemanticIndex(embedders, [w for _, w in DEFAULT_EMBEDDERS], cache_dir=None)
    if name == "semantic":
        return HybridRanker(semantic=index, lexical_weight=0.0, name="semantic")
    return HybridRanker(semantic=index)


def measure_ranker(
    name: str, tools: Sequence, extras: Sequence, embedder, repeats: int, warmup: int
) -> RankerResult:
    """Measure one ranker over one catalogue.

    Args:
        name: The ranker.
        tools: The catalogue's tools.
        extras: More tools, registered one at a time to time the incremental re-index.
        embedder: The embedder the embedding rankers use.
        repeats: Timed runs of each query.
        warmup: Untimed runs of each query first.

    Returns:
        The measurements.
    """
    registry = ToolRegistry(tools)
    search = ToolSearch(registry, ranker=fresh_ranker(name, embedder))
    queries = [*KEYWORD_QUERIES]
    begin = time.perf_counter_ns()
    search.wait()
    build = time.perf_counter_ns() - begin
    add_one: list[int] = []
    settled: list[int] = []
    before: list[int] = []
    for extra in extras:
        search.search(queries[0])
        begin = time.perf_counter_ns()
        search.search(queries[0])
        before.append(time.perf_counter_ns() - begin)
        begin = time.perf_counter_ns()
        registry.register(extra)
        search.search(queries[0])
        add_one.append(time.perf_counter_ns() - begin)
        search.wait()
        settled.append(time.perf_counter_ns() - begin)
    warm: list[int] = []
    for query in queries:
        for _ in range(warmup):
            search.search(query)
        for _ in range(repeats):
            begin = time.perf_counter_ns()
            search.search(query)
            warm.append(time.perf_counter_ns() - begin)
    task: list[int] = []
    for run in range(warmup + repeats):
        begin = time.perf_counter_ns()
        search.search(TASK_QUERY)
        if run >= warmup:
            task.append(time.perf_counter_ns() - begin)
    return RankerResult(name, len(tools), build / 1e6, add_one, settled, before, warm, task)


def embed_distinct_texts(
    embedder: CopyEmbedder, definitions: Sequence[McpDefinition], count: int
) -> None:
    """Fill the embedder's memo with a catalogue's distinct tool texts, so that the index
    builds measured after it embed nothing.

    Args:
        embedder: The embedder.
        definitions: The definitions to draw from.
        count: How many tools the catalogue has.
    """
    from nbagent.catalogue.rankers.fields import ToolFields

    embedder.embed([ToolFields.of(t).text for t in build_catalogue(definitions, count).tools])


def ranker_table(results: Sequence[RankerResult]) -> str:
    """Render the ranker comparison.

    Args:
        results: One result per ranker and size.

    Returns:
        The Markdown table.
    """
    rows = []
    for r in results:
        median_ms, p99_ms = statistics.median(r.warm_ns) / 1e6, p99(r.warm_ns) / 1e6
        add_ms = statistics.median(r.add_one_ns) / 1e6
        before_ms = statistics.median(r.before_add_ns) / 1e6
        ratio = add_ms / before_ms
        targets = []
        if r.ranker == "hybrid" and r.size == 10_000:
            targets.append(_target("warm", median_ms, HYBRID_TARGET_MS, "ms"))
        if r.ranker == "keyword" and r.size == 50_000:
            targets.append(_target("warm", median_ms, KEYWORD_TARGET_MS, "ms"))
        if r.ranker != "semantic" and r.size == 10_000:
            targets.append(_target("add", ratio, ADD_RATIO_TARGET, "× warm"))
        rows.append(
            (
                r.ranker,
                f"{r.size:,}",
                f"{r.build_ms:,.0f}",
                f"{median_ms:.2f}",
                f"{before_ms:,.2f}",
                f"{add_ms:,.2f}",
                f"{ratio:,.1f}×",
                f"{statistics.median(r.settled_ns) / 1e6:,.1f}",
                f"{p99_ms:.2f}",
                f"{statistics.median(r.task_ns) / 1e6:.2f}",
                "; ".join(targets) or "—",
            )
        )
    return markdown_table(
        (
            "ranker",
            "deferred tools",
            "index build (ms)",
            "warm median (ms)",
            "warm, same query (ms)",
            "first search after adding one tool (ms)",
            "add / warm",
            "until the full scoring again (ms)",
            "warm p99 (ms)",
            "warm median, a 96-word task (ms)",
            "targets (medians)",
        ),
        rows,
        align="lrrrrrrrrrl",
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its tables.

    Args:
        argv: Command-line arguments (``--quick``, ``--rankers``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few repetitions")
    parser.add_argument(
        "--rankers",
        default=None,
        help="comma-separated rankers to compare (default: all; --quick: keyword,bm25)",
    )
    parser.add_argument(
        "--ranker-sizes",
        default=None,
        help="comma-separated catalogue sizes of the ranker comparison "
        "(default: 1000,10000,50000; --quick: 20,50)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed runs of each query in the ranker comparison (default: 50; --quick: 1)",
    )
    args = parser.parse_args(argv)
    default_rankers = RANKER_NAMES[:2] if args.quick else RANKER_NAMES
    rankers = args.rankers.split(",") if args.rankers else list(default_rankers)
    sizes, repeats, warmup, cold_runs = (
        (QUICK_SIZES, 5, 1, 1) if args.quick else (SIZES, 200, 20, 5)
    )
    definitions = interleave_servers(livemcpbench_definitions() + github_definitions())
    build_catalogue(definitions, 1)  # imports jsonschema and compiles the meta-schema, once
    results = [measure(definitions, size, repeats, warmup, cold_runs) for size in sizes]
    queries = len(KEYWORD_QUERIES) + 1
    print("## ToolSearch latency (keyword ranker)\n")
    print(run_line(sys.argv))
    print()
    print(summary_table(results))
    print()
    print(
        f"Warm figures pool {queries} queries × {repeats} runs after {warmup} warm-up runs each; "
        f"the cold figure is the median of {cold_runs} fresh ToolSearch objects. "
        "Building starts with the schema validator warm (its import and meta-schema "
        "compilation, once per process, are left out). Catalogues cycle the real "
        "definitions of LiveMCPBench and github-mcp-server "
        "(interleaved by server) under numbered server copies; every tool is an MCP tool, "
        "so every one is deferred. Skipped (schema rejected by the Tool model): "
        f"{'; '.join(results[-1].skipped) or 'none'}.\n"
    )
    print("### Median warm latency per query\n")
    print(per_query_table(results))
    ranker_sizes = QUICK_SIZES if args.quick else RANKER_SIZES
    if args.ranker_sizes:
        ranker_sizes = tuple(int(size) for size in args.ranker_sizes.split(","))
    embedder = None
    if {"semantic", "hybrid"} & set(rankers):
        from nbagent.catalogue.rankers.embedder import DEFAULT_EMBEDDERS

        embedder = [CopyEmbedder(factory()) for factory, _ in DEFAULT_EMBEDDERS]
        for each in embedder:
            embed_distinct_texts(each, definitions, 50 if args.quick else 1_000)
    if {"bm25", "hybrid"} & set(rankers):
        import numpy  # noqa: F401  (its import is not part of an index build)
    ranker_repeats = args.repeats or repeats // 4 or 1
    compared = []
    for size in ranker_sizes:
        catalogue = build_catalogue(definitions, size + ADDS)
        tools, extras = catalogue.tools[:size], catalogue.tools[size:]
        for name in rankers:
            compared.append(
                measure_ranker(name, tools, extras, embedder, ranker_repeats, warmup // 4 or 1)
            )
    print("\n### Rankers compared\n")
    print(ranker_table(compared))
    print(
        f"\nWarm figures pool {len(KEYWORD_QUERIES)} queries × {ranker_repeats} runs each."
        " The embedding rankers' build and re-index find every vector already computed (as "
        "when the disk cache is warm; numbered server copies reuse the original's vector, "
        "see the module docstring). Build: until the full scoring is ready; first search after "
        f"adding one tool: registering it and the first search then, median of {ADDS} "
        "additions (the embedding rankers answer by BM25 while they embed it; `python "
        "benchmarks/embedding_cost.py` measures the cold cost); warm, same query: that query "
        "(`github create issue`) searched warm just before each addition; add / warm: the "
        "ratio of those two medians, measured in the same run; until the full scoring again: "
        "from registering until the embeddings are merged (the others: until the first search "
        "is done)."
    )


def _target(what: str, value: float, limit: float, unit: str) -> str:
    """Say a target and whether a value meets it (at most ``limit``)."""
    return f"{what} ≤ {limit:g}{'' if unit.startswith('×') else ' '}{unit}: {_met(value <= limit)}"


def _met(ok: bool) -> str:
    """Say whether a target is met."""
    return "yes" if ok else "NO"


if __name__ == "__main__":
    main()
