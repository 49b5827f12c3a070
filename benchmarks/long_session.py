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

Then an outputs-heavy session (``--output-turns``, 40 by default): each turn the model runs a
cell whose output is a 400-row DataFrame printed whole (some 6,000 tokens) and, every third
turn, a long training log; compaction off, so that only these differ:

- *neither*: the outputs whole, nothing cleared;
- *clearing*: the API's context editing (``clear_tool_uses_20250919``, trigger 20,000 input
  tokens, the last 3 tool results kept, at least 5,000 tokens cleared at a time);
- *digests*: each output as nbagent's digest (the DataFrame's shape, dtypes, first and last
  rows; the log's head and tail, :mod:`nbagent.tools.digest`);
- *both*.

For each: input tokens per turn (mean, and the last turn's), input tokens sent in all, and
the share read from the prompt cache (clearing changes the prompt's middle, which costs cache
writes when it happens).

Run: ``python benchmarks/long_session.py [--turns N] [--threshold T] [--output-turns M]
[--quick]``.
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
from nbagent.loop.context_editing import ContextEditing  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402
from nbagent.tools.digest import frame_digest, text_digest  # noqa: E402

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


CLEARING = ContextEditing(trigger=20_000, keep=3, clear_at_least=5_000)
"""The clearing of the outputs-heavy session (a small trigger, as the threshold above)."""

LOG_CHARS = 2_000
"""Characters of a long output a digest keeps (NotebookRun keeps 15,000; smaller here so that
the 40-turn session shows the effect)."""


def frame(turn: int) -> Any:
    """The DataFrame a cell shows at a turn."""
    import pandas as pd

    rows = range(400)
    return pd.DataFrame(
        {
            "id": [f"row{turn}-{k}" for k in rows],
            "city": [f"city{k % 37}" for k in rows],
            "temp": [round(10 + (k * 7 % 23) / 3, 2) for k in rows],
            "rain": [k % 5 == 0 for k in rows],
        }
    )


def training_log(turn: int) -> str:
    """A long text output: a training log."""
    return "\n".join(f"epoch {turn}.{k}: loss {1 / (k + 1):.5f}" for k in range(400))


def outputs_tool(digests: bool) -> Tool:
    """A cell runner whose outputs are big: whole, or as digests."""

    def run_cell(turn: int, kind: str = "frame") -> str:
        if kind == "log":
            log = training_log(turn)
            return (
                text_digest(log, LOG_CHARS, "the whole log is the cell's output")
                if digests
                else log
            )
        table = frame(turn)
        return frame_digest(table) if digests else table.to_string()

    return Tool(
        name="run_cell",
        description="Run a cell and show its output.",
        input_schema={
            "type": "object",
            "properties": {"turn": {"type": "integer"}, "kind": {"type": "string"}},
        },
        handler=run_cell,
    )


def outputs_session(clearing: bool, digests: bool, turns: int) -> dict[str, Any]:
    """Run the outputs-heavy session; return its figures."""
    turn_inputs: list[int] = []
    usages: list[Usage] = []

    def observe(event: Event) -> None:
        if isinstance(event, UsageReported):
            usages.append(event.usage)

    with FakeAnthropicServer(context_window=WINDOW) as api:
        agent = Agent(
            registry=ToolRegistry([outputs_tool(digests)]),
            client=api.client(),
            compaction="off",
            context_editing=CLEARING if clearing else None,
        )
        for turn in range(1, turns + 1):
            kind = "log" if turn % 3 == 0 else "frame"
            api.enqueue(
                Reply.tool_use("run_cell", {"turn": turn, "kind": kind}),
                Reply.text(f"Turn {turn}: the output looks right. {FILLER}"),
            )
            before = len(usages)
            agent.run(f"Run step {turn} and check it.", on_event=observe)
            turn_inputs.append(max(u.total_input_tokens for u in usages[before:]))
        api.assert_no_errors()
    sent = sum(u.total_input_tokens for u in usages)
    return {
        "mean": sum(turn_inputs) / len(turn_inputs),
        "last": turn_inputs[-1],
        "sent": sent,
        "read share": sum(u.cache_read_input_tokens for u in usages) / sent,
    }


def outputs_table(turns: int) -> str:
    """The outputs-heavy session's table."""
    cases = {
        "neither": (False, False),
        "clearing": (True, False),
        "digests": (False, True),
        "both": (True, True),
    }
    results = {name: outputs_session(*flags, turns) for name, flags in cases.items()}
    base = results["neither"]["sent"]
    rows = [
        [
            name,
            f"{figures['mean']:,.0f}",
            f"{figures['last']:,}",
            f"{figures['sent']:,}",
            f"{figures['sent'] / base:.2f}",
            f"{figures['read share']:.1%}",
        ]
        for name, figures in results.items()
    ]
    headers = [
        "outputs",
        "input tokens per turn (mean)",
        "last turn",
        "input tokens sent",
        "vs neither",
        "read from cache",
    ]
    return markdown_table(headers, rows, "lrrrrr")


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="User turns (default 200).")
    parser.add_argument("--threshold", type=int, default=10_000, help="Compaction threshold.")
    parser.add_argument(
        "--output-turns", type=int, default=40, help="Turns of the outputs-heavy session."
    )
    parser.add_argument("--quick", action="store_true", help="10 and 8 turns (a smoke test).")
    args = parser.parse_args()
    if args.quick:
        args.turns, args.output_turns = 10, 8
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
    print(f"\n## An outputs-heavy session of {args.output_turns} turns\n")
    print(outputs_table(args.output_turns))


if __name__ == "__main__":
    main()
