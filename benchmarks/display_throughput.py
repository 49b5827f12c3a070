"""Rendering a long run live: 500 tool calls in a real kernel, with and without the display.

A scripted model (FakeAnthropicServer in this process) makes 50 turns of 10 tool calls each,
then answers. The same ``%%agent`` cell runs in a fresh kernel with the live widget
transcript and with ``--quiet``; the difference, divided by the number of events the run
produced, is the display's cost per event. The kernel keeps up if the cell ends and every
output arrives.

Run: ``python benchmarks/display_throughput.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402

from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402
from tests.kernels import execute, kernel  # noqa: E402

SETUP = """\
import nbagent
from nbagent import tool

@tool(read_only=True)
def echo(text: str) -> str:
    '''Say a text back.

    Args:
        text: The text.
    '''
    return text

nbagent.registry.register(echo, replace=True)
%load_ext nbagent
"""


def script(turns: int, per_turn: int) -> list[Reply]:
    """The model's replies: ``turns`` turns of ``per_turn`` calls, then an answer."""
    calls = [
        Reply.tool_uses(*[("echo", {"text": f"{t}.{i}"}) for i in range(per_turn)])
        for t in range(turns)
    ]
    return [*calls, Reply.text("All echoed.")]


def timed_run(turns: int, per_turn: int, quiet: bool) -> tuple[float, int, int]:
    """Seconds the cell took, the tool calls made and the outputs received."""
    with FakeAnthropicServer(script(turns, per_turn)) as api:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url}
        with kernel(env) as (_, client):
            execute(client, SETUP)
            flag = " --quiet" if quiet else ""
            started = time.perf_counter()
            run = execute(client, f"%%agent -o r --max-turns {turns + 1}{flag}\nEcho it all.")
            elapsed = time.perf_counter() - started
            calls = int(execute(client, "print(len(r.tool_calls))").text.strip())
            return elapsed, calls, len(run.outputs)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 turns, one run each")
    quick = parser.parse_args().quick
    turns, per_turn, runs = (5, 10, 1) if quick else (50, 10, 3)
    live = [timed_run(turns, per_turn, quiet=False) for _ in range(runs)]
    quiet = [timed_run(turns, per_turn, quiet=True) for _ in range(runs)]
    calls = live[0][1]
    events = 2 * calls + 2 * (turns + 1) + 1  # started+finished per call; turn and usage; end
    live_s = statistics.median(t for t, _, _ in live)
    quiet_s = statistics.median(t for t, _, _ in quiet)
    print("## Live display of a long run\n")
    print(run_line(sys.argv) + "\n")
    print(
        markdown_table(
            [
                "tool calls",
                "events",
                "runs",
                "live display (s)",
                "--quiet (s)",
                "display cost per event (ms)",
                "cell outputs (live)",
            ],
            [
                [
                    calls,
                    events,
                    runs,
                    f"{live_s:.2f}",
                    f"{quiet_s:.2f}",
                    f"{(live_s - quiet_s) / events * 1e3:.2f}",
                    live[0][2],
                ]
            ],
        )
    )


if __name__ == "__main__":
    main()
