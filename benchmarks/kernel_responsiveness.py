"""Does a kernel stay responsive while MCP servers start? A trivial cell's round trip.

Each round starts two fresh IPython kernels (jupyter_client) in a folder whose ``.mcp.json``
names the servers: the fixture servers ``basic`` (8 tools) and ``paged`` (250 tools, listed
100 to a page), and the reference servers (npm: everything, filesystem, memory; PyPI: time,
git) found in ``$NBAGENT_MCP_SERVERS`` (default ``~/.cache/nbagent/mcp-servers``) or on
``PATH``, topped up with fixture servers to five when some are missing. One kernel runs
``%load_ext nbagent``, which starts every server in the background; the other (the peer)
never loads nbagent. Right after the load, the same trivial cell (``1 + 1``) runs in both,
alternating which goes first, one pair every ``--interval`` seconds: the time from sending
the execute_request to receiving its execute_reply, through jupyter_client. Then, once every
server has connected, as many pairs again.

Both kernels share the machine, so the server processes' CPU load reaches both; the ratio
to the peer is what loading nbagent costs inside the kernel (its threads, the GIL). A cell
counts as "while the servers start" when it was sent before the last server's tools reached
the registry. Target (issue 33): while the servers start, the median and the p90 at most 1.5
times the peer's.

``--baseline DIR`` compares with another checkout of nbagent (a git worktree of an older
commit): rounds alternate between this checkout and that one (put first on the kernel's
``PYTHONPATH``), each with its own peer, and a table is printed for each.

Run: ``python benchmarks/kernel_responsiveness.py [--quick] [--rounds N] [--cells N]
[--interval S] [--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402
from jupyter_client.blocking.client import BlockingKernelClient  # noqa: E402

from tests.kernels import execute, kernel  # noqa: E402
from tests.mcp.servers import (  # noqa: E402
    FIXTURES,
    REFERENCE_DIR,
    find_reference,
    git_repository,
)

TRIVIAL = "1 + 1"
"""The cell timed."""

TARGET_RATIO = 1.5
"""While the servers start, nbagent's median and p90 over the peer's, at most."""

WARM_UP = 5
"""Trivial cells run in each fresh kernel before anything is timed."""

LOAD = """\
import time as _time
import nbagent as _nbagent

_arrived = {}


def _note(change):
    for name in change.added:
        if name.startswith("mcp__"):
            _arrived.setdefault(name.split("__")[1], _time.time())


_nbagent.registry.subscribe(_note)
get_ipython().config.NbAgent.mcp_config = ".mcp.json"
%load_ext nbagent
"""
"""The load cell: ``%load_ext nbagent``, after a registry subscriber that notes when each
server's first tools arrive (the kernel's wall clock, which is this machine's). The
``.mcp.json`` is named in ``c.NbAgent.mcp_config``, as the user's own: found by itself, a
project's file would wait for approval and start nothing."""

REPORT = """\
import json as _json
from nbagent.jupyter.session import Session

_manager = Session.of(get_ipython()).mcp_manager
_ready = _manager.wait_ready({timeout})
print("REPORT" + _json.dumps({{
    "ready": _ready,
    "arrived": _arrived,
    "servers": [
        {{"name": s.name, "state": s.state, "tools": s.tool_count, "error": s.last_error}}
        for s in _manager.status()
    ],
}}))
"""
"""Waits until no server is connecting, then reports each one's state and tool count."""


@dataclass
class Round:
    """What one round measured."""

    nbagent: list[tuple[float, float]] = field(default_factory=list)
    """(sent at, wall clock; round trip, s) of each trivial cell in the nbagent kernel."""
    peer: list[tuple[float, float]] = field(default_factory=list)
    """The same for the peer kernel, sent in the same slots."""
    load_seconds: float = 0.0
    """The round trip of the load cell."""
    loaded_at: float = 0.0
    """When the load cell's reply arrived (wall clock)."""
    report: dict[str, Any] = field(default_factory=dict)
    """The kernel's REPORT: servers' states and tool counts, when each one's tools arrived."""

    @property
    def all_up(self) -> float:
        """When the last server's tools arrived (the load's end when none did)."""
        return max(self.report.get("arrived", {}).values(), default=self.loaded_at)


def round_trip(client: BlockingKernelClient, code: str = TRIVIAL) -> tuple[float, float]:
    """Send a cell, wait for its execute_reply, then drain its outputs (not timed).

    Returns:
        When it was sent (wall clock) and the seconds from the request to the reply.
    """
    sent = time.time()
    started = time.perf_counter()
    msg_id = client.execute(code)
    while True:
        reply = client.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    elapsed = time.perf_counter() - started
    if reply["content"]["status"] != "ok":
        raise SystemExit(f"the cell {code!r} failed: {reply['content']}")
    while True:
        message = client.get_iopub_msg(timeout=120)
        if (
            message["parent_header"].get("msg_id") == msg_id
            and message["msg_type"] == "status"
            and message["content"]["execution_state"] == "idle"
        ):
            return sent, elapsed


def paced_pairs(
    ours: BlockingKernelClient,
    peer: BlockingKernelClient,
    cells: int,
    interval: float,
    into: Round,
) -> None:
    """Run the trivial cell in both kernels, one pair per slot, alternating the order."""
    for index in range(cells):
        slot = time.perf_counter()
        order = [(ours, into.nbagent), (peer, into.peer)]
        for client, samples in order if index % 2 == 0 else order[::-1]:
            samples.append(round_trip(client))
        time.sleep(max(0.0, interval - (time.perf_counter() - slot)))


def one_round(
    folder: Path, cells: int, interval: float, ready_timeout: float, checkout: Path | None = None
) -> Round:
    """Two fresh kernels: load nbagent in one, time the trivial cell in both.

    Args:
        folder: The workspace (:func:`workspace`).
        cells: Trivial cells per phase.
        interval: Seconds between pairs.
        ready_timeout: Seconds the servers may take.
        checkout: Another checkout of nbagent, put first on both kernels' ``PYTHONPATH``.

    Returns:
        What the round measured.
    """
    env = {"IPYTHONDIR": str(folder / "ipython")}  # no profile of this machine autoloads nbagent
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    measured = Round()
    with ExitStack() as stack:
        _, ours = stack.enter_context(kernel(env, cwd=str(folder / "notebook")))
        _, peer = stack.enter_context(kernel(env, cwd=str(folder / "notebook")))
        check = "print('agent' in get_ipython().magics_manager.magics['cell'])"
        for client in (ours, peer):
            if execute(client, check).text.strip() != "False":
                raise SystemExit("nbagent is loaded in a fresh kernel: the peer would not be one")
            for _ in range(WARM_UP):
                round_trip(client)
        _, measured.load_seconds = round_trip(ours, LOAD)
        measured.loaded_at = time.time()
        paced_pairs(ours, peer, cells, interval, measured)
        report = execute(ours, REPORT.format(timeout=ready_timeout), timeout=ready_timeout + 60)
        line = next((x for x in report.text.splitlines() if x.startswith("REPORT")), None)
        if line is None:
            raise SystemExit(f"the kernel did not report: {report.text} {report.error}")
        measured.report = json.loads(line.removeprefix("REPORT"))
        paced_pairs(ours, peer, cells, interval, measured)
    return measured


def servers(folder: Path) -> tuple[dict[str, Any], list[str]]:
    """The ``mcpServers`` to start, and the reference servers that are missing."""

    def script(name: str, *args: str) -> dict[str, Any]:
        return {"command": sys.executable, "args": [str(FIXTURES / name), *args]}

    entries: dict[str, Any] = {"basic": script("basic.py"), "paged": script("paged.py")}
    missing = []
    references = {
        "everything": ("mcp-server-everything", {}),
        "filesystem": ("mcp-server-filesystem", {"args": [str(folder / "files")]}),
        "memory": ("mcp-server-memory", {"env": {"MEMORY_FILE_PATH": str(folder / "mem.jsonl")}}),
        "time": ("mcp-server-time", {}),
        "git": ("mcp-server-git", {"args": ["--repository", str(folder / "repo")]}),
    }
    for name, (executable, extra) in references.items():
        found = find_reference(executable)
        if found is None:
            missing.append(executable)
        else:
            entries[name] = {"command": found, **extra}
    for name, entry in (
        ("dynamic", script("dynamic.py")),
        ("legacy", script("basic.py", "--legacy")),
        ("flood", script("flood.py")),
    ):
        if len(entries) < 5:
            entries[name] = entry
    return entries, missing


@contextmanager
def workspace() -> Iterator[tuple[Path, dict[str, Any], list[str]]]:
    """A folder with the notebook's ``.mcp.json``, files for filesystem, a repository for git."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "notebook").mkdir()
        (folder / "files").mkdir()
        (folder / "files" / "hello.txt").write_text("Hello.\n")
        git_repository(folder / "repo")
        entries, missing = servers(folder)
        config = json.dumps({"mcpServers": entries}, indent=2)
        (folder / "notebook" / ".mcp.json").write_text(config)
        yield folder, entries, missing


def p90(samples: list[float]) -> float:
    """The 90th percentile (inclusive method; a single sample is its own)."""
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=10, method="inclusive")[8]


def row(phase: str, ours: list[float], peer: list[float], target: bool) -> list[str]:
    """One table row: counts, medians and p90s in ms, the ratios, the target."""
    if not ours:
        return [phase, "0", *["–"] * 8]
    ours_ms, peer_ms = [x * 1000 for x in ours], [x * 1000 for x in peer]
    median, tail = statistics.median(ours_ms), p90(ours_ms)
    peer_median, peer_tail = statistics.median(peer_ms), p90(peer_ms)
    ratios = (median / peer_median, tail / peer_tail)
    met = ("yes" if max(ratios) <= TARGET_RATIO else "NO") if target else "—"
    return [
        phase,
        str(len(ours)),
        f"{peer_median:.1f}",
        f"{peer_tail:.1f}",
        f"{median:.1f}",
        f"{tail:.1f}",
        f"{ratios[0]:.2f}",
        f"{ratios[1]:.2f}",
        f"≤ {TARGET_RATIO}× (both)" if target else "—",
        met,
    ]


def main() -> None:
    """Run the rounds and print the table (one per checkout with ``--baseline``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 5 cells (smoke test)")
    parser.add_argument("--rounds", type=int, default=5, help="pairs of fresh kernels (5)")
    parser.add_argument("--cells", type=int, default=30, help="trivial cells per phase (30)")
    parser.add_argument(
        "--interval", type=float, default=0.1, help="seconds between pairs of cells (0.1)"
    )
    parser.add_argument(
        "--ready-timeout", type=float, default=120.0, help="seconds the servers may take (120)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of nbagent to alternate with (e.g. a git worktree)",
    )
    args = parser.parse_args()
    rounds, cells = (1, 5) if args.quick else (args.rounds, args.cells)
    checkouts: list[Path | None] = [None] if args.baseline is None else [None, args.baseline]
    results: dict[Path | None, list[Round]] = {checkout: [] for checkout in checkouts}
    with workspace() as (folder, entries, missing):
        for index in range(rounds * len(checkouts)):
            checkout = checkouts[index % len(checkouts)]
            results[checkout].append(
                one_round(folder, cells, args.interval, args.ready_timeout, checkout)
            )
    print("## A trivial cell while MCP servers start\n")
    print(run_line(sys.argv) + "\n")
    for checkout, measured in results.items():
        if args.baseline is not None:
            print(f"### {'this checkout' if checkout is None else checkout}\n")
        print_table(measured, cells, args.interval, entries)
    if missing:
        print(f"\nNot installed in {REFERENCE_DIR} or on PATH: {', '.join(missing)}.")


def print_table(results: list[Round], cells: int, interval: float, entries: dict[str, Any]) -> None:
    """Print the table of some rounds, and what the servers did.

    Args:
        results: The rounds.
        cells: Trivial cells per phase.
        interval: Seconds between pairs.
        entries: The servers started.
    """
    starting: tuple[list[float], list[float]] = ([], [])
    connected: tuple[list[float], list[float]] = ([], [])
    for result in results:
        for (sent, ours), (_, peer) in zip(result.nbagent, result.peer, strict=True):
            phase = starting if sent < result.all_up else connected
            phase[0].append(ours)
            phase[1].append(peer)
    headers = [
        "phase",
        "cells",
        "peer median (ms)",
        "peer p90 (ms)",
        "nbagent median (ms)",
        "nbagent p90 (ms)",
        "ratio (median)",
        "ratio (p90)",
        "target",
        "met",
    ]
    rows = [
        row("while the servers start", *starting, target=True),
        row("servers connected", *connected, target=False),
        row("all", starting[0] + connected[0], starting[1] + connected[1], target=False),
    ]
    up = [result.all_up - result.loaded_at for result in results]
    loads = [result.load_seconds for result in results]
    last = results[-1].report
    states = ", ".join(
        f"{s['name']} {s['state']} ({s['tools']} tools)" for s in last.get("servers", [])
    )
    failed = [
        f"{s['name']}: {s['error']}" for s in last.get("servers", []) if s["state"] != "connected"
    ]
    print(markdown_table(headers, rows, "lrrrrrrrll"))
    print(
        f"\n{len(results)} round(s) of two fresh kernels; `{TRIVIAL}` as execute_request → "
        f"execute_reply, one pair every {interval} s, {cells} pairs right after "
        f"`%load_ext nbagent` and {cells} once every server connected. {len(entries)} servers "
        f"in `.mcp.json`: {states}. The last server's tools arrived "
        f"{statistics.median(up):.2f} s after the load cell's reply (median; "
        f"{min(up):.2f}–{max(up):.2f}); the load cell itself took "
        f"{statistics.median(loads) * 1000:.0f} ms (median).\n"
    )
    if failed:
        print("Not connected: " + "; ".join(failed) + "\n")


if __name__ == "__main__":
    main()
