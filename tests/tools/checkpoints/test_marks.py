"""The agent's mark on the cells it inserted or changed, and what an undo does with it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
from hypothesis import given
from hypothesis import strategies as st

from nbagent.tools.checkpoints.marks import source_mark
from nbagent.tools.checkpoints.undo import undo
from tests.components import require
from tests.tools.checkpoints.test_undo import make_notebook, setup
from tests.tools.helpers import text

FNV_JS = """
function sourceMark(source) {
  let value = 0x811c9dc5;
  for (const char of source) {
    value = Math.imul(value ^ char.codePointAt(0), 0x01000193) >>> 0;
  }
  return value.toString(16).padStart(8, '0');
}
"""


def test_the_mark_is_the_fnv_hash_of_the_source_as_the_extension_computes_it() -> None:
    """The extension's function (src/marks.ts, here as JavaScript) run by Node.js."""
    require(shutil.which("node"), "Node.js (node)", "apt-get install nodejs")
    sources = ["", "a", "x = 1\n# é 😀", "df.plot(kind='bar')"]
    script = FNV_JS + f"console.log(JSON.stringify({json.dumps(sources)}.map(sourceMark)))"
    ran = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(ran.stdout) == [source_mark(source) for source in sources]
    assert source_mark("a") == "e40c292c"  # FNV-1a's published value for "a"


@given(st.text(max_size=40))
def test_the_mark_changes_with_the_source(source: str) -> None:
    assert source_mark(source) != source_mark(source + "x")


def test_inserted_and_edited_cells_are_marked_and_an_undo_puts_the_metadata_back(
    tmp_path: Path,
) -> None:
    tools, log, context = setup(tmp_path)
    path = make_notebook(tmp_path / "a.ipynb")
    log.begin(None, "mark")
    text(tools["NotebookRead"], notebook_path=str(path))
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell1", new_source="y = 1")
    text(
        tools["NotebookEdit"],
        notebook_path=str(path),
        cell_id="cell1",
        edit_mode="insert",
        new_source="z = 2",
    )
    item = log.end()
    cells = nbformat.read(path, as_version=4).cells
    assert cells[1].metadata["nbagent"] == {"changed": "edited", "source": source_mark("y = 1")}
    assert cells[2].metadata["nbagent"] == {"changed": "inserted", "source": source_mark("z = 2")}
    assert item is not None
    undo(context, log, [item])
    cells = nbformat.read(path, as_version=4).cells
    assert [c.source for c in cells] == ["x0 = 0", "x1 = 1", "x2 = 2"]
    assert all("nbagent" not in c.metadata for c in cells)
