"""The first NotebookRead of a fresh kernel in JupyterLab: how long nbagent's own work takes.

Starts JupyterLab with this checkout's nbagent extension in Debian's Chromium and opens a
notebook. Each run restarts the notebook's kernel, runs ``%load_ext nbagent`` and at once an
``%%agent`` cell whose scripted model (``FakeAnthropicServer``) calls NotebookRead three times
(the whole notebook, then an overview, then the whole notebook again); then a cell prints
each call's time as the agent measured it (``ToolCallRecord.duration``: finding the notebook,
the front end's answer, rendering). Medians over the runs. ``--file`` disables the extension:
the notebook is then read from its file.

Run: ``python benchmarks/first_read.py [--runs N | --quick] [--file]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nbformat  # noqa: E402
from catalogue import markdown_table, run_line  # noqa: E402

from nbagent.testing import FakeAnthropicServer, Reply  # noqa: E402
from tests.jupyterlab_server import LAB_OPTIONS, chromium, wait_until  # noqa: E402
from tests.test_browser_notebook import PANEL_READY, run_cell  # noqa: E402
from tests.tools.rtc import KERNEL, jupyter_server  # noqa: E402

EXTENSION = Path(__file__).resolve().parents[1] / "nbagent" / "frontend" / "labextension"

CELLS = [
    "%load_ext nbagent",
    "data = list(range(10))",
    "%%agent -o result\nRead the notebook.",
    "import json\nprint('TIMES' + json.dumps([c.duration for c in result.tool_calls]))",
]

READS = [{}, {"overview": True}, {}]
"""NotebookRead's inputs, in order."""

LAST_OUTPUT = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.toJSON().cells;
    return (cells[cells.length - 1].outputs || []).map(o => o.text || '').join('');
}"""

RESTART = """async () => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    await kernel.restart();
}"""


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    return notebook


def measure(runs: int, with_extension: bool) -> list[list[float]]:
    """Each run's three read times, in seconds."""
    times = []
    with tempfile.TemporaryDirectory() as folder, FakeAnthropicServer() as api:
        base = Path(folder)
        (base / "share" / "labextensions").mkdir(parents=True)
        (base / "share" / "labextensions" / "nbagent-frontend").symlink_to(EXTENSION)
        if not with_extension:
            (base / "config" / "labconfig").mkdir(parents=True)
            disabled = {"disabledExtensions": {"nbagent-frontend": True}}
            (base / "config" / "labconfig" / "page_config.json").write_text(json.dumps(disabled))
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url}
        with jupyter_server(sys.executable, base, LAB_OPTIONS, env=env) as server:
            nbformat.write(make_notebook(), server.root / "bench.ipynb")
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.goto(f"{server.url}lab/tree/bench.ipynb?token={server.token}")
                page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
                for _ in range(runs):
                    page.evaluate(RESTART)
                    page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
                    api.enqueue(*(Reply.tool_use("NotebookRead", r) for r in READS))
                    api.enqueue(Reply.text("Read."))
                    for index in range(len(CELLS)):
                        run_cell(page, index, wait=index == len(CELLS) - 1)
                    said = wait_until(
                        lambda: (
                            "TIMES" in page.evaluate(LAST_OUTPUT) and page.evaluate(LAST_OUTPUT)
                        ),
                        "the times",
                        300,
                    )
                    times.append(json.loads(said.split("TIMES", 1)[1]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh kernels (default 7)")
    parser.add_argument("--quick", action="store_true", help="one kernel (smoke test)")
    parser.add_argument(
        "--file", action="store_true", help="the extension disabled: reads of the file"
    )
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs
    times = measure(runs, not args.file)
    columns = list(zip(*times, strict=True))
    rows = [
        [
            name,
            f"{statistics.median(column) * 1000:.0f} ms",
            f"{min(column) * 1000:.0f} ms",
            f"{max(column) * 1000:.0f} ms",
        ]
        for name, column in zip(
            ["first read (whole notebook)", "second (overview)", "third (whole)"],
            columns,
            strict=True,
        )
    ]
    where = "the notebook JupyterLab shows" if not args.file else "the file (extension disabled)"
    print(run_line(sys.argv))
    print(f"\nRead from {where}; {runs} fresh kernels, each read right after %load_ext.\n")
    print(markdown_table(["NotebookRead", "median", "min", "max"], rows, "lrrr"))


if __name__ == "__main__":
    main()
