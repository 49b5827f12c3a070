"""The ``nbagent`` command: ``run`` a notebook, ``enable`` or ``disable`` autoloading.

``nbagent run NOTEBOOK`` executes a notebook top to bottom in a new kernel of this
interpreter (nbclient), in the notebook's own folder, as ``jupyter execute`` does; it then
writes the executed copy where ``--output`` says (by default ``<name>.executed.ipynb`` in the
current folder) and prints, as each cell finishes, what a person would want to read in a
terminal: what the cells printed, each ``%%agent`` cell's prompt and transcript (the answer,
the tool calls, the tokens), and any error. The exit code is 1 when a cell failed.

``nbagent enable|disable [--user|--prefix P]``: see :mod:`nbagent.jupyter.autoload`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""Terminal colour codes, as IPython's tracebacks carry them."""

USAGE = """\
usage: nbagent run NOTEBOOK [-o OUTPUT] [--timeout SECONDS]
       nbagent enable|disable [--user | --prefix PREFIX]

  run      execute a notebook in a new kernel, print what it says, write the executed copy
  enable   load nbagent in every new IPython kernel of this environment (--user: your profile)
  disable  undo enable
"""


def agent_cell(source: str) -> bool:
    """Whether a code cell is an ``%%agent`` cell (a prompt to the agent)."""
    return source.lstrip().startswith("%%agent")


def cell_text(cell: Any, colour: bool) -> str:
    """What a terminal shows of one executed code cell.

    Every cell contributes what it printed (stdout, stderr) and its errors; an ``%%agent``
    cell also its prompt and the plain-text form of its outputs (the transcript). Tables,
    widgets and HTML of other cells stay in the written notebook.

    Args:
        cell: The executed cell (an nbformat node).
        colour: Keep the terminal colour codes of tracebacks.

    Returns:
        The text, empty when there is nothing to show.
    """
    parts: list[str] = []
    is_agent = agent_cell(cell.source)
    if is_agent:
        parts.append("\n".join(f">>> {line}" for line in cell.source.strip().splitlines()))
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(output.get("text", "").rstrip("\n"))
        elif kind == "error":
            trace = "\n".join(output.get("traceback", [])) or (
                f"{output.get('ename')}: {output.get('evalue')}"
            )
            parts.append(trace if colour else ANSI.sub("", trace))
        elif is_agent and kind in ("display_data", "execute_result"):
            text = output.get("data", {}).get("text/plain", "")
            if text:
                parts.append(text.rstrip("\n"))
    text = "\n".join(part for part in parts if part)
    return f"{text}\n" if text else ""


def this_python_kernel(sockets: Path) -> type:
    """A kernel manager class: an IPython kernel of this interpreter, whatever the notebook names.

    A ``python3`` kernelspec installed elsewhere (``--user``, another environment) could point
    at a Python without nbagent; the kernel here is always ``sys.executable``'s. It talks over
    local sockets in a private folder (IPC), not over TCP.

    Args:
        sockets: The folder for the kernel's sockets.
    """
    from ipykernel.kernelspec import RESOURCES, get_kernel_dict
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class ThisPython(KernelSpecManager):  # type: ignore[misc]
        """Every kernel name resolves to this interpreter's IPython kernel."""

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())

    class ThisPythonKernel(AsyncKernelManager):  # type: ignore[misc]
        """nbclient's kernel manager, on this interpreter and local sockets."""

        def __init__(self, **kwargs: Any) -> None:
            kwargs.update(
                kernel_spec_manager=ThisPython(), transport="ipc", ip=str(sockets / "kernel")
            )
            super().__init__(**kwargs)

    return ThisPythonKernel


def run_notebook(
    path: Path,
    output: Path,
    timeout: int = 600,
    out: TextIO = sys.stdout,
) -> int:
    """Execute a notebook, print what its cells say as they finish, write the executed copy.

    Args:
        path: The notebook.
        output: Where to write the executed notebook (written even when a cell fails).
        timeout: Seconds one cell may run.
        out: Where to print.

    Returns:
        The exit code: 0, or 1 when a cell raised or the kernel died.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    code_cells = sum(cell.cell_type == "code" for cell in notebook.cells)
    colour = out.isatty()
    print(f"Running {path} ({code_cells} code cells) in a new kernel ({sys.executable}).", file=out)
    print(file=out, flush=True)

    def executed(cell: Any, cell_index: int, execute_reply: Any) -> None:
        text = cell_text(cell, colour)
        if text:
            print(text, file=out, flush=True)

    sockets = Path(tempfile.mkdtemp(prefix="nbagent-kernel-"))
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_manager_class=this_python_kernel(sockets),
        resources={"metadata": {"path": str(path.resolve().parent)}},
        on_cell_executed=executed,
    )
    started = time.monotonic()
    failed = ""
    try:
        client.execute()
    except CellExecutionError:
        failed = "A cell raised an error (above); the cells after it did not run."
    except DeadKernelError as exc:
        failed = f"The kernel died ({exc}); the cells after it did not run."
    finally:
        output.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, output)
        shutil.rmtree(sockets, ignore_errors=True)
    seconds = time.monotonic() - started
    if failed:
        print(failed, file=out)
    print(
        f"{'Stopped' if failed else 'Done'} in {seconds:.1f} s. "
        f"The executed notebook, with every output: {output}",
        file=out,
        flush=True,
    )
    return 1 if failed else 0


def run_main(argv: Sequence[str]) -> int:
    """``nbagent run``.

    Args:
        argv: The arguments after ``run``.

    Returns:
        The exit code.
    """
    parser = argparse.ArgumentParser(
        prog="nbagent run",
        description="Execute a notebook in a new kernel of this Python, print what its cells "
        "print and what the agent answers, and write the executed notebook.",
    )
    parser.add_argument("notebook", type=Path, help="the .ipynb file to run")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="where to write the executed notebook (default: NAME.executed.ipynb here)",
    )
    parser.add_argument(
        "--timeout", type=int, default=600, help="seconds one cell may run (default: 600)"
    )
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        print(f"nbagent run: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    output = args.output or Path(f"{args.notebook.stem}.executed.ipynb")
    if output.resolve() == args.notebook.resolve():
        print("nbagent run: --output would overwrite the notebook itself", file=sys.stderr)
        return 2
    return run_notebook(args.notebook, output, args.timeout)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``nbagent`` command (and ``python -m nbagent``).

    Args:
        argv: The arguments (``sys.argv[1:]`` by default).

    Returns:
        The exit code.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["run"]:
        return run_main(args[1:])
    if args[:1] in (["enable"], ["disable"]):
        from nbagent.jupyter.autoload import main as autoload_main

        return autoload_main(args)
    print(USAGE, end="", file=sys.stdout if args[:1] in (["-h"], ["--help"]) else sys.stderr)
    return 0 if args[:1] in (["-h"], ["--help"]) else 2
