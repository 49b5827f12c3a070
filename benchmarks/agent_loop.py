"""The agent loop against FakeAnthropicServer: prompt-cache reuse and the loop's own overhead.

Table 1: a 10-request scripted conversation (the model calls a tool nine times, then
answers) during which two MCP servers connect (after requests 3 and 7). For delta
announcements and for the legacy list at the head of the conversation, under both cache
models of the fake server (deferred definitions inside or outside the cached prefix):

- *cache-read share*: cache-read input tokens over all input tokens, whole conversation;
- *kept at a change*: at the requests right after a server connects, the share of the
  previous request's input that was read from the cache (the target: at least 95%).

Table 2: the loop's overhead per turn, excluding the model: wall time of a run minus the
time spent inside the streaming call, per request, with 500 deferred tools registered.

Run: ``python benchmarks/agent_loop.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import (  # noqa: E402
    build_catalogue,
    github_definitions,
    livemcpbench_definitions,
    markdown_table,
    run_line,
)

import nbagent.loop.agent  # noqa: E402
from nbagent.catalogue.registry import ToolRegistry  # noqa: E402
from nbagent.core.events import Event, ToolCallFinished, Usage, UsageReported  # noqa: E402
from nbagent.core.tool import Tool, tool  # noqa: E402
from nbagent.loop.agent import Agent  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402

REQUESTS = 10
"""Model requests in the scripted conversation."""
CONNECT_AFTER = {3: 0, 7: 1}
"""After which request each of the two servers connects."""


@tool(read_only=True)
def note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted: {text}"


def servers() -> tuple[list[Tool], list[list[Tool]]]:
    """The tools present from the start (github) and the two servers that connect later."""
    github = build_catalogue(github_definitions()).tools
    live = build_catalogue(livemcpbench_definitions()).tools
    by_server: dict[str, list[Tool]] = {}
    for t in live:
        by_server.setdefault(t.server or "", []).append(t)
    largest = sorted(by_server.values(), key=len, reverse=True)[:2]
    return github, largest


def conversation(announce: str, deferred_in_prefix: bool) -> list[Usage]:
    """Run the scripted conversation and return each request's usage."""
    github, later = servers()
    registry = ToolRegistry([note, *github])
    script = [Reply.tool_use("note", {"text": f"step {i}"}) for i in range(REQUESTS - 1)]
    script.append(Reply.text("All steps noted."))
    with FakeAnthropicServer(script, deferred_in_prefix=deferred_in_prefix) as api:
        agent = Agent(
            registry=registry, client=api.client(), legacy_announcements=announce == "legacy"
        )
        usages: list[Usage] = []

        def observe(event: Event) -> None:
            if isinstance(event, UsageReported):
                usages.append(event.usage)
            if isinstance(event, ToolCallFinished) and len(usages) in CONNECT_AFTER:
                registry.register_many(later[CONNECT_AFTER[len(usages)]])

        agent.run("Note ten steps.", on_event=observe)
        api.assert_no_errors()
        return usages


def cache_table() -> str:
    """Table 1."""
    rows = []
    for deferred_in_prefix in (False, True):
        for announce in ("delta", "legacy"):
            usages = conversation(announce, deferred_in_prefix)
            total = sum(usages, Usage())
            kept = [
                usages[i].cache_read_input_tokens / usages[i - 1].total_input_tokens
                for i in CONNECT_AFTER
            ]  # request i+1 (0-based i) follows the connect
            rows.append(
                [
                    "outside" if not deferred_in_prefix else "inside",
                    announce,
                    f"{total.total_input_tokens:,}",
                    f"{total.cache_read_share:.1%}",
                    " / ".join(f"{k:.1%}" for k in kept),
                    "yes"
                    if announce == "delta" and min(kept) >= 0.95
                    else ("no" if announce == "delta" else "—"),
                ]
            )
    return markdown_table(
        [
            "deferred definitions in the cached prefix",
            "announcements",
            "input tokens",
            "cache-read share",
            "kept at the 2 changes",
            "≥ 95% kept",
        ],
        rows,
    )


def overhead_table(runs: int) -> str:
    """Table 2."""
    github, later = servers()
    deferred = (github + later[0] + later[1]) * 5
    tools = [
        Tool(
            name=f"mcp__s{i // 100}__t{i}",
            description=t.description,
            input_schema=t.input_schema,
            is_mcp=True,
        )
        for i, t in enumerate(deferred[:500])
    ]
    per_turn: list[float] = []
    inside = 0.0
    original = nbagent.loop.agent.stream_response

    def timed(
        client: Any, request: dict[str, Any], betas: Sequence[str] = (), cancel: Any = None
    ) -> Iterator[Any]:
        """Time each step of the streaming call (the model's share of the run)."""
        nonlocal inside
        steps = original(client, request, betas, cancel)
        while True:
            started = time.perf_counter()
            try:
                item = next(steps)
            except StopIteration:
                return
            finally:
                inside += time.perf_counter() - started
            yield item

    nbagent.loop.agent.stream_response = timed  # type: ignore[assignment]
    try:
        for _ in range(runs):
            script = [Reply.tool_use("note", {"text": str(i)}) for i in range(REQUESTS - 1)]
            with FakeAnthropicServer([*script, Reply.text("done")]) as api:
                agent = Agent(registry=ToolRegistry([note, *tools]), client=api.client())
                inside = 0.0
                started = time.perf_counter()
                agent.run("go")
                per_turn.append((time.perf_counter() - started - inside) / REQUESTS)
    finally:
        nbagent.loop.agent.stream_response = original  # type: ignore[assignment]
    median = statistics.median(per_turn) * 1e3
    return markdown_table(
        [
            "deferred tools",
            "requests per run",
            "runs",
            "overhead per turn, median (ms)",
            "target",
            "met",
        ],
        [[500, REQUESTS, runs, f"{median:.2f}", "< 5 ms", "yes" if median < 5 else "NO"]],
    )


def main() -> None:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one overhead run")
    args = parser.parse_args()
    print("## The agent loop against FakeAnthropicServer\n")
    print(run_line(sys.argv) + "\n")
    print("### Prompt-cache reuse while two MCP servers connect\n")
    print(cache_table() + "\n")
    print("### Loop overhead per turn, excluding the model\n")
    print(overhead_table(1 if args.quick else 15))


if __name__ == "__main__":
    main()
