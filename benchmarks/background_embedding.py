"""What embedding 1,000 new tools costs the person's work running beside it.

The person's work is a CPU-bound pure-Python loop (a cell's), run on the main thread again
and again. Three ways, in rounds that take turns:

- alone: the loop with nothing else running;
- thread: the loop while a ``SemanticIndex`` embeds 1,000 tools of LiveMCPBench (cold, no
  cache) with the models on its own thread of this process (niced, as before), MiniLM and the
  multilingual USE;
- child: the same with the default embedders, the models in a child process
  (:mod:`nbagent.catalogue.rankers.child`: indexing at nice 19).

For each: the loop's median time per run while the embedding goes on (× alone: the cost to
the person) and how long the embedding took (it must finish while the person works; the
person stops after ``--limit`` seconds, and the table says how far the embedding got). The
models are loaded before the timing starts (a child's too), as in a kernel where they have
embedded before. Target: the loop at most 1.2× alone, the embedding done.

Run ``python benchmarks/background_embedding.py [--rounds N] [--limit S]`` from the repo root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import build_catalogue, livemcpbench_definitions, markdown_table, run_line  # noqa: E402

TOOLS = 1_000
LOOP = 300_000
"""Iterations of the person's loop per run (about 20 ms on this machine alone)."""


def person_loop() -> float:
    """One run of the person's CPU-bound loop; its wall time in seconds."""
    start = time.perf_counter()
    total = 0
    for i in range(LOOP):
        total += i * i % 7
    return time.perf_counter() - start


def while_embedding(
    sources: Sequence[Any], tools: Sequence[Any], limit: float
) -> tuple[list[float], float, str]:
    """The loop's runs while an index embeds the tools, how long the embedding took (or
    ``limit`` when it had not finished by then), and how far it got."""
    from nbagent.catalogue.rankers.semantic import SemanticIndex

    index = SemanticIndex(list(sources), [0.6, 0.4], cache_dir=None)
    runs: list[float] = []
    start = time.perf_counter()
    index.index(tools)
    while not index.wait(0) and time.perf_counter() - start < limit:
        runs.append(person_loop())
    took = time.perf_counter() - start
    status = index.status
    index.index([])  # a newer job: the thread stops embedding the old one
    index.wait()
    return runs, took, status


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--limit", type=float, default=120.0, help="seconds the person works, at most (120)"
    )
    args = parser.parse_args()
    from nbagent.catalogue.rankers.child import ChildEmbedder
    from nbagent.catalogue.rankers.minilm import MiniLMEmbedder
    from nbagent.catalogue.rankers.usem import USEEmbedder

    catalogue = build_catalogue(livemcpbench_definitions())
    tools = list(catalogue.tools)[:TOOLS]
    in_thread = [MiniLMEmbedder(), USEEmbedder()]
    in_child = [ChildEmbedder("minilm"), ChildEmbedder("usem")]
    ways: dict[str, Callable[[], tuple[list[float], float, str]]] = {
        "thread (before)": lambda: while_embedding(in_thread, tools, args.limit),
        "child process (now)": lambda: while_embedding(in_child, tools, args.limit),
    }
    alone: list[float] = []
    loops: dict[str, list[float]] = {name: [] for name in ways}
    took: dict[str, list[float]] = {name: [] for name in ways}
    ended: dict[str, list[str]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        alone += [person_loop() for _ in range(20)]
        for name, way in ways.items():
            runs, seconds, status = way()
            loops[name] += runs
            took[name].append(seconds)
            ended[name].append(status)
    base = statistics.median(alone)
    rows = [("alone", f"{base * 1000:.1f}", "1.00×", "", "")]
    for name in ways:
        loop = statistics.median(loops[name])
        rows.append(
            (
                name,
                f"{loop * 1000:.1f}",
                f"{loop / base:.2f}×",
                f"{statistics.median(took[name]):.1f}",
                "yes" if set(ended[name]) == {"ready"} else "; ".join(sorted(set(ended[name]))),
            )
        )
    print(run_line(sys.argv))
    print()
    print(
        f"{TOOLS:,} LiveMCPBench tools embedded cold by MiniLM and USE; the person's loop "
        f"({LOOP:,} iterations) on the main thread; medians over {args.rounds} rounds."
    )
    print()
    print(
        markdown_table(
            (
                "embedding",
                "person's loop per run (ms, median)",
                "× alone",
                "embedding took (s)",
                "done while the person worked",
            ),
            rows,
            "lrrrl",
        )
    )


if __name__ == "__main__":
    main()
