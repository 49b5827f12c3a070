"""Token cost of the tool context: every definition loaded versus deferred behind ToolSearch.

For the built-in tools alone and with real MCP servers added (the 3 and the 10 LiveMCPBench
servers with the most tools, all 70 LiveMCPBench servers, the github-mcp-server catalogue,
and everything), it reports ``ToolRegistry.context_cost()``: the all-loaded tokens (every
definition in full) against the deferred tokens (loaded definitions, the ToolSearch tool and
the announcement of the deferred names). A second table compares the announcement styles.
A third times ``context_cost()`` as each ``%%agent`` cell calls it, over catalogue size: the
first cell, a next cell with the catalogue unchanged, and one after a tool changed.

Counts are local estimates (``nbagent.core.tokens``: the Claude-v1 BPE tokenizer), not a live
model's counts. Target: at least 90% saved with 100 or more MCP tools.

Run ``python benchmarks/token_cost.py`` from the repo root (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from catalogue import (
    McpDefinition,
    build_catalogue,
    github_definitions,
    livemcpbench_definitions,
    markdown_table,
    run_line,
)

from nbagent.catalogue.delta import render_announcement, render_legacy_block
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.tokens import count_tokens
from nbagent.core.tool import Tool

TARGET_SAVED = 0.90
"""The share of tokens deferral should save with :data:`TARGET_MIN_MCP_TOOLS` MCP tools."""
TARGET_MIN_MCP_TOOLS = 100
"""From how many MCP tools the target applies."""


@dataclass(frozen=True)
class Setup:
    """One tool set to measure: the built-in tools plus some MCP tools."""

    label: str
    """What the row shows."""
    mcp_tools: list[Tool]
    """The MCP tools added to the built-in ones."""


def builtin_tools() -> list[Tool]:
    """Return the tools a kernel gets from ``%load_ext nbagent``: the built-in tools and the
    agent's session tools (sub-agents, task list, questions, plan mode, MCP resources).

    Returns:
        The tools, ToolSearch left out (each setup adds its own).
    """
    from nbagent.loop.agent import Agent
    from nbagent.orchestration import TaskBoard, session_tools
    from nbagent.tools import ToolContext
    from nbagent.tools import builtin_tools as tools_of

    registry = ToolRegistry(tools_of(ToolContext(root=Path.cwd())))
    agent = Agent(registry=registry, client=object())
    return [*registry.tools(), *session_tools(agent, TaskBoard(), mcp_manager=object())]


def registry_of(setup: Setup) -> ToolRegistry:
    """Build a registry of the built-in tools, a ToolSearch of its own, and the setup's tools.

    Args:
        setup: The MCP tools to add.

    Returns:
        The registry.
    """
    registry = ToolRegistry([*builtin_tools(), *setup.mcp_tools])
    registry.register(ToolSearch(registry).tool)
    return registry


def top_servers(definitions: Sequence[McpDefinition], n: int) -> list[str]:
    """Pick the servers with the most tools, ties broken by name.

    Args:
        definitions: The definitions to count.
        n: How many servers.

    Returns:
        The servers' names, most tools first.
    """
    counts = Counter(d.server for d in definitions)
    return sorted(counts, key=lambda server: (-counts[server], server))[:n]


def setups(quick: bool) -> tuple[list[Setup], list[str]]:
    """Build the tool sets to measure.

    Args:
        quick: Only the built-in tools and the 3 largest servers.

    Returns:
        The setups, and notes naming the servers picked and the definitions skipped.
    """
    livemcpbench = build_catalogue(livemcpbench_definitions())
    valid = list(livemcpbench.origins.values())
    result = [Setup("built-in tools only", [])]
    skipped = "; ".join(livemcpbench.skipped) or "none"
    notes = [f"LiveMCPBench definitions skipped (schema rejected): {skipped}."]
    for n in (3,) if quick else (3, 10):
        servers = top_servers(valid, n)
        picked = [t for t in livemcpbench.tools if livemcpbench.origins[t.name].server in servers]
        result.append(Setup(f"+ {n} LiveMCPBench servers", picked))
        counts = Counter(d.server for d in valid)
        notes.append(
            f"The {n} servers with the most tools: "
            + ", ".join(f"{server} ({counts[server]})" for server in servers)
            + "."
        )
    if not quick:
        github = build_catalogue(github_definitions())
        servers = len({d.server for d in valid})
        result += [
            Setup(f"+ all LiveMCPBench servers ({servers} with a valid tool)", livemcpbench.tools),
            Setup("+ github-mcp-server", github.tools),
            Setup(
                "+ all LiveMCPBench servers + github-mcp-server",
                [*livemcpbench.tools, *github.tools],
            ),
        ]
    return result, notes


def cost_table(registries: Sequence[tuple[Setup, ToolRegistry]]) -> str:
    """Render the all-loaded versus deferred table.

    Args:
        registries: Each setup with its registry.

    Returns:
        The Markdown table.
    """
    rows = []
    for setup, registry in registries:
        cost = registry.context_cost()
        compact = registry.context_cost(style="compact")
        mcp = len(setup.mcp_tools)
        saved = f"{cost.saved:.1%}" if cost.all_loaded else "n/a"
        saved_compact = f"{compact.saved:.1%}" if compact.all_loaded else "n/a"
        if mcp >= TARGET_MIN_MCP_TOOLS:
            target = " / ".join(
                f"{'yes' if c.saved >= TARGET_SAVED else 'NO'}" for c in (cost, compact)
            )
            target = f"≥ {TARGET_SAVED:.0%}: {target}"
        else:
            target = "—"
        rows.append(
            (
                setup.label,
                len(registry),
                mcp,
                len(registry.deferred()),
                f"{cost.all_loaded:,}",
                f"{cost.deferred:,}",
                saved,
                f"{compact.deferred:,}",
                saved_compact,
                target,
            )
        )
    return markdown_table(
        (
            "setup",
            "tools",
            "MCP tools",
            "deferred tools",
            "all-loaded tokens",
            "deferred tokens (plain)",
            "saved (plain)",
            "deferred tokens (compact)",
            "saved (compact)",
            "target (plain / compact)",
        ),
        rows,
        align="lrrrrrrrrl",
    )


def announcement_table(registries: Sequence[tuple[Setup, ToolRegistry]]) -> str:
    """Render the tokens of the announcement styles for each setup's deferred names.

    Args:
        registries: Each setup with its registry.

    Returns:
        The Markdown table (setups without deferred tools are left out).
    """
    rows = []
    for setup, registry in registries:
        names = [t.name for t in registry.deferred()]
        if not names:
            continue
        plain = count_tokens(render_announcement(added=names, style="plain"))
        compact = count_tokens(render_announcement(added=names, style="compact"))
        legacy = count_tokens(render_legacy_block(names))
        rows.append(
            (
                setup.label,
                len(names),
                f"{plain:,}",
                f"{compact:,}",
                f"{1 - compact / plain:.1%}",
                f"{legacy:,}",
                f"{plain / len(names):.1f}",
                f"{compact / len(names):.1f}",
            )
        )
    return markdown_table(
        (
            "setup",
            "deferred names",
            "plain",
            "compact",
            "compact saves",
            "legacy block",
            "plain per name",
            "compact per name",
        ),
        rows,
        align="lrrrrrrr",
    )


def cell_cost_table(sizes: Sequence[int], runs: int) -> str:
    """Time ``context_cost()`` per ``%%agent`` cell over catalogue size (medians, ms).

    Each run builds a fresh registry of the built-in tools and ``size`` MCP tools (the
    LiveMCPBench definitions cycled under numbered server copies) and empties the memo of
    :func:`~nbagent.core.tokens.count_tokens`, as in a new kernel, then times three cells: the
    first, a next one with the catalogue unchanged, and one after a tool was replaced by a
    copy with another description.

    Args:
        sizes: The numbers of MCP tools.
        runs: Runs per size.

    Returns:
        The Markdown table.
    """
    builtins = builtin_tools()
    definitions = livemcpbench_definitions()
    rows = []
    for size in sizes:
        mcp = build_catalogue(definitions, size=size).tools
        first: list[float] = []
        unchanged: list[float] = []
        changed: list[float] = []
        for run in range(runs):
            registry = ToolRegistry([*builtins, *mcp])
            registry.register(ToolSearch(registry).tool)
            count_tokens.cache_clear()
            for times in (first, unchanged):
                started = time.perf_counter()
                registry.context_cost()
                times.append(time.perf_counter() - started)
            edited = mcp[run % len(mcp)]
            registry.register(
                dataclasses.replace(edited, description=f"{edited.description} (v{run})"),
                replace=True,
            )
            started = time.perf_counter()
            registry.context_cost()
            changed.append(time.perf_counter() - started)
        rows.append(
            (
                f"{size:,}",
                f"{len(registry):,}",
                runs,
                *(f"{statistics.median(t) * 1e3:,.3f}" for t in (first, unchanged, changed)),
            )
        )
    return markdown_table(
        (
            "MCP tools",
            "tools",
            "runs",
            "first cell (ms)",
            "next cell, unchanged (ms)",
            "next cell, one tool changed (ms)",
        ),
        rows,
        align="rrrrrr",
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its tables.

    Args:
        argv: Command-line arguments (``--quick``); ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the smallest setups")
    args = parser.parse_args(argv)
    measured, notes = setups(args.quick)
    registries = [(setup, registry_of(setup)) for setup in measured]
    builtins = [t.name for t in builtin_tools()]
    print("## Token cost of the tool context\n")
    print(run_line(sys.argv))
    print()
    print(cost_table(registries))
    print()
    print(
        "All-loaded: every definition in full, ToolSearch left out. Deferred: the loaded "
        "definitions, ToolSearch and the plain announcement of the deferred names "
        "(`ToolRegistry.context_cost()`). Estimates with the Claude-v1 tokenizer "
        f"(`nbagent.core.tokens`). Built-in and session tools ({len(builtins)}): "
        f"{', '.join(builtins)}. " + " ".join(notes) + "\n"
    )
    print("### Announcement of the deferred names, by style (tokens)\n")
    print(announcement_table(registries))
    print()
    print(
        "plain: one name a line; compact: MCP tools grouped by server "
        "(`mcp__<server>__: a, b`), both inside a `<system-reminder>` "
        "(`delta.render_announcement`); legacy: the `<available-deferred-tools>` block "
        "(`delta.render_legacy_block`)."
    )
    print()
    print("### `context_cost()` per `%%agent` cell, by catalogue size\n")
    print(cell_cost_table((500,) if args.quick else (500, 5000), 3 if args.quick else 15))
    print()
    print(
        "Medians of fresh registries; each `%%agent` cell calls `ToolRegistry.context_cost()` "
        "for its meter (deferral's saved tokens). One tool changed: replaced by a copy with "
        "another description."
    )


if __name__ == "__main__":
    main()
