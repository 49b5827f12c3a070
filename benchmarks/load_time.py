"""How long ``%load_ext nbagent`` takes in a fresh IPython kernel, and importing nbagent.

Each run starts a new kernel (jupyter_client) and times the magic inside it with
``time.perf_counter``; the table gives the median and the spread over the runs, beside
``import json`` timed the same way as a floor. Target: under 0.3 s.

The second table times imports the same way, each as the first statement of a new Python
process: ``import nbagent.frontend.server`` is what a Jupyter server imports of nbagent at its
start (target: at most 50 ms), ``import nbagent`` the package, and ``nbagent.registry`` what
its first use imports. The bytecode is compiled once, before the runs, into a temporary
``pycache_prefix``, as an installed package has it.

Run: ``python benchmarks/load_time.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402

from tests.kernels import execute, kernel  # noqa: E402

TIMER = (
    "import time as _t\n_s = _t.perf_counter()\n{statement}\n"
    "print(round(_t.perf_counter() - _s, 4))"
)


def time_in_fresh_kernel(statement: str) -> float:
    """Seconds a statement takes as the first thing a new kernel runs."""
    with kernel() as (_, client):
        return float(execute(client, TIMER.format(statement=statement)).text.strip())


def summary(label: str, times: list[float], digits: int) -> list[object]:
    """One row of a table: the label, the number of runs, their median, min and max.

    Args:
        label: What was timed.
        times: One time per run.
        digits: Digits shown after the decimal point.

    Returns:
        The row.
    """
    spread = (statistics.median(times), min(times), max(times))
    return [label, len(times), *(f"{t:.{digits}f}" for t in spread)]


IMPORTS = (
    ("import nbagent.frontend.server (the server extension)", "import nbagent.frontend.server"),
    ("import nbagent", "import nbagent"),
    ("import nbagent; nbagent.registry (first use)", "import nbagent\nnbagent.registry"),
)
"""Each import timed in fresh processes: its label and its statement."""


def time_in_fresh_process(statement: str, pycache: Path) -> float:
    """Seconds a statement takes as the first thing a new Python process runs.

    Args:
        statement: The code to time.
        pycache: Where the process reads and writes its bytecode.

    Returns:
        The time, from ``time.perf_counter`` in the process.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    completed = subprocess.run(
        [
            sys.executable,
            "-X",
            f"pycache_prefix={pycache}",
            "-c",
            TIMER.format(statement=statement),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(completed.stdout.strip())


def import_rows(runs: int) -> list[list[object]]:
    """Time each of :data:`IMPORTS` in ``runs`` fresh processes, after one that compiles it.

    Args:
        runs: Processes per import.

    Returns:
        The table's rows, in milliseconds.
    """
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="nbagent-pycache-") as pycache:
        for label, statement in IMPORTS:
            time_in_fresh_process(statement, Path(pycache))
            times = [1000 * time_in_fresh_process(statement, Path(pycache)) for _ in range(runs)]
            rows.append(summary(label, times, digits=1))
    return rows


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one kernel each, three processes")
    quick = parser.parse_args().quick
    runs = 1 if quick else 7
    rows = []
    for label, statement in (
        ("%load_ext nbagent", "get_ipython().run_line_magic('load_ext', 'nbagent')"),
        ("import json (floor)", "import json"),
    ):
        times = [time_in_fresh_kernel(statement) for _ in range(runs)]
        rows.append(summary(label, times, digits=3))
    print("## %load_ext in a fresh kernel\n")
    print(run_line(sys.argv) + "\n")
    print(markdown_table(["statement", "kernels", "median (s)", "min (s)", "max (s)"], rows))
    print("\nTarget: %load_ext nbagent under 0.3 s.")
    print("\n## Imports in a fresh Python process\n")
    print(
        markdown_table(
            ["statement", "processes", "median (ms)", "min (ms)", "max (ms)"],
            import_rows(3 if quick else 15),
        )
    )
    print("\nTarget: import nbagent.frontend.server at most 50 ms.")


if __name__ == "__main__":
    main()
