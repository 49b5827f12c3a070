"""NotebookRun's overhead over running the same code directly, and the bytes a figure costs.

Starts a real IPython kernel whose notebook is shown by a front end on nbagent's comm: the
test suite's ``FrontEndPeer`` (the extension's protocol over a real kernel subshell), or with
``--browser`` a real JupyterLab with nbagent's extension in Debian's Chromium. Then, inside
the kernel, it times each cell both ways, interleaved: run directly
(``shell.run_cell``, what running it yourself costs) and through the NotebookRun tool (read
the cell from the front end, mark it running, run it with its outputs captured, write them
into the cell, render the result and its images). Medians, and the median of the paired
differences as the overhead. For the figure cell, the PNG's bytes and what the model is sent.

Run: ``python benchmarks/notebook_run.py [--quick] [--browser]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nbformat  # noqa: E402
from catalogue import markdown_table, run_line  # noqa: E402

from tests.frontend_peer import FrontEndPeer  # noqa: E402
from tests.kernels import execute, kernel  # noqa: E402

EXTENSION = Path(__file__).resolve().parents[1] / "nbagent" / "frontend" / "labextension"

CASES = {
    "trivial cell (`x = 1 + 1`)": "x = 1 + 1",
    "one matplotlib figure": (
        "import matplotlib.pyplot as plt\n"
        "plt.figure(figsize=(6, 4))\n"
        "plt.plot(range(100), [i * i for i in range(100)])\n"
        "plt.title('squares')"
    ),
}

IN_KERNEL = """
import json, statistics, time, nbagent
from nbagent.jupyter.session import Session
session = Session.of(get_ipython())
session.ready()
session.frontend.open()
run = nbagent.registry.get("NotebookRun")
shell = get_ipython()
figures = {}
rows = []
for cell_id, code in CELLS.items():
    direct, tool, paired = [], [], []
    for _ in range(REPEAT):
        started = time.perf_counter()
        shell.run_cell(code, store_history=False)
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = run.call({"cell_id": cell_id})
        tool.append(time.perf_counter() - started)
        paired.append(tool[-1] - direct[-1])
    blocks = result.content if isinstance(result.content, list) else []
    sent = sum(len(b["source"]["data"]) for b in blocks if b["type"] == "image")
    medians = [statistics.median(times) for times in (direct, tool, paired)]
    rows.append([cell_id, *medians, sent])
print("ROWS" + json.dumps(rows))
"""


def in_peer(path: Path, cells: dict[str, str], repeat: int) -> tuple[str, str]:
    """Run the timing code in a kernel whose front end is a FrontEndPeer."""
    with kernel({"JPY_SESSION_NAME": str(path)}, cwd=str(path.parent)) as (manager, client):
        execute(client, "%load_ext nbagent\nimport matplotlib.pyplot")
        peer = FrontEndPeer(manager, path)
        try:
            done = execute(client, f"CELLS = {cells!r}\nREPEAT = {repeat}\n{IN_KERNEL}", 300)
        finally:
            peer.close()
        return done.text, peer.cell(list(cells)[-1]).outputs[-1].data["image/png"]


def in_browser(path: Path, cells: dict[str, str], repeat: int) -> tuple[str, str]:
    """Run the timing code as a cell of the notebook open in JupyterLab, in Chromium."""
    from tests.jupyterlab_server import LAB_OPTIONS, chromium
    from tests.test_browser_notebook import PANEL_READY, run_cell, wait_until
    from tests.tools.rtc import KERNEL, jupyter_server

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells.append(nbformat.v4.new_code_cell("%load_ext nbagent\nimport matplotlib"))
    timing = f"CELLS = {cells!r}\nREPEAT = {repeat}\n{IN_KERNEL}"
    notebook.cells.append(nbformat.v4.new_code_cell(timing))
    base = path.parent / "lab"
    if NODELAY:
        (base / "config").mkdir(parents=True)
        (base / "config" / "jupyter_server_config.py").write_text(NODELAY_CONFIG)
    (base / "share" / "labextensions").mkdir(parents=True)
    (base / "share" / "labextensions" / "nbagent-frontend").symlink_to(EXTENSION)
    with jupyter_server(sys.executable, base, LAB_OPTIONS) as server, chromium() as browser:
        nbformat.write(notebook, server.root / path.name)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{server.url}lab/tree/{path.name}?token={server.token}", timeout=90_000)
        page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
        count = len(notebook.cells)
        run_cell(page, count - 2)
        run_cell(page, count - 1)
        script = CELLS_WITH_TEXT.replace("FIGURE", str(len(cells) - 1))
        text, figure = wait_until(lambda: page.evaluate(script), "the timings", timeout=600)
        return text, figure


NODELAY = "--nodelay" in sys.argv
NODELAY_CONFIG = """
import tornado.iostream

_init = tornado.iostream.IOStream.__init__


def _init_nodelay(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.set_nodelay(True)


tornado.iostream.IOStream.__init__ = _init_nodelay
"""

CELLS_WITH_TEXT = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.toJSON().cells;
    const text = (cells[cells.length - 1].outputs || []).map(o => o.text || '').join('');
    if (!text.includes('ROWS')) return null;
    const figure = (cells[FIGURE].outputs || []).map(o => (o.data || {})['image/png']);
    return [text, figure.find(Boolean)];
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs per case (smoke test)")
    parser.add_argument(
        "--browser", action="store_true", help="a real JupyterLab in Chromium as the front end"
    )
    parser.add_argument(
        "--nodelay",
        action="store_true",
        help="with --browser: the server's sockets with TCP_NODELAY (no Nagle delays)",
    )
    args = parser.parse_args()
    repeat = 3 if args.quick else 20
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.ipynb"
        notebook = nbformat.v4.new_notebook()
        ids = {name: f"case{number}" for number, name in enumerate(CASES)}
        notebook.cells = [nbformat.v4.new_code_cell(code, id=ids[n]) for n, code in CASES.items()]
        nbformat.write(notebook, path)
        cells = {ids[name]: code for name, code in CASES.items()}
        text, figure = (in_browser if args.browser else in_peer)(path, cells, repeat)
    line = next((x for x in text.splitlines() if x.startswith("ROWS")), None)
    if line is None:
        raise SystemExit(f"the kernel did not report: {text}")
    names = {code_id: name for name, code_id in ids.items()}
    rows = [
        [
            names[cell_id],
            f"{direct * 1000:.1f} ms",
            f"{tool * 1000:.1f} ms",
            f"{overhead * 1000:.1f} ms",
            f"{sent:,} B" if sent else "–",
        ]
        for cell_id, direct, tool, overhead, sent in json.loads(line[4:])
    ]
    front = "JupyterLab in Chromium" if args.browser else "FrontEndPeer (Python, same protocol)"
    print(run_line(sys.argv))
    print(
        f"\nFront end: {front}. Medians of {repeat} runs each, interleaved; the figure's PNG is "
        f"{len(figure) * 3 // 4:,} bytes ({len(figure):,} as base64 in the notebook).\n"
    )
    print(
        markdown_table(
            ["cell", "run directly", "NotebookRun", "overhead", "image sent to the model"],
            rows,
            "lrrrr",
        )
    )


if __name__ == "__main__":
    main()
