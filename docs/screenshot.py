"""Take the README's picture, docs/_static/cell.png: the ``%%agent`` cell of
example_notebooks/03_dataframe_analysis.ipynb, run offline (its scripted model) in a real
JupyterLab on 127.0.0.1, in Debian's Chromium.

Run from a clone, in ``.venv`` after ``pip install -e '.[test]'``:
``python docs/screenshot.py`` (``--dark`` for JupyterLab's dark theme, ``-o PATH`` elsewhere).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.jupyterlab_server import chromium, jupyterlab  # noqa: E402

NOTEBOOK = ROOT / "example_notebooks" / "03_dataframe_analysis.ipynb"

READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return Boolean(panel && panel.context.isReady && kernel && kernel.status === 'idle');
}"""

AGENT_CELL = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        if (cells.get(i).sharedModel.getSource().startsWith('%%agent')) return i;
    }
    return -1;
}"""

ALL_RAN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        if (cell.type === 'code' && cell.executionCount === null) return false;
    }
    return panel.sessionContext.session.kernel.status === 'idle';
}"""


def main() -> None:
    """Run the notebook in JupyterLab and save the picture of its agent cell."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs/_static/cell.png")
    parser.add_argument("--dark", action="store_true", help="JupyterLab's dark theme")
    args = parser.parse_args()
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    with tempfile.TemporaryDirectory(prefix="nbagent-screenshot-") as folder:
        root = Path(folder) / "lab"
        root.mkdir()
        shutil.copy(NOTEBOOK, root / "sales.ipynb")
        os.environ.pop("ANTHROPIC_API_KEY", None)
        with jupyterlab(root, env=env) as lab, chromium() as browser:
            page = browser.new_page(viewport={"width": 1100, "height": 1400}, device_scale_factor=2)
            page.goto(lab.page("lab/tree/sales.ipynb"))
            page.wait_for_function(READY, timeout=120_000, polling=200)
            page.evaluate("window.jupyterapp.shell.collapseLeft()")
            theme = "JupyterLab Dark" if args.dark else "JupyterLab Light"
            page.evaluate(
                f"window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})"
            )
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            time.sleep(2)
            try:
                page.wait_for_function(ALL_RAN, timeout=300_000, polling=250)
            except Exception:
                page.screenshot(path=str(args.output.with_suffix(".failed.png")), full_page=True)
                raise
            news = page.get_by_role("button", name="No", exact=True)
            if news.count():
                news.first.click()
            index = page.evaluate(AGENT_CELL)
            cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
            cell.scroll_into_view_if_needed()
            page.evaluate("document.activeElement && document.activeElement.blur()")
            cell.screenshot(path=str(args.output))
    print(f"Saved {args.output}")


if __name__ == "__main__":
    main()
