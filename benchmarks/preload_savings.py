"""What predictive preloading saves (ToolSearch round trips) and costs (definition tokens).

For each first prompt, :func:`nbagent.catalogue.preload.preload` picks tools before the first turn
(default token budget). Each task needs some tools, as groups of alternatives (any tool of a
group will do). The model assumed without preloading makes one ToolSearch round trip per
needed group; a group that a pick covers needs none. Reported per ranker:

- round trips saved: covered groups, over all groups;
- tasks needing no search at all: every group covered;
- precision: picks that cover a needed group, over all picks;
- tokens: definition tokens of the picks per task (all, and those of useless picks).

Two prompt sets: ``benchmarks/data/preload_prompts.json`` (14 hand-written first prompts over
github-mcp-server and the MCP reference servers, most naming a server, two needing no tool),
and the 94 LiveMCPBench tasks (full text; a group is one annotated tool with its servers).

``--fit`` instead prints, for each ranker, the confidence threshold fitted on the task-style
dev queries (``benchmarks/data/task_dev_queries.json``): the lowest score from which at least
80% of the top-5 hits were relevant. ``nbagent.catalogue.preload.MIN_SCORE`` holds the result.

Run ``python benchmarks/preload_savings.py`` from the repo root (``--quick``: keyword and
bm25 rankers, scripted prompts only).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from catalogue import (
    Catalogue,
    build_catalogue,
    livemcpbench_definitions,
    livemcpbench_queries,
    markdown_table,
    run_line,
)
from devsets import keyword_catalogue, read, task_dev_queries

from nbagent.catalogue.preload import DEFAULT_BUDGET, preload
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch

RANKER_NAMES = ("keyword", "bm25", "semantic", "hybrid")
"""The rankers compared."""
PRECISION = 0.8
"""The precision the fitted threshold must reach on the dev queries."""


@dataclass(frozen=True)
class Task:
    """A first prompt and the tools it needs."""

    prompt: str
    """The prompt."""
    groups: tuple[frozenset[str], ...]
    """Each needed group: the nbagent names of the tools that would do."""


def scripted_tasks(catalogue: Catalogue) -> list[Task]:
    """Load the hand-written prompts over the keyword catalogue."""
    by_key = {f"{d.server}/{d.name}": name for name, d in catalogue.origins.items()}
    return [
        Task(p["prompt"], tuple(frozenset(by_key[k] for k in group) for group in p["needed"]))
        for p in read("preload_prompts.json")["prompts"]
    ]


def entry_tasks(catalogue: Catalogue, items: Sequence[dict]) -> list[Task]:
    """Turn LiveMCPBench-style tasks (``query``, ``relevant``) into tasks over a catalogue."""

    def group(entry: dict) -> frozenset[str]:
        return frozenset(
            name
            for name, d in catalogue.origins.items()
            if d.name == entry["name"] and d.server in entry["servers"]
        )

    return [
        Task(item["query"], tuple(group(e) for e in item["relevant"]))
        for item in items
        if item["relevant"]
    ]


def measure(search: ToolSearch, tasks: Sequence[Task]) -> list[str]:
    """Preload for every task and summarise.

    Returns:
        The row cells: saved, no-search tasks, precision, tokens, wasted tokens.
    """
    groups = covered = no_search = picks = useful = tokens = wasted = 0
    for task in tasks:
        chosen = preload(search, task.prompt)
        names = set(chosen.names)
        hit = [bool(names & group) for group in task.groups]
        groups += len(task.groups)
        covered += sum(hit)
        no_search += bool(task.groups) and all(hit)
        for pick in chosen.picks:
            good = any(pick.name in group for group in task.groups)
            picks += 1
            useful += good
            wasted += 0 if good else pick.tokens
        tokens += chosen.tokens
    n = len(tasks)
    return [
        f"{covered} / {groups}",
        f"{no_search} / {sum(bool(t.groups) for t in tasks)}",
        f"{useful / picks:.2f}" if picks else "—",
        f"{picks / n:.2f}",
        f"{tokens / n:,.0f}",
        f"{wasted / n:,.0f}",
    ]


def fit(rankers: Sequence[str]) -> None:
    """Print the fitted confidence threshold of each ranker (dev queries only)."""
    catalogue = build_catalogue(livemcpbench_definitions())
    tasks = entry_tasks(catalogue, task_dev_queries())
    registry = ToolRegistry(catalogue.tools)
    for ranker in rankers:
        search = ToolSearch(registry, ranker=ranker)
        search.wait()
        scored = []
        for task in tasks:
            for hit in search.search(task.prompt, max_results=5):
                scored.append((hit.score, any(hit.name in g for g in task.groups)))
        scored.sort(reverse=True)
        threshold, good = float("inf"), 0
        for i, (score, relevant) in enumerate(scored):
            good += relevant
            if good / (i + 1) >= PRECISION:
                threshold = score
        print(f"{ranker}: {threshold:g} ({len(scored)} dev hits)")


def ready(search: ToolSearch) -> ToolSearch:
    """Wait until the search's ranker scores in full (the embeddings made), then return it."""
    search.wait()
    return search


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark (or the fit) and print its tables.

    Args:
        argv: Command-line arguments (``--quick``, ``--fit``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rankers, scripted prompts")
    parser.add_argument("--fit", action="store_true", help="fit thresholds on the dev queries")
    args = parser.parse_args(argv)
    rankers = RANKER_NAMES[:2] if args.quick else RANKER_NAMES
    if args.fit:
        fit(rankers)
        return
    sets: list[tuple[str, Callable[[], tuple[Catalogue, list[Task]]]]] = [
        ("Scripted first prompts (github-mcp-server + reference servers)", _scripted),
    ]
    if not args.quick:
        sets.append(("LiveMCPBench tasks (full text)", _livemcpbench))
    print("## Predictive preloading\n")
    print(run_line(sys.argv))
    for title, load in sets:
        catalogue, tasks = load()
        registry = ToolRegistry(catalogue.tools)
        rows = [(r, *measure(ready(ToolSearch(registry, ranker=r)), tasks)) for r in rankers]
        print(f"\n### {title}: {len(tasks)} prompts, {len(catalogue.tools)} deferred tools\n")
        print(
            markdown_table(
                (
                    "ranker",
                    "round trips saved",
                    "tasks with no search left",
                    "pick precision",
                    "picks per prompt",
                    "tokens per prompt",
                    "of which useless",
                ),
                rows,
                align="lrrrrrr",
            )
        )
    print(
        f"\nBudget {DEFAULT_BUDGET:,} definition tokens per prompt. A round trip is one model "
        "turn that calls ToolSearch; the picked definitions are sent on every request of the "
        "conversation (from the prompt cache after the first)."
    )


def _scripted() -> tuple[Catalogue, list[Task]]:
    catalogue = keyword_catalogue()
    return catalogue, scripted_tasks(catalogue)


def _livemcpbench() -> tuple[Catalogue, list[Task]]:
    catalogue = build_catalogue(livemcpbench_definitions())
    return catalogue, entry_tasks(catalogue, livemcpbench_queries())


if __name__ == "__main__":
    main()
