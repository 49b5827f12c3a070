"""A long notebook session against FakeAnthropicServer: what compaction saves, and what it costs.

A 200-turn scripted conversation (each user prompt and each answer about 130 tokens; the
model calls a tool loaded with ToolSearch every 20 turns), run three times side by side in
one process, under a 1,000,000-token window:

- *off*: no compaction (the whole history is sent each time);
- *server*: the API's compaction (``compact_20260112``) past the threshold;
- *client*: nbagent's own summary past the threshold.

For each: requests, input tokens sent in all, the share of them read from the prompt cache,
the longest prompt, and how many compactions. The threshold is small (10,000 tokens) so that
a 200-turn session crosses it several times; the figures scale with it.

Run: ``python benchmarks/long_session.py [--turns N] [--threshold T]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import markdown_table, run_line  # noqa: E402

from nbagent.catalogue.registry import ToolRegistry  # noqa: E402
from nbagent.core.events import Event, Notice, Usage, UsageReported  # noqa: E402
from nbagent.core.tool import Tool  # noqa: E402
from nbagent.loop.agent import Agent  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402

WINDOW = 1_000_000
"""The fake server's context window (no run reaches it)."""

FILLER = " ".join(f"fact{i}" for i in range(60))
"""About 120 tokens of prompt or answer text."""

LOOKUP = "mcp__data__lookup"


def lookup_tool() -> Tool:
    """A deferred MCP-like tool the model loads once and calls now and then."""
    return Tool(
        name=LOOKUP,
        description="Look a key up in the data store.",
        input_schema={"type": "object", "properties": {"key": {"type": "string"}}},
        handler=lambda key: f"value of {key}",
        is_mcp=True,
        server="data",
    )


def session(compaction: str, turns: int, threshold: int) -> dict[str, Any]:
    """Run one scripted session; return its figures."""
    usages: list[Usage] = []
    compactions = 0

    def observe(event: Event) -> None:
        nonlocal compactions
        if isinstance(event, UsageReported):
            usages.append(event.usage)
        elif isinstance(event, Notice) and "compacted" in event.message:
            compactions += 1

    with FakeAnthropicServer(context_window=WINDOW, min_compaction_trigger=1) as api:
        agent = Agent(
            registry=ToolRegistry([lookup_tool()]),
            client=api.client(),
            compaction=compaction,  # type: ignore[arg-type]
            compact_threshold=threshold,
        )
        agent.server_min_trigger = 1
        api.enqueue(
            Reply.tool_use("ToolSearch", {"query": "select:" + LOOKUP}),
            Reply.tool_use(LOOKUP, {"key": "start"}),
            Reply.text(f"Answer 1: {FILLER}"),
        )
        agent.run(f"Question 1: {FILLER}", on_event=observe)
        for turn in range(2, turns + 1):
            if compaction == "client" and agent.last_prompt_tokens >= threshold:
                api.enqueue(Reply.text(f"Summary before turn {turn}: {FILLER}"))
            if turn % 20 == 0:
                api.enqueue(Reply.tool_use(LOOKUP, {"key": f"k{turn}"}))
            api.enqueue(Reply.text(f"Answer {turn}: {FILLER}"))
            agent.run(f"Question {turn}: {FILLER}", on_event=observe)
        api.assert_no_errors()
        requests = len(api.requests)
    sent = sum(u.total_input_tokens for u in usages)
    return {
        "requests": requests,
        "sent": sent,
        "read share": sum(u.cache_read_input_tokens for u in usages) / sent,
        "longest": max(u.total_input_tokens for u in usages),
        "compactions": compactions,
    }


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="User turns (default 200).")
    parser.add_argument("--threshold", type=int, default=10_000, help="Compaction threshold.")
    args = parser.parse_args()
    rows = []
    modes = ("off", "server", "client")
    results = {mode: session(mode, args.turns, args.threshold) for mode in modes}
    base = results["off"]["sent"]
    for mode, figures in results.items():
        rows.append(
            [
                mode,
                figures["requests"],
                figures["compactions"],
                f"{figures['sent']:,}",
                f"{figures['sent'] / base:.2f}",
                f"{figures['read share']:.1%}",
                f"{figures['longest']:,}",
            ]
        )
    print(f"## A {args.turns}-turn session, compaction threshold {args.threshold:,} tokens\n")
    print(run_line(sys.argv) + "\n")
    print(
        markdown_table(
            [
                "compaction",
                "requests",
                "compactions",
                "input tokens sent",
                "vs off",
                "read from cache",
                "longest prompt",
            ],
            rows,
            "lrrrrrr",
        )
    )


if __name__ == "__main__":
    main()
