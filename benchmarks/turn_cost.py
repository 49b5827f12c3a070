"""Per-turn client CPU over a long conversation and over a large catalogue.

A turn is one ``Agent.run``: the user's prompt, one tool call, the model's answer (two model
requests). The scripted model (FakeAnthropicServer) runs in a child process, so that only
the agent's own work counts: client CPU is ``time.process_time`` of this process (every
thread) around the run, with a :class:`~nbagent.store.recorder.Recorder` saving the
conversation at the events a notebook saves it at.

The conversation's file is synced to disk (:mod:`nbagent.store.durable`) once at the end of
each timed turn, inside it: each turn counts one ``fsync`` of its own writes, whatever its
length. Left to the timer that syncs a file a second after a write (``--timer-syncs``), the
syncs of every case's file fall into whichever turn runs when it fires, and a turn counts
as many as it lasts seconds: mostly the long-history ones, which last seconds while the
scripted model (another process) parses their bodies. (With a real model every turn lasts
seconds, and takes one sync per request at any history length.)

Each case starts from a synthesized valid history (``Agent.restore``) of N turns, takes one
untimed turn (it writes the restored history to the conversation's file), then the timed
ones; the cases take their turns in rotation, so that load on the machine falls on all of
them alike. Cases: histories of 100, 500, 1,000 and 2,000 turns with 500 deferred tools,
and 1,000 and 10,000 deferred tools at a history of 100 turns. Ratios are of medians, to the
first case of the same kind. The objects made while setting the cases up are frozen out of
the garbage collector's sight (``gc.freeze``) before the timed turns.

Run: ``python benchmarks/turn_cost.py [--quick] [--timer-syncs] [--profile CASE]``
(``--profile 2000`` or ``--profile 10000t`` prints a cProfile of that case's timed turns).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import multiprocessing
import pstats
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import markdown_table, run_line  # noqa: E402

from nbagent.catalogue.delta import render_announcement  # noqa: E402
from nbagent.catalogue.registry import ToolRegistry  # noqa: E402
from nbagent.core.events import (  # noqa: E402
    Event,
    RunFinished,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
)
from nbagent.core.tool import Tool, tool  # noqa: E402
from nbagent.loop.agent import Agent  # noqa: E402
from nbagent.loop.state import AgentState  # noqa: E402
from nbagent.store import durable  # noqa: E402
from nbagent.store.durable import sync_now  # noqa: E402
from nbagent.store.recorder import Recorder  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402

RECORDED_AT = (TurnStarted, ToolCallStarted, ToolCallFinished, RunFinished)
"""The events at which the ``%%agent`` magic saves the conversation."""

FILLER = " ".join(f"word{i}" for i in range(30))
"""About 60 tokens of prompt or answer text."""

WINDOW = 100_000_000
"""The fake server's context window: no history here reaches it."""


@tool(read_only=True)
def note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted: {text}"


def deferred_tools(count: int) -> list[Tool]:
    """``count`` MCP-like tools, 100 to a server, each with a short description and schema."""
    return [
        Tool(
            name=f"mcp__s{i // 100}__tool_{i}",
            description=f"Tool {i} of server s{i // 100}: looks up records by key and returns "
            "them as JSON, with the fields asked for.",
            input_schema={
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "The record's key."},
                    "fields": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["key"],
            },
            is_mcp=True,
            server=f"s{i // 100}",
        )
        for i in range(count)
    ]


def history(turns: int, names: list[str]) -> list[dict[str, Any]]:
    """A valid history of ``turns`` turns like the ones timed, announcing ``names`` first."""
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        prompt: list[dict[str, Any]] = [{"type": "text", "text": f"Step {i}: {FILLER}"}]
        if i == 0:
            prompt.append({"type": "text", "text": render_announcement(sorted(names))})
        call = {"type": "tool_use", "id": f"toolu_h{i:06d}", "name": "note", "input": {"text": "x"}}
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": "noted: x"}
        messages += [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [{"type": "text", "text": "Noting."}, call]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": [{"type": "text", "text": f"Noted. {FILLER}"}]},
        ]
    return messages


def serve(connection: Any, replies: int) -> None:
    """The child process: serve the scripted model until the parent says stop."""
    script = [Reply.tool_use("note", {"text": "step"}), Reply.text(f"Noted. {FILLER}")]
    with FakeAnthropicServer(script * replies, context_window=WINDOW) as api:
        connection.send(api.url)
        connection.recv()
        connection.send(api.errors)


@dataclass
class Case:
    """One agent, its history length and catalogue size, and its timed turns."""

    label: str
    kind: str
    turns: int
    tools: int
    agent: Agent
    recorder: Recorder
    own_syncs: bool = True
    seconds: list[float] = field(default_factory=list)

    def turn(self, profile: cProfile.Profile | None = None) -> float:
        """Run one turn; return its client CPU seconds."""

        def on_event(event: Event) -> None:
            if isinstance(event, RECORDED_AT):
                self.recorder.record(self.agent)

        if profile is not None:
            profile.enable()
        start = time.process_time()
        self.agent.run(f"Note the next step. {FILLER}", on_event=on_event)
        self.recorder.record(self.agent)
        if self.own_syncs:
            sync_now()  # this turn's writes synced in this turn, not in the next case's
        elapsed = time.process_time() - start
        if profile is not None:
            profile.disable()
        return elapsed


def make_case(label: str, kind: str, turns: int, tools: int, url: str, root: Path) -> Case:
    """An agent restored to a history of ``turns`` turns with ``tools`` deferred tools."""
    import anthropic

    deferred = deferred_tools(tools)
    client = anthropic.Anthropic(
        base_url=url,
        api_key="test-key",
        max_retries=0,
        timeout=120.0,
        http_client=anthropic.DefaultHttpxClient(trust_env=False, verify=False),
    )
    agent = Agent(registry=ToolRegistry([note, *deferred]), client=client, compaction="off")
    agent.restore(AgentState(messages=tuple(history(turns, [t.name for t in deferred]))))
    recorder = Recorder(lambda: f"turn_cost_{label}.ipynb", root=root)
    return Case(label, kind, turns, tools, agent, recorder)


def main() -> None:
    """Run the cases side by side; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 timed turns a case, not 7")
    parser.add_argument("--profile", help="profile the timed turns of a case (e.g. 2000)")
    parser.add_argument(
        "--timer-syncs",
        action="store_true",
        help="leave the file syncs to their one-second timer, in whichever turn runs then",
    )
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    plan = [
        ("100", "history", 100, 500),
        ("500", "history", 500, 500),
        ("1000", "history", 1000, 500),
        ("2000", "history", 2000, 500),
        ("1000t", "catalogue", 100, 1000),
        ("10000t", "catalogue", 100, 10000),
    ]
    context = multiprocessing.get_context("fork")  # before any thread of this process starts
    ours, theirs = context.Pipe()
    child = context.Process(target=serve, args=(theirs, len(plan) * (rounds + 1)), daemon=True)
    child.start()
    url = ours.recv()
    profile = cProfile.Profile(time.process_time) if args.profile else None
    with tempfile.TemporaryDirectory() as folder:
        cases = [make_case(*spec, url=url, root=Path(folder)) for spec in plan]
        for case in cases:
            case.own_syncs = not args.timer_syncs
        if not args.timer_syncs:
            durable.DELAY = 24 * 3600.0  # the timer never fires: each turn syncs its own
        for case in cases:
            case.turn()  # untimed: writes the restored history to its file
        # The six restored histories and catalogues were made at once: out of the collector's
        # sight, so that a full collection of them does not fall on whichever turn comes next.
        gc.collect()
        gc.freeze()
        for _ in range(rounds):
            for case in cases:
                chosen = profile if case.label == args.profile else None
                case.seconds.append(case.turn(chosen))
    ours.send("stop")
    errors = ours.recv()
    child.join(timeout=10)
    if errors:
        raise SystemExit(f"The scripted model reported errors: {errors}")
    rows = []
    base: dict[str, float] = {}
    for case in cases:
        median = statistics.median(case.seconds)
        base.setdefault(case.kind, median)
        rows.append(
            [
                f"{case.turns:,}",
                f"{case.tools:,}",
                f"{len(case.agent.messages):,}",
                f"{median * 1000:.1f}",
                f"{median / base[case.kind]:.2f}×",
            ]
        )
    print(run_line(sys.argv))
    print()
    print(
        markdown_table(
            [
                "history (turns)",
                "deferred tools",
                "messages",
                "client CPU per turn (ms, median)",
                "× the first of its kind",
            ],
            rows,
            align="rrrrr",
        )
    )
    if profile is not None:
        print()
        pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
