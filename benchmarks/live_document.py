"""NotebookRead and NotebookEdit through JupyterLab's live document, against the file.

Starts a Jupyter server with jupyter-collaboration (``$NBAGENT_RTC_ENV``, which ``.ci/run``
builds) on 127.0.0.1 and, for a small notebook and a large one, times the first call
(connect and sync), reads and edits of one cell, and the time from an edit's call until a
second Y client (the user's browser) sees it; then the same reads and edits on a copy of the
notebook as a plain file. Medians.

Run: ``python benchmarks/live_document.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nbformat  # noqa: E402
from catalogue import markdown_table, run_line  # noqa: E402

from nbagent.core.tool import Tool  # noqa: E402
from nbagent.tools import ToolContext, builtin_tools  # noqa: E402
from nbagent.tools.notebook.live import LiveDocuments  # noqa: E402
from tests.tools.rtc import RTC_PYTHON, YUser, jupyter_server  # noqa: E402


def make_notebook(cells: int, output_bytes: int) -> Any:
    """A notebook of code cells, each with an image output of a given size."""
    notebook = nbformat.v4.new_notebook()
    for index in range(cells):
        cell = nbformat.v4.new_code_cell(f"x{index} = {index}", id=f"c{index}")
        if output_bytes:
            data = {"image/png": "A" * output_bytes, "text/plain": "<Figure>"}
            cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        notebook.cells.append(cell)
    return notebook


def notebook_tools(path: Path, live: LiveDocuments | None) -> dict[str, Tool]:
    """NotebookRead and NotebookEdit on one notebook."""
    context = ToolContext(root=path.parent, notebook_path=lambda: path, live=live)
    return {t.name: t for t in builtin_tools(context, ["NotebookRead", "NotebookEdit"])}


def timed(call: Any) -> float:
    """Seconds a call takes."""
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def ms(values: list[float]) -> str:
    """A median in milliseconds."""
    return f"{statistics.median(values) * 1000:.1f} ms"


def measure(server: Any, cells: int, output_bytes: int, runs: int) -> list[str]:
    """One row of the table."""
    name = f"n{cells}.ipynb"
    path = (server.root / name).resolve()
    nbformat.write(make_notebook(cells, output_bytes), path)
    size = path.stat().st_size / 1e6
    live = LiveDocuments(runtime_dir=server.runtime_dir)
    tools = notebook_tools(path, live)
    first = timed(lambda: tools["NotebookRead"].call({"overview": True}))
    user = YUser(server, name)
    reads, edits, seen = [], [], []
    try:
        for run in range(runs):
            reads.append(timed(lambda: tools["NotebookRead"].call({"cell_id": "c1"})))
            started = time.perf_counter()
            tools["NotebookEdit"].call({"cell_id": "c1", "new_source": f"x1 = {run}"})
            edits.append(time.perf_counter() - started)
            seen.append(user.wait_for(lambda s, v=f"x1 = {run}": s["c1"] == v) - started)
    finally:
        user.close()
        live.close()
    copy = path.parent.parent / f"file-{name}"
    nbformat.write(make_notebook(cells, output_bytes), copy)
    on_file = notebook_tools(copy, None)
    file_reads, file_edits = [], []
    for run in range(runs):
        file_reads.append(timed(lambda: on_file["NotebookRead"].call({"cell_id": "c1"})))
        edit = {"cell_id": "c1", "new_source": f"x1 = {run}"}
        file_edits.append(timed(lambda e=edit: on_file["NotebookEdit"].call(e)))
    return [
        f"{cells} cells, {size:.1f} MB",
        f"{first * 1000:.0f} ms",
        f"{ms(reads)} · {ms(file_reads)}",
        f"{ms(edits)} · {ms(file_edits)}",
        ms(seen),
    ]


def main() -> None:
    """Print the run line and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 reads and edits, not 20")
    runs = 3 if parser.parse_args().quick else 20
    print(run_line(sys.argv))
    print(f"Medians of {runs} reads and edits per notebook.\n")
    with tempfile.TemporaryDirectory() as base, jupyter_server(RTC_PYTHON, Path(base)) as server:
        rows = [measure(server, 4, 0, runs), measure(server, 200, 50_000, runs)]
    headers = [
        "notebook",
        "first call",
        "NotebookRead, live · file",
        "NotebookEdit, live · file",
        "edit → seen by the user",
    ]
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
