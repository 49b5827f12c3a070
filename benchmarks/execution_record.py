"""Per-cell cost of the execution record (nbagent.jupyter.kernel_state.CellWatch).

An in-process IPython shell runs a trivial cell (``x = 1``) many times, with the record's
``pre_run_cell`` and ``post_run_cell`` callbacks registered and without, in alternating
rounds; the cost per cell is the difference of the medians. Times are the process's CPU
time (``time.process_time``), so that other work on a shared machine does not count. That
difference is within a run's noise, so the callbacks' own time is also measured alone (the
shell's run not counted) at user namespaces of 10, 1,000 and 10,000 extra names, and for a
cell whose tree cannot show all it binds (``from math import *``: the names new to the
namespace are looked for, at the end of its insertion order). Memory: the record's size
after more runs than it keeps (it stays bounded).

Run: ``python benchmarks/execution_record.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import markdown_table, run_line  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from nbagent.jupyter.kernel_state import CellWatch  # noqa: E402
from nbagent.tools.notebook.record import RUNS, ExecutionRecord  # noqa: E402


def _run_cells(shell: Any, cells: int) -> float:
    """Seconds per cell of ``x = 1`` run ``cells`` times."""
    started = time.process_time()
    for _ in range(cells):
        shell.run_cell("x = 1", store_history=True)
    return (time.process_time() - started) / cells


def _callbacks_alone(shell: Any, watch: CellWatch, cells: int, code: str = "x = 1") -> float:
    """Seconds per cell of the two callbacks, around a cell's result as IPython makes it."""
    result = shell.run_cell(code, store_history=False)
    info = result.info
    started = time.process_time()
    for _ in range(cells):
        watch.pre_run_cell(info)
        watch.post_run_cell(result)
    return (time.process_time() - started) / cells


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer cells and rounds")
    args = parser.parse_args()
    cells, rounds = (200, 5) if args.quick else (500, 9)

    shell = InteractiveShell.instance()
    record = ExecutionRecord()
    watch = CellWatch(shell, record)
    _run_cells(shell, cells)  # warm up
    without, with_record = [], []
    for _ in range(rounds):
        without.append(_run_cells(shell, cells))
        watch.start()
        with_record.append(_run_cells(shell, cells))
        watch.stop()
    base, kept = statistics.median(without), statistics.median(with_record)
    rows = [
        [
            "trivial cell `x = 1`, run_cell",
            f"{len(shell.user_ns):,}",
            f"{base * 1e6:.1f}",
            f"{kept * 1e6:.1f}",
            f"{(kept - base) * 1e6:.1f}",
        ]
    ]
    for size in (10, 1000, 10_000):
        extra = {f"v{i}": i for i in range(size)}
        shell.user_ns.update(extra)
        alone = statistics.median(_callbacks_alone(shell, watch, cells) for _ in range(rounds))
        rows.append(
            [
                f"callbacks alone, {size:,} extra names",
                f"{len(shell.user_ns):,}",
                "",
                "",
                f"{alone * 1e6:.1f}",
            ]
        )
        if size == 10_000:
            code = "from math import *"
            opaque = statistics.median(
                _callbacks_alone(shell, watch, cells // 10, code) for _ in range(rounds)
            )
            rows.append(
                [
                    f"callbacks alone, `{code}` (new names looked for), {size:,} extra names",
                    f"{len(shell.user_ns):,}",
                    "",
                    "",
                    f"{opaque * 1e6:.1f}",
                ]
            )
        for name in extra:
            del shell.user_ns[name]

    tracemalloc.start()
    bounded = ExecutionRecord()
    source = "x = 1\n" * 1000  # 6,000 characters: the record keeps the first 2,000
    for number in range(RUNS * 3):
        bounded.add(
            cell_id=f"cell-{number}",
            execution_count=number,
            source=source,
            started=0.0,
            duration=0.0,
            error=None,
            bound=("x",),
        )
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(run_line(sys.argv))
    print()
    print(
        markdown_table(
            ["case", "names in user_ns", "without (µs)", "with (µs)", "cost per cell (µs)"],
            rows,
            "lrrrr",
        )
    )
    print()
    print(
        f"Memory after {RUNS * 3:,} runs of a 6,000-character cell: {held / 1e6:.1f} MB held "
        f"({len(bounded.runs()):,} runs kept)."
    )


if __name__ == "__main__":
    main()
