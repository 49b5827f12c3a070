"""How long ``%load_ext nbagent`` takes in a fresh IPython kernel.

Each run starts a new kernel (jupyter_client) and times the magic inside it with
``time.perf_counter``; the table gives the median and the spread over the runs, beside
``import json`` timed the same way as a floor. Target: under 0.3 s.

Run: ``python benchmarks/load_time.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
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


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one kernel each")
    runs = 1 if parser.parse_args().quick else 7
    rows = []
    for label, statement in (
        ("%load_ext nbagent", "get_ipython().run_line_magic('load_ext', 'nbagent')"),
        ("import json (floor)", "import json"),
    ):
        times = [time_in_fresh_kernel(statement) for _ in range(runs)]
        rows.append(
            [
                label,
                runs,
                f"{statistics.median(times):.3f}",
                f"{min(times):.3f}",
                f"{max(times):.3f}",
            ]
        )
    print("## %load_ext in a fresh kernel\n")
    print(run_line(sys.argv) + "\n")
    print(markdown_table(["statement", "kernels", "median (s)", "min (s)", "max (s)"], rows))
    print("\nTarget: %load_ext nbagent under 0.3 s.")


if __name__ == "__main__":
    main()
