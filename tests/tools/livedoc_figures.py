"""Figures of NotebookRead and NotebookEdit through the live document, against the file.

Starts a Jupyter server with jupyter-collaboration (``$NBAGENT_RTC_ENV``) on 127.0.0.1 and,
for a small notebook and a large one, times the first call (connect and sync), reads and
edits of one cell, and the time from an edit's call until a second Y client (the user's
browser) sees it; then the same reads and edits on a copy of the notebook as a plain file.

    python -m tests.tools.livedoc_figures
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat

from nbagent.tool import Tool
from nbagent.tools import ToolContext, builtin_tools
from nbagent.tools.livedoc import LiveDocuments
from tests.tools.rtc import RTC_PYTHON, YUser, jupyter_server

RUNS = 20
"""Reads and edits timed per notebook."""


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


def measure(server: Any, cells: int, output_bytes: int) -> str:
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
        for run in range(RUNS):
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
    for run in range(RUNS):
        file_reads.append(timed(lambda: on_file["NotebookRead"].call({"cell_id": "c1"})))
        edit = {"cell_id": "c1", "new_source": f"x1 = {run}"}
        file_edits.append(timed(lambda e=edit: on_file["NotebookEdit"].call(e)))
    return (
        f"| {cells} cells, {size:.1f} MB | {first * 1000:.0f} ms | {ms(reads)} · "
        f"{ms(file_reads)} | {ms(edits)} · {ms(file_edits)} | {ms(seen)} |"
    )


def main() -> None:
    """Print the table (medians of :data:`RUNS`)."""
    with tempfile.TemporaryDirectory() as base, jupyter_server(RTC_PYTHON, Path(base)) as server:
        print(
            "| notebook | first call | NotebookRead, live · file | NotebookEdit, live · file "
            "| edit → seen by the user |"
        )
        print("|---|---|---|---|---|")
        print(measure(server, 4, 0))
        print(measure(server, 200, 50_000))


if __name__ == "__main__":
    main()
