"""Figures for docs/benchmarks/mcp.md: start-up cost of MCP servers for the caller, and
connect latency.

Run from the repository root: ``python -m tests.mcp.figures``. It prints three tables:

1. how long ``McpManager.start()`` takes to return with no server and with 5 slow-starting
   ones (each sleeps 3 s before serving), the worst latency of a trivial registry operation
   while they start, and the time until all are connected;
2. tool count and connect latency (start, handshake, full tool listing) of up to 10 servers
   connected at once: the five reference servers that are installed, then fixtures;
3. how soon a killed HTTP server is noticed, with the liveness probe and without.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.mcp import McpManager
from tests.mcp.servers import find_reference, fixture, http_server

RUNS = 5


def startup_table() -> list[str]:
    """Time ``start()`` with no server and with 5 slow ones; probe the registry meanwhile."""
    slow = {f"s{i}": fixture("basic.py", "--start-delay", "3") for i in range(5)}
    rows = []
    for label, servers in (("none", {}), ("5 slow (3 s) stdio", slow)):
        returns, ready, worst = [], [], []
        for _ in range(RUNS):
            registry = ToolRegistry()
            with McpManager(registry, connect_timeout=60) as manager:
                began = time.perf_counter()
                manager.start({"mcpServers": servers})
                returns.append(time.perf_counter() - began)
                search, slowest = ToolSearch(registry), 0.0
                while any(s.state == "connecting" for s in manager.status()):
                    probe = time.perf_counter()
                    registry.names()
                    search.search("add integers")
                    slowest = max(slowest, time.perf_counter() - probe)
                    time.sleep(0.005)
                ready.append(time.perf_counter() - began)
                worst.append(slowest)
        rows.append(
            f"| {label} | {statistics.median(returns) * 1000:.2f} ms "
            f"| {max(worst) * 1000:.1f} ms | {statistics.median(ready):.2f} s |"
        )
    return [
        f"start() with servers configured (median of {RUNS}; worst probe over all runs)",
        "",
        "| servers | start() returns | worst registry op while starting | all connected |",
        "|---|---|---|---|",
        *rows,
    ]


def reference_entries(folder: Path) -> dict[str, dict[str, Any]]:
    """Entries for the reference servers that are installed."""
    (folder / "files").mkdir()
    subprocess.run(["git", "init", "-q", str(folder / "repo")], check=True)
    wanted = {
        "everything": ("mcp-server-everything", []),
        "filesystem": ("mcp-server-filesystem", [str(folder / "files")]),
        "memory": ("mcp-server-memory", []),
        "time": ("mcp-server-time", []),
        "git": ("mcp-server-git", ["--repository", str(folder / "repo")]),
    }
    entries = {}
    for name, (executable, args) in wanted.items():
        found = find_reference(executable)
        if found:
            entries[name] = {"command": found, "args": args}
    entries.get("memory", {})["env"] = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
    return entries


def connect_table() -> list[str]:
    """Connect up to 10 servers at once; report each one's tools and latency."""
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        entries = reference_entries(Path(tmp))
        web = stack.enter_context(http_server("basic.py"))
        paged = stack.enter_context(http_server("paged.py"))
        fixtures = {
            "basic-stdio": fixture("basic.py"),
            "basic-http": {"url": web.url},
            "paged-http": {"url": paged.url},
            "dynamic-stdio": fixture("dynamic.py"),
            "paged-stdio": fixture("paged.py"),
        }
        entries.update(list(fixtures.items())[: 10 - len(entries)])
        registry = ToolRegistry()
        with McpManager(registry, connect_timeout=120) as manager:
            began = time.perf_counter()
            manager.start({"mcpServers": entries})
            manager.wait_ready(180)
            wall = time.perf_counter() - began
            statuses = manager.status()
    rows = [
        f"| {s.name} | {s.transport} | {s.protocol_version or '-'} | {s.tool_count} "
        f"| {s.connect_seconds:.2f} s |"
        if s.connect_seconds is not None
        else f"| {s.name} | {s.transport} | - | 0 | {s.state}: {s.last_error} |"
        for s in statuses
    ]
    return [
        f"{len(statuses)} servers connected at once: {sum(s.tool_count for s in statuses)} tools, "
        f"all ready after {wall:.2f} s",
        "",
        "| server | transport | protocol | tools | connect latency |",
        "|---|---|---|---|---|",
        *rows,
    ]


DEATH_RUNS = 3
"""Runs of each row of :func:`death_table` (a row without the probe takes a minute a run)."""

WATCHED = 60.0
"""Seconds a killed server is watched at most."""


def _seconds(value: float) -> str:
    """A time in the table: ``5.01 s``, or ``not within 60 s``."""
    return f"not within {WATCHED:g} s" if value >= WATCHED else f"{value:.2f} s"


def death_table() -> list[str]:
    """Kill an HTTP server: seconds until the manager notices (its tools leave the registry),
    with the liveness probe (every 5 s, the default) and without it (the 30 s re-listing)."""
    rows = []
    for transport in ("http", "sse"):
        for label, probe in (
            ("probe every 5 s", 5.0),
            ("no probe (re-listing every 30 s)", 3600.0),
        ):
            noticed = []
            for _ in range(DEATH_RUNS):
                registry = ToolRegistry()
                with (
                    McpManager(registry, probe_interval=probe) as manager,
                    http_server("basic.py", transport=transport) as web,
                ):
                    manager.add("web", {"type": transport, "url": web.url})
                    manager.wait_ready(60)
                    web.process.kill()
                    killed = time.perf_counter()
                    while "mcp__web__echo" in registry and time.perf_counter() - killed < WATCHED:
                        time.sleep(0.01)
                    noticed.append(time.perf_counter() - killed)
            rows.append(
                f"| {transport} | {label} | {_seconds(statistics.median(noticed))} "
                f"| {_seconds(max(noticed))} |"
            )
    return [
        f"An HTTP server killed: time until its tools leave the registry ({DEATH_RUNS} runs)",
        "",
        "| transport | liveness | median | worst |",
        "|---|---|---|---|",
        *rows,
    ]


if __name__ == "__main__":
    print("\n".join(startup_table()))
    print()
    print("\n".join(connect_table()))
    print()
    print("\n".join(death_table()))
