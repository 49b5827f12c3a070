"""What a hostile MCP server costs a cell: the cell's time beside a good server's, the tools kept.

For each hostile shape of ``tests/mcp_servers/hostile.py`` (a raw JSON-RPC server that lists
its two good tools, then the hostile ones), and for the good tools alone, a manager connects
the server and an :class:`~nbagent.loop.agent.Agent` runs one-answer cells against
FakeAnthropicServer, which checks each request as the API does (at most 10,000 deferred
tools, ...). The cell time is the median of ``--runs`` cells; the figures of a shape and of
the good server are taken in the same way, one after the other.

Prints rows for the reliability table of docs/benchmarks/reliability.md (fault injected |
outcome | data lost | kernel deaths).

Run: ``python benchmarks/hostile_servers.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from catalogue import run_line  # noqa: E402

from nbagent.catalogue.registry import ToolRegistry  # noqa: E402
from nbagent.loop.agent import Agent  # noqa: E402
from nbagent.mcp import McpManager  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402

SERVER = ROOT / "tests" / "mcp_servers" / "hostile.py"

SHAPES = {
    "not_utf8": "one tool with bytes that are not UTF-8 in its description",
    "deep": "one tool with a schema nested 200 deep",
    "wide": "one tool with a schema of 100,000 properties",
    "long": "20 tools with a 1 MB description each",
    "many": "20,000 tools",
}
"""The hostile shapes, as the table names them."""


def measure(shape: str, runs: int) -> dict[str, Any]:
    """Connect a server listing one shape, and time ``runs`` cells beside it."""
    registry = ToolRegistry()
    with McpManager(registry, connect_timeout=120) as manager:
        manager.add("srv", {"command": sys.executable, "args": [str(SERVER), shape]})
        manager.wait_ready(180)
        [status] = manager.status()
        added = registry.get("mcp__srv__add").call({"a": 2, "b": 3}).content
        echoed = registry.get("mcp__srv__echo").call({"text": "hi"}).content
        callable_ = '"tool": "add"' in str(added) and '"tool": "echo"' in str(echoed)
        with FakeAnthropicServer() as api:
            agent = Agent(registry=registry, client=api.client())
            times = []
            for _ in range(runs):
                api.enqueue(Reply.text("Done."))
                started = time.perf_counter()
                agent.run("Say done.")
                times.append(time.perf_counter() - started)
            errors = api.take_errors()
            deferred = max(
                sum(bool(t.get("defer_loading")) for t in r.body.get("tools", []))
                for r in api.requests
            )
    return {
        "status": status,
        "cell": statistics.median(times),
        "errors": errors,
        "deferred": deferred,
        "callable": callable_,
    }


def outcome(shape: str, figures: dict[str, Any], good: dict[str, Any]) -> str:
    """Say what happened to a shape, for the table."""
    status = figures["status"]
    listed = status.tool_count + len(status.skipped) + status.past_limit
    parts = [
        f"cell {figures['cell']:.2f} s (good server's {good['cell']:.2f} s)",
        f"{status.tool_count:,} of {listed:,} tools kept"
        + (", the 2 good ones called" if figures["callable"] else ", **a good tool failed**"),
    ]
    if status.skipped:
        parts.append(f"named in `%mcp log`: {status.skipped[0].split(': ', 1)[1]}")
    if status.mended:
        parts.append(f"noted: {status.mended[-1].split(': ', 1)[1]}")
    if status.past_limit:
        parts.append(
            f"{status.past_limit:,} past the limit, with one notice; "
            f"{figures['deferred']:,} deferred tools sent"
        )
    if status.state != "connected" or figures["errors"]:
        parts.append(f"**{status.state}** {status.last_error or ''} {figures['errors']}")
    return "; ".join(parts)


def main() -> None:
    """Print the rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Cells timed per shape (default 5).")
    args = parser.parse_args()
    print(run_line(sys.argv) + "\n")
    print("| fault injected | outcome | data lost | kernel deaths |\n|---|---|---|---|")
    for shape, name in SHAPES.items():
        good = measure("good", args.runs)
        figures = measure(shape, args.runs)
        print(f"| MCP server listing {name} | {outcome(shape, figures, good)} | 0 | 0 |")


if __name__ == "__main__":
    main()
