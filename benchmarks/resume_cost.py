"""What resuming a saved conversation costs, beside reading its lines as JSON.

A conversation of N records is written the way the recorder writes it (one message per
record, signed), its turns a prompt, a tool call with its input, a result of about 600
characters and an answer. Then, with ``time.perf_counter``:

- the peer: reading the file and ``json.loads`` of each line, nothing else;
- ``read_conversation``: verifying each line's MAC, reading the records, replaying them;
- ``find_conversation`` by id in a notebook folder that holds 20 other conversations of
  1,000 records each (what ``%agent resume ID`` looks through);
- ``resume``: the history repaired (from where the file's last state record says it was
  valid: the file ends with the state record a finished run leaves) and handed to an agent;
- all of it, as ``%agent resume ID`` does it (find, resume, and the recorder taking the file
  up again): what the person waits for.

Medians over the runs, the steps run in turn; ratios to the peer in the same run. Two
secrets are in the environment, as redaction reads it.

Run ``python benchmarks/resume_cost.py`` from the repo root (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402

NOTEBOOK = "/work/notes/analysis.ipynb"
OTHERS = 20
"""Other conversations of the same notebook, each of :data:`OTHER_RECORDS` records."""
OTHER_RECORDS = 1_000


def messages(count: int) -> list[dict[str, Any]]:
    """A history of ``count`` messages: turns of prompt, tool call, result and answer."""
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        ident = f"toolu_{turn:08d}"
        out += [
            {"role": "user", "content": [{"type": "text", "text": f"Look at region {turn}."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading the data."},
                    {"type": "tool_use", "id": ident, "name": "Read", "input": {"path": "a.csv"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": ident, "content": "row,total\n" * 60}
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": f"Region {turn}: 42."}]},
        ]
        turn += 1
    return out[:count]


def write(folder: Path, count: int, ident: str) -> Path:
    """Write one conversation of ``count`` records, the last of them the state record a
    finished run leaves (its history valid as the agent's last repair left it), as the
    recorder writes them (fsync skipped: set-up, not measured)."""
    from nbagent.loop.state import AgentState
    from nbagent.store.journal import ConversationLog
    from nbagent.store.recorder import state_record

    history = messages(count - 2)
    with mock.patch("os.fsync"):
        log = ConversationLog.create(folder, NOTEBOOK, "claude-test", ident=ident)
        for index, message in enumerate(history):
            log.append({"i": index, "message": message})
        log.append({"state": state_record(AgentState(valid=len(history)))})
    return log.path


def medians_ms(timed: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """The median wall time of each piece of work in milliseconds, the pieces run in turn
    (round-robin) so that each run of the peer sees the machine as the others do."""
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(runs):
        for name, work in timed.items():
            start = time.perf_counter()
            work()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 records, 2 runs")
    args = parser.parse_args()
    sizes, runs = ([1_000], 2) if args.quick else ([1_000, 10_000], args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NBAGENT_CONVERSATIONS"] = str(Path(tmp) / "conversations")
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-api03-" + "Zx9" * 30
        os.environ["DB_PASSWORD"] = "s3cr3t-pw"
        from nbagent.catalogue.registry import ToolRegistry
        from nbagent.loop.agent import Agent
        from nbagent.store.folders import notebook_folder
        from nbagent.store.recorder import Recorder
        from nbagent.store.resume import resume
        from nbagent.store.saved import find_conversation, read_conversation

        folder = notebook_folder(NOTEBOOK)
        for other in range(OTHERS):
            write(folder, OTHER_RECORDS, f"other{other:03d}")
        rows = []
        for size in sizes:
            path = write(folder, size, f"size{size:05d}")
            saved = read_conversation(path)
            assert saved is not None and saved.signed and len(saved.messages) == size - 2
            assert saved.valid == size - 2
            agent = Agent(registry=ToolRegistry())

            def resume_by_id(size: int = size, agent: Agent = agent) -> None:
                found = find_conversation(NOTEBOOK, f"size{size:05d}")
                assert found is not None
                resume(agent, found)
                Recorder(lambda: NOTEBOOK).attach(found, agent.messages)

            def peer(path: Path = path) -> None:
                for line in path.read_bytes().splitlines():
                    json.loads(line)

            timed = {
                "json.loads (peer)": peer,
                "read_conversation": lambda path=path: read_conversation(path),
                "find_conversation by id": lambda size=size: find_conversation(
                    NOTEBOOK, f"size{size:05d}"
                ),
                "resume (repair, hand over)": lambda saved=saved, agent=agent: resume(agent, saved),
                "%agent resume ID (find, resume, go on recording)": resume_by_id,
            }
            medians = medians_ms(timed, runs)
            base = medians["json.loads (peer)"]
            rows += [
                (f"{size:,}", name, f"{ms:,.1f}", f"{ms / base:.1f}×")
                for name, ms in medians.items()
            ]
    print(run_line(sys.argv))
    print()
    print(markdown_table(("records", "step", "median ms", "× peer"), rows, "rlrr"))


if __name__ == "__main__":
    main()
