"""What nbagent does in one ``%%agent`` cell, with 100, 1,000 and 10,000 tools registered.

Three real IPython kernels (jupyter_client), one per catalogue size, each with
``%load_ext nbagent`` and that many tools in ``nbagent.registry`` (the built-in ones, then
MCP-like deferred ones up to the size: the API takes at most 10,000 deferred tools in a
request, so the largest catalogue is 10,000 tools in all), talk to a scripted model
(FakeAnthropicServer) that runs in this process, not in theirs: it answers every request at
once with one word and no tool call. Each kernel runs a first ``%%agent`` cell (it announces
the catalogue; shown on its own), then the timed ones; the kernels take their cells in
rotation (one cell each, then the next round), so that the load on the machine falls on all
three alike.

Measured inside each kernel, by IPython's ``pre_run_cell`` and ``post_run_cell`` events:

- *kernel CPU per cell*: ``time.process_time()`` of the kernel process (every thread: the
  cell's, ipykernel's output thread, nbagent's) from the cell's start to its end. The model
  runs in another process, so neither its CPU nor the HTTP wait is in it: this is the
  figure the target applies to (nbagent's work, with the SDK's and the kernel's share of a
  request, excluding the model);
- *of which in the model call*: the part of that CPU spent inside
  ``nbagent.loop.agent.stream_response`` (encoding the body, the SDK and httpx sending it and
  parsing the stream), timed around each step of the stream;
- the same for a plain ``pass`` cell run in each kernel in the same rotation (IPython's and
  ipykernel's own floor);
- after every cell: ``threading.active_count()``, the process's native threads
  (``/proc/self/task``) and the registry's subscribers (``ToolRegistry._subscribers``):
  first, last and max.

ToolSearch uses the ``keyword`` ranker here (``--ranker`` to change it) and its index is
waited for before the first cell: the cells call no search, and an embedding ranker would
only load the machine while the index builds.

Target (issue 33): kernel CPU per cell at 10,000 tools at most 5 ms and no more than at 100
(ratio of medians about 1), no growth in threads or subscribers over 100 cells.

``--baseline DIR`` compares with another nbagent (an older commit's tree, e.g. from
``git archive``): three more kernels import nbagent from DIR (put first on their
``PYTHONPATH``) and take their cells in the same rotation.

``--parts`` adds a table of where the cell's main-thread CPU goes (``time.thread_time``
around the live view, the events shown, the saving of the conversation, the settings
applied, the front-end channel, the checkpoints and the model call), per catalogue size.

Run: ``python benchmarks/cell_cost.py [--quick] [--cells N] [--ranker R] [--profile SIZE]
[--baseline DIR] [--parts]`` (``--profile 10000`` prints a cProfile of that kernel's main
thread over its timed cells, whose figures it inflates).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402
from jupyter_client.blocking.client import BlockingKernelClient  # noqa: E402

from nbagent.mcp.approvals import APPROVALS_ENV  # noqa: E402
from nbagent.store.logfile import LOG_ENV  # noqa: E402
from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402
from tests.kernels import execute, kernel  # noqa: E402

SIZES = (100, 1_000, 10_000)
"""Tools in each kernel's registry (built-in and MCP-like deferred ones)."""

TARGET_MS = 5.0
"""Kernel CPU per ``%%agent`` cell at 10,000 tools, at most."""

PROMPT = "%%agent\nAnswer in one word: ready?"
"""The cell timed."""

PLAIN = "pass"
"""The plain cell run beside it (IPython's own floor)."""

CONVERSATIONS_ENV = "NBAGENT_CONVERSATIONS"
"""Where the kernels save their conversations (a temporary folder here)."""

SETUP = """\
import os as _os
import threading as _threading
import time as _time

import nbagent as _nbagent
import nbagent.loop.agent as _agent_module
from nbagent.core.tool import Tool as _Tool
from nbagent.jupyter.session import Session as _Session

get_ipython().config.NbAgent.ranker = {ranker!r}
get_ipython().run_line_magic("load_ext", "nbagent")
_session = _Session.of(get_ipython())
_session.ready()
_session.agent  # its session tools registered
_nbagent.registry.register_many(
    [
        _Tool(
            name=f"mcp__s{{i // 100}}__tool_{{i}}",
            description=f"Tool {{i}} of server s{{i // 100}}: looks up records by key and "
            "returns them as JSON, with the fields asked for.",
            input_schema={{
                "type": "object",
                "properties": {{
                    "key": {{"type": "string", "description": "The record's key."}},
                    "fields": {{"type": "array", "items": {{"type": "string"}}}},
                }},
                "required": ["key"],
            }},
            is_mcp=True,
            server=f"s{{i // 100}}",
        )
        for i in range({tools} - len(_nbagent.registry))
    ]
)
_session.agent.search.wait()
print(
    len(_nbagent.registry),
    len(_nbagent.registry.deferred()),
    _os.getpid(),
    _os.path.dirname(_nbagent.__file__),
)
"""
"""``%load_ext nbagent`` in each kernel, and MCP-like tools up to its catalogue size."""

HOOKS = """\
_bench = {{"cells": [], "model_cpu": 0.0, "model_thread": 0.0, "started": None, "profile": None}}
_parts = {{}}
_stream_response = _agent_module.stream_response


def _timed_stream(client, request, betas=(), cancel=None):
    steps = _stream_response(client, request, betas, cancel)
    while True:
        started, on_thread = _time.process_time(), _time.thread_time()
        try:
            item = next(steps)
        except StopIteration:
            return
        finally:
            _bench["model_cpu"] += _time.process_time() - started
            _bench["model_thread"] += _time.thread_time() - on_thread
        yield item


_agent_module.stream_response = _timed_stream


def _kind(raw):
    return "agent" if raw.startswith("%%agent") else "plain" if raw == {plain!r} else None


def _pre(info):
    if _kind(info.raw_cell) is None:
        return
    _bench["model_cpu"] = _bench["model_thread"] = 0.0
    _parts.clear()
    if _bench["profile"] is not None and _kind(info.raw_cell) == "agent":
        _bench["profile"].enable()
    _bench["started"] = _time.process_time()
    _bench["thread_started"] = _time.thread_time()


def _post(result):
    kind = _kind(result.info.raw_cell)
    if kind is None:
        return
    cpu = _time.process_time() - _bench["started"]
    main = _time.thread_time() - _bench["thread_started"]
    if _bench["profile"] is not None:
        _bench["profile"].disable()
    _bench["cells"].append(
        {{
            "kind": kind,
            "cpu": cpu,
            "model_cpu": _bench["model_cpu"],
            "main": main,
            "parts": {{"in the model call": _bench["model_thread"], **_parts}},
            "error": repr(result.error_in_exec or result.error_before_exec or ""),
            "threads": _threading.active_count(),
            "native": len(_os.listdir("/proc/self/task")),
            "subscribers": len(_nbagent.registry._subscribers),
        }}
    )


get_ipython().events.register("pre_run_cell", _pre)
get_ipython().events.register("post_run_cell", _post)
"""
"""Run in each kernel after :data:`SETUP`: the timing hooks."""

PROFILE = """\
import cProfile as _cProfile
_bench["profile"] = _cProfile.Profile(_time.thread_time)
"""
"""Run in the kernel profiled, after its first cell."""

PARTS = """\
import functools as _functools

import nbagent.frontend.channel as _channel
import nbagent.jupyter.checkpoint_magics as _checkpoints
import nbagent.jupyter.display as _display
import nbagent.jupyter.session as _session_module
import nbagent.store.recorder as _recorder


def _part(owner, name, label):
    original = getattr(owner, name)

    @_functools.wraps(original)
    def timed(*args, **kwargs):
        started = _time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            _parts[label] = _parts.get(label, 0.0) + _time.thread_time() - started

    setattr(owner, name, timed)


for _owner, _name, _label in [
    (_display.CellTranscript, "__init__", "live view made (CellTranscript)"),
    (_display.CellTranscript, "__call__", "events shown (CellTranscript.__call__)"),
    (_recorder.Recorder, "record", "conversation saved (Recorder.record)"),
    (_session_module.Session, "for_cell", "settings applied (Session.for_cell, twice)"),
    (_channel.FrontEndChannel, "open", "front-end channel (FrontEndChannel.open)"),
    (_checkpoints, "begin_cell", "checkpoints (begin_cell, watch, end_cell)"),
    (_checkpoints, "watch", "checkpoints (begin_cell, watch, end_cell)"),
    (_checkpoints, "end_cell", "checkpoints (begin_cell, watch, end_cell)"),
]:
    _part(_owner, _name, _label)
"""
"""Run in each kernel after its first cell with ``--parts``: main-thread CPU of the cell's
parts (disjoint: none of them calls another)."""

REPORT = """\
import json as _json
if _bench["profile"] is not None:
    _bench["profile"].dump_stats({path!r})
print(_json.dumps(_bench["cells"]))
"""
"""Run in each kernel at the end: what the hooks recorded."""


@dataclass
class Case:
    """One kernel, its catalogue size, and what its cells recorded."""

    tools: int
    client: BlockingKernelClient
    api: FakeAnthropicServer
    checkout: str = "this"
    """Which nbagent the kernel imports: ``this`` checkout or the ``baseline``."""
    cells: list[dict[str, Any]] = field(default_factory=list)
    size: list[str] = field(default_factory=list)
    """The registry's tools and deferred tools, as the kernel counted them."""

    def run(self, code: str) -> None:
        """Run a cell; fail on an error."""
        result = execute(self.client, code, timeout=600)
        if result.status != "ok":
            raise SystemExit(f"{self.tools} tools: {code.splitlines()[0]!r} failed: {result.error}")

    def output(self, code: str) -> str:
        """Run a cell and return what it printed."""
        result = execute(self.client, code, timeout=600)
        if result.status != "ok":
            raise SystemExit(f"{self.tools} tools: {code.splitlines()[0]!r} failed: {result.error}")
        return "".join(o.get("text", "") for o in result.outputs if "text" in o)


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of the values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def load_average() -> str:
    """The 1, 5 and 15 minute load averages and the cores, in one phrase."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def main() -> None:
    """Run the three kernels' cells in rotation; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 timed cells a kernel, not 100")
    parser.add_argument("--cells", type=int, help="timed %%agent cells a kernel")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run kernels importing nbagent from DIR (an older commit's tree), in the same "
        "rotation",
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="also time the parts of a cell on the kernel's main thread (adds a little to each)",
    )
    parser.add_argument("--ranker", default="keyword", help="ToolSearch's ranker in the kernels")
    parser.add_argument(
        "--profile",
        type=int,
        choices=SIZES,
        help="cProfile the timed cells of the kernel of this size (its figures are then inflated)",
    )
    args = parser.parse_args()
    cells = args.cells or (10 if args.quick else 100)
    load_before = load_average()
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        cases: list[Case] = []
        checkouts = [("this", None)] + ([("baseline", args.baseline)] if args.baseline else [])
        for (checkout, where), tools in itertools.product(checkouts, SIZES):
            api = stack.enter_context(
                FakeAnthropicServer([Reply.text("Ready.")] * (cells + 1), context_window=10**9)
            )
            work = root / f"kernel-{checkout}-{tools}"
            work.mkdir()
            env = {
                "ANTHROPIC_API_KEY": "test-key",
                "ANTHROPIC_BASE_URL": api.url,
                CONVERSATIONS_ENV: str(work / "conversations"),
                LOG_ENV: str(work / "nbagent.log"),
                APPROVALS_ENV: str(work / "approvals.json"),
            }
            if where is not None:
                env["PYTHONPATH"] = os.pathsep.join(
                    [str(Path(where).resolve()), os.environ.get("PYTHONPATH", "")]
                )
            _, client = stack.enter_context(kernel(env, cwd=str(work)))
            cases.append(Case(tools, client, api, checkout))
        for case in cases:
            case.size = case.output(SETUP.format(tools=case.tools, ranker=args.ranker)).split()
            case.run(HOOKS.format(plain=PLAIN))
            print(
                f"{case.checkout}, {case.tools:,} tools: pid {case.size[2]}, {case.size[3]}",
                file=sys.stderr,
            )
        for case in cases:  # the first cell: the catalogue announced, the costs counted
            case.run(PROMPT)
            case.run(PLAIN)
        if args.profile:
            cases[SIZES.index(args.profile)].run(PROFILE)
        if args.parts:
            for case in cases:
                case.run(PARTS)
        for _ in range(cells):
            for case in cases:
                case.run(PROMPT)
                case.run(PLAIN)
        profile_path = Path(tempfile.gettempdir()) / f"cell_cost_{args.profile}.prof"
        for case in cases:
            case.cells = json.loads(case.output(REPORT.format(path=str(profile_path))))
            case.api.assert_no_errors()
        load_after = load_average()
        print(run_line(sys.argv))
        print()
        print(f"Load: {load_before} before, {load_after} after.")
        print()
        print(tables(cases))
        if args.parts:
            print()
            print(parts_table([c for c in cases if c.checkout == "this"]))
        if args.profile:
            import pstats

            print(f"\nThe profile is kept in {profile_path}.")
            stats = pstats.Stats(str(profile_path), stream=sys.stdout)
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(25)


def parts_table(cases: list[Case]) -> str:
    """Main-thread CPU per part of a cell, medians, one column per catalogue size."""
    timed = [[c for c in case.cells if c["kind"] == "agent"][1:] for case in cases]
    labels = list(dict.fromkeys(label for cells in timed for c in cells for label in c["parts"]))
    rows = []
    for label in labels:
        rows.append(
            [label]
            + [
                f"{statistics.median(c['parts'].get(label, 0.0) for c in cells) * 1e3:.2f}"
                for cells in timed
            ]
        )
    rest = [
        statistics.median((c["main"] - sum(c["parts"].values())) * 1e3 for c in cells)
        for cells in timed
    ]
    rows.append(["the rest: IPython, the magic, the agent loop"] + [f"{r:.2f}" for r in rest])
    main = [statistics.median(c["main"] * 1e3 for c in cells) for cells in timed]
    rows.append(["**main thread, all**"] + [f"**{m:.2f}**" for m in main])
    others = [statistics.median((c["cpu"] - c["main"]) * 1e3 for c in cells) for cells in timed]
    rows.append(["other threads (ipykernel's output thread, ...)"] + [f"{o:.2f}" for o in others])
    return markdown_table(
        ["part of a `%%agent` cell (CPU ms, median)", *(f"{c.tools:,} tools" for c in cases)],
        rows,
        align="l" + "r" * len(cases),
    )


def tables(cases: list[Case]) -> str:
    """The CPU table and the threads-and-subscribers table."""
    rows = []
    base: dict[str, float] = {}
    for case in cases:
        agent = [c for c in case.cells if c["kind"] == "agent"]
        plain = [c for c in case.cells if c["kind"] == "plain"]
        errors = {c["error"] for c in agent if c["error"] != "''"}
        if errors:
            raise SystemExit(f"{case.checkout}, {case.tools} tools: cells failed: {errors}")
        first, timed = agent[0], agent[1:]
        cpu = [c["cpu"] * 1e3 for c in timed]
        model = [c["model_cpu"] * 1e3 for c in timed]
        outside = [(c["cpu"] - c["model_cpu"]) * 1e3 for c in timed]
        median = statistics.median(cpu)
        base.setdefault(case.checkout, median)
        rows.append(
            [
                case.checkout,
                f"{case.tools:,}",
                f"{int(case.size[1]):,}",
                len(timed),
                f"{first['cpu'] * 1e3:.1f}",
                f"{median:.1f}",
                f"{percentile(cpu, 0.9):.1f}",
                f"{statistics.median(model):.1f}",
                f"{statistics.median(outside):.1f}",
                f"{statistics.median(c['cpu'] * 1e3 for c in plain[1:]):.2f}",
                f"{median / base[case.checkout]:.2f}×",
            ]
        )
    cpu_table = markdown_table(
        [
            "nbagent",
            "tools",
            "deferred",
            "timed cells",
            "first cell (ms)",
            "kernel CPU per cell, median (ms)",
            "p90 (ms)",
            "of which in the model call, median (ms)",
            "outside the model call, median (ms)",
            "plain `pass` cell, median (ms)",
            "median × the 100-tool kernel's",
        ],
        rows,
        align="lrrrrrrrrrr",
    )
    growth = []
    for case in cases:
        agent = [c for c in case.cells if c["kind"] == "agent"]
        for key, label in (
            ("threads", "threading.active_count()"),
            ("native", "native threads"),
            ("subscribers", "registry subscribers"),
        ):
            values = [c[key] for c in agent]
            growth.append(
                [
                    case.checkout,
                    f"{case.tools:,}",
                    label,
                    values[0],
                    values[-1],
                    max(values),
                    "no" if values[-1] <= values[0] else "YES",
                ]
            )
    growth_table = markdown_table(
        ["nbagent", "tools", "count after each `%%agent` cell", "first", "last", "max", "grew"],
        growth,
        align="lrlrrrl",
    )
    return f"{cpu_table}\n\n{growth_table}"


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - start:.0f} s)")
