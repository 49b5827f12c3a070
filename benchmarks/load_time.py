"""How long ``%load_ext nbagent`` takes in a fresh IPython kernel, and importing nbagent.

Each run starts a new kernel (jupyter_client) and times the magic inside it with
``time.perf_counter``; the table gives the median and the spread over the runs, beside
``import json`` timed the same way as a floor. Target: under 0.3 s.

The second table times imports the same way, each as the first statement of a new Python
process: ``import nbagent.frontend.server`` is what a Jupyter server imports of nbagent at its
start (target: at most 50 ms), ``import nbagent`` the package, and ``nbagent.registry`` what
its first use imports. The bytecode is compiled once, before the runs, into a temporary
``pycache_prefix``, as an installed package has it.

The third table sets ``%load_ext nbagent`` against a peer, ``%load_ext jupyter_ai_magics``
(Jupyter AI's magics, in a venv of their own: ``--peer-venv``, by default
``~/.cache/nbagent/jupyter-ai-venv``, which this script makes with ``python -m venv`` and pip
when it is missing, with :data:`PEER_PACKAGES`). Fresh kernels alternate between the two, each
run by its own venv's Python with the same ipykernel, both reading bytecode compiled once
beforehand into one temporary ``PYTHONPYCACHEPREFIX``. In one cell, nbagent's kernel runs
``%load_ext nbagent`` then ``%tools`` (timed until the table of the built-in tools is shown);
the peer's runs ``%load_ext jupyter_ai_magics`` then ``%ai list`` (its table of providers and
models). Target (issue 33): nbagent's median at most 0.15 times the peer's.

``--baseline DIR`` times another checkout of nbagent (a git worktree of an older commit, put
first on its kernels' ``PYTHONPATH``) in the same rotation.

Run: ``python benchmarks/load_time.py [--quick] [--pairs N] [--peer-venv PATH] [--peer-only]
[--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalogue import markdown_table, run_line  # noqa: E402
from jupyter_client.blocking.client import BlockingKernelClient  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

from tests.kernels import execute  # noqa: E402

TIMER = (
    "import time as _t\n_s = _t.perf_counter()\n{statement}\n"
    "print(round(_t.perf_counter() - _s, 4))"
)


PEER_PACKAGES = ("jupyter-ai-magics==2.31.7", "ipykernel==7.4.0", "ipython==9.19.1")
"""What the peer's venv holds: Jupyter AI's magics, with the kernel nbagent's venv has."""

DEFAULT_PEER_VENV = Path("~/.cache/nbagent/jupyter-ai-venv").expanduser()
"""Where the peer's venv is made when ``--peer-venv`` does not say."""

RATIO_TARGET = 0.15
"""nbagent's load-and-list median over the peer's, at most (issue 33)."""

NBAGENT_CELL = (
    "get_ipython().run_line_magic('load_ext', 'nbagent')\nget_ipython().run_line_magic('tools', '')"
)
"""nbagent's load, then its table of tools (which waits for the built-in tools)."""

PEER_CELL = (
    "get_ipython().run_line_magic('load_ext', 'jupyter_ai_magics')\n"
    "display(get_ipython().run_line_magic('ai', 'list'))"
)
"""The peer's load, then its table of providers and models."""

BUILT_IN = ("Read", "Bash", "NotebookEdit", "WebFetch")
"""Built-in tools whose names nbagent's table must show (else the run failed)."""


def make_peer_venv(venv: Path) -> Path:
    """The peer venv's Python, after making the venv with :data:`PEER_PACKAGES` if missing.

    Args:
        venv: The venv's folder.

    Returns:
        Its ``bin/python``.
    """
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"Making the peer's venv in {venv} (pip install {' '.join(PEER_PACKAGES)})")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "ensurepip", "--upgrade", "--default-pip"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES],
            check=True,
        )
    return python


@contextmanager
def kernel_of(python: Path, env: dict[str, str]) -> Iterator[BlockingKernelClient]:
    """A fresh IPython kernel run by a given Python (its venv's ipykernel).

    Args:
        python: The interpreter.
        env: The kernel's whole environment.

    Yields:
        A started blocking client.
    """
    with tempfile.TemporaryDirectory(prefix="nbagent-kernelspec-") as specs:
        spec = Path(specs) / "kernels" / "timed"
        spec.mkdir(parents=True)
        argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": "timed", "language": "python"})
        )
        manager = KernelManager(
            kernel_name="timed",
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]),
        )
        manager.start_kernel(env=env)
        client = manager.blocking_client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            yield client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def timed_cell(python: Path, cell: str, env: dict[str, str], expect: tuple[str, ...]) -> float:
    """Seconds a cell takes as the first thing a fresh kernel runs; its output must show
    every one of ``expect``.

    Raises:
        SystemExit: The cell failed or did not show what it should.
    """
    with kernel_of(python, env) as client:
        result = execute(client, TIMER.format(statement=cell), timeout=120)
    if result.status != "ok" or not all(name in result.text for name in expect):
        raise SystemExit(f"{cell!r} in {python}: {result.status} {result.error} {result.text}")
    return float(result.text.strip().splitlines()[-1])


def peer_rows(
    venv: Path, pairs: int, env: dict[str, str], baseline: Path | None = None
) -> tuple[list[list[object]], float]:
    """Time nbagent's load-and-list against the peer's in fresh kernels, alternating.

    Args:
        venv: The peer's venv (made when missing).
        pairs: Kernels of each.
        env: The kernels' environment (:func:`compiled_env`).
        baseline: Another checkout of nbagent, timed in the same rotation (put first on its
            kernels' ``PYTHONPATH``).

    Returns:
        The table's rows, and nbagent's median over the peer's.
    """
    runs = [
        ("%load_ext nbagent, %tools", Path(sys.executable), NBAGENT_CELL, BUILT_IN, env),
        ("%load_ext jupyter_ai_magics, %ai list (peer)", make_peer_venv(venv), PEER_CELL, (), env),
    ]
    if baseline is not None:
        label = f"%load_ext nbagent, %tools ({baseline})"
        other = {**env, "PYTHONPATH": str(baseline)}
        runs.append((label, Path(sys.executable), NBAGENT_CELL, BUILT_IN, other))
    times: list[list[float]] = [[] for _ in runs]
    for _, python, cell, expect, kernel_env in runs:  # compiles the bytecode
        timed_cell(python, cell, kernel_env, expect)
    for index in range(pairs):
        order = list(zip(runs, times, strict=True))
        turn = index % len(order)
        for (_, python, cell, expect, kernel_env), into in order[turn:] + order[:turn]:
            into.append(timed_cell(python, cell, kernel_env, expect))
    ratio = statistics.median(times[0]) / statistics.median(times[1])
    rows = [summary(run[0], taken, digits=3) for run, taken in zip(runs, times, strict=True)]
    return rows, ratio


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
    parser.add_argument("--pairs", type=int, default=7, help="kernels of each against the peer")
    parser.add_argument(
        "--peer-venv",
        type=Path,
        default=DEFAULT_PEER_VENV,
        help=f"the peer's venv, made when missing ({DEFAULT_PEER_VENV})",
    )
    parser.add_argument("--peer-only", action="store_true", help="only the table of the peer")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout of nbagent, timed beside the peer"
    )
    args = parser.parse_args()
    quick = args.quick
    runs = 1 if quick else 7
    print(run_line(sys.argv) + "\n")
    with compiled_env() as env:
        if not args.peer_only:
            print_own_tables(env, runs, 3 if quick else 15)
        print("\n## Load and list against the peer (Jupyter AI's magics), alternating kernels\n")
        if quick and not (args.peer_venv / "bin" / "python").exists():
            print(f"No peer venv in {args.peer_venv}: run without --quick to make it.")
            return
        rows, ratio = peer_rows(args.peer_venv, 1 if quick else args.pairs, env, args.baseline)
    print(markdown_table(["cell", "kernels", "median (s)", "min (s)", "max (s)"], rows))
    met = "met" if ratio <= RATIO_TARGET else "NOT met"
    print(f"\nnbagent / peer (medians): {ratio:.2f}; target at most {RATIO_TARGET}: {met}.")


def print_own_tables(env: dict[str, str], kernels: int, processes: int) -> None:
    """Print the tables of ``%load_ext nbagent`` alone and of the imports.

    Args:
        env: The kernels' environment (:func:`compiled_env`).
        kernels: Fresh kernels per statement.
        processes: Fresh processes per import.
    """
    rows = []
    python = Path(sys.executable)
    for label, statement in (
        ("%load_ext nbagent", "get_ipython().run_line_magic('load_ext', 'nbagent')"),
        ("import json (floor)", "import json"),
    ):
        timed_cell(python, statement, env, ())  # compiles the bytecode
        times = [timed_cell(python, statement, env, ()) for _ in range(kernels)]
        rows.append(summary(label, times, digits=3))
    print("## %load_ext in a fresh kernel\n")
    print(markdown_table(["statement", "kernels", "median (s)", "min (s)", "max (s)"], rows))
    print("\nTarget: %load_ext nbagent under 0.3 s.")
    print("\n## Imports in a fresh Python process\n")
    print(
        markdown_table(
            ["statement", "processes", "median (ms)", "min (ms)", "max (ms)"],
            import_rows(processes),
        )
    )
    print("\nTarget: import nbagent.frontend.server at most 50 ms.")


@contextmanager
def compiled_env() -> Iterator[dict[str, str]]:
    """The kernels' environment: this one, with bytecode written to and read from a temporary
    ``PYTHONPYCACHEPREFIX`` (compiled by each statement's first, untimed, run)."""
    with tempfile.TemporaryDirectory(prefix="nbagent-pycache-") as pycache:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")
        }
        env["PYTHONPYCACHEPREFIX"] = pycache
        yield env


if __name__ == "__main__":
    main()
