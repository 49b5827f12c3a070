"""Notebook files: loading, rendering, validated atomic saves."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nbagent.core.errors import ToolError
from nbagent.tools.notebook.file import (
    THIS_CELL,
    load_notebook,
    new_cell,
    notebook_from_dict,
    render_cell,
    render_cells,
    save_notebook,
)


def write(path: Path, *cells: nbformat.NotebookNode, minor: int = 5) -> Path:
    notebook = nbformat.v4.new_notebook(nbformat_minor=minor)
    notebook.cells = list(cells)
    if minor < 5:
        for cell in notebook.cells:
            cell.pop("id", None)
    path.write_text(json.dumps(notebook, indent=1))
    return path


def test_old_notebooks_get_ids_and_are_saved_as_4_5(tmp_path: Path) -> None:
    path = write(
        tmp_path / "old.ipynb",
        nbformat.v4.new_markdown_cell("# a"),
        nbformat.v4.new_code_cell("1"),
        minor=4,
    )
    notebook = load_notebook(path, "old.ipynb")
    assert [c.id for c in notebook.cells] == ["cell-0", "cell-1"]
    assert notebook.index_of("cell-1") == 1
    save_notebook(notebook)
    saved = json.loads(path.read_text())
    assert saved["nbformat_minor"] == 5 and [c["id"] for c in saved["cells"]] == [
        "cell-0",
        "cell-1",
    ]
    nbformat.validate(nbformat.read(path, as_version=4))


def test_a_version_4_file_loads_as_nbformat_reads_it_without_importing_nbformat(
    tmp_path: Path,
) -> None:
    outputs = [
        nbformat.v4.new_output("stream", text=["a\n", "b\n"]),
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": ["<Figure", ">"], "image/png": ["iVBO", "Rw=="], "x/y+json": ["k"]},
        ),
        nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["t1", "t2"]),
    ]
    markdown = nbformat.v4.new_markdown_cell(["# A\n", "b"], id="m", metadata={"trusted": True})
    markdown.attachments = {"a.png": {"image/png": ["iVBO", "Rw=="]}}
    path = write(
        tmp_path / "n.ipynb",
        markdown,
        nbformat.v4.new_code_cell(["1\n", "2"], id="c", outputs=outputs),
        nbformat.v4.new_raw_cell(["raw"], id="r"),
    )
    saved = json.loads(path.read_text())
    saved["metadata"].update(orig_nbformat=3, signature="sha256:0")
    path.write_text(json.dumps(saved))
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nbagent.tools.notebook.file import load_notebook\n"
        f"notebook = load_notebook(Path({str(path)!r}), 'n.ipynb')\n"
        "print(sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    loaded = load_notebook(path, "n.ipynb")
    assert loaded.node == nbformat.read(path, as_version=4)
    assert loaded.cells[1].outputs[1].data["image/png"] == "iVBORw=="


def test_a_version_3_file_is_converted_by_nbformat(tmp_path: Path) -> None:
    code = {"cell_type": "code", "input": "x = 1", "language": "python", "outputs": []}
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": []}
    old["worksheets"].append({"cells": [{**code, "metadata": {}}], "metadata": {}})
    (tmp_path / "v3.ipynb").write_text(json.dumps(old))
    notebook = load_notebook(tmp_path / "v3.ipynb", "v3.ipynb")
    assert notebook.node.nbformat == 4 and [c.source for c in notebook.cells] == ["x = 1"]


def test_loading_bad_files(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    with pytest.raises(ToolError, match=r"^bad.ipynb is not a readable notebook: "):
        load_notebook(tmp_path / "bad.ipynb", "bad.ipynb")
    (tmp_path / "list.ipynb").write_text("[]")
    with pytest.raises(ToolError, match=r"^list.ipynb is not a readable notebook: "):
        load_notebook(tmp_path / "list.ipynb", "list.ipynb")
    with pytest.raises(ToolError, match="^Notebook does not exist: gone.ipynb$"):
        load_notebook(tmp_path / "gone.ipynb", "gone.ipynb")


def test_unknown_ids_list_the_ids_there_are(tmp_path: Path) -> None:
    path = write(tmp_path / "n.ipynb", nbformat.v4.new_code_cell("1", id="only"))
    with pytest.raises(ToolError) as caught:
        load_notebook(path, "n.ipynb").index_of("nope")
    assert str(caught.value) == "No cell with id 'nope' in n.ipynb. Its cell ids are: only."


def test_outputs_are_rendered_as_text_and_cut() -> None:
    cell = nbformat.v4.new_code_cell("x", id="c", execution_count=3)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="\x1b[31mwarning\x1b[0m\n"),
        nbformat.v4.new_output(
            "display_data", data={"image/png": "AAAA", "text/plain": "<Figure>"}
        ),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=["tb"]),
        nbformat.v4.new_output("execute_result", data={"text/plain": "y" * 50}, execution_count=3),
    ]
    assert render_cell(cell, 4, None, outputs=True, output_chars=1000) == (
        '<cell index="4" id="c" type="code" execution_count="3">\nx\n</cell>\n'
        '<output type="stream stderr">\nwarning\n</output>\n'
        '<output type="display_data">\n<Figure>\n[image/png output, 4 characters]\n</output>\n'
        '<output type="error">\nValueError: bad\ntb\n</output>\n'
        '<output type="execute_result">\n' + "y" * 50 + "\n</output>"
    )
    # The running agent cell's outputs are its live transcript: named, not shown.
    assert render_cell(cell, 4, running="c", outputs=True, output_chars=1000) == (
        '<cell index="4" id="c" type="code" execution_count="3" running="true">\nx\n</cell>\n'
        + THIS_CELL
    )
    assert render_cell(cell, 4, None, outputs=True, output_chars=10).endswith(
        '<output type="execute_result">\nyyyyyy\n[… 40 characters (0 lines) left out between '
        "the head and the tail; the whole output is cell c's output 4 (RunCode can print "
        "parts)]\nyyyy\n</output>"
    )
    assert render_cell(cell, 4, None, outputs=False, output_chars=10) == (
        '<cell index="4" id="c" type="code" execution_count="3">\nx\n</cell>'
    )


def test_rendering_stops_within_the_budget_but_shows_one_cell(tmp_path: Path) -> None:
    cells = [nbformat.v4.new_code_cell("x" * 100, id=f"c{i}") for i in range(3)]
    notebook = load_notebook(write(tmp_path / "n.ipynb", *cells), "n.ipynb")
    rendering = render_cells(notebook, range(3), None, True, 100, budget=10)
    assert rendering.ids == ("c0",) and rendering.stopped_at == 1
    rendering = render_cells(notebook, range(3), None, True, 100, budget=300)
    assert rendering.ids == ("c0", "c1") and rendering.stopped_at == 2


def test_an_invalid_notebook_is_not_saved(tmp_path: Path) -> None:
    path = write(tmp_path / "n.ipynb", nbformat.v4.new_code_cell("1", id="a"))
    before = path.read_bytes()
    notebook = load_notebook(path, "n.ipynb")
    notebook.cells[0]["cell_type"] = "nonsense"
    with pytest.raises(ToolError, match=r"^The edit was not saved: n.ipynb would not be a valid"):
        save_notebook(notebook)
    assert path.read_bytes() == before


def test_a_file_changed_while_editing_is_not_overwritten(tmp_path: Path) -> None:
    path = write(tmp_path / "n.ipynb", nbformat.v4.new_code_cell("1", id="a"))
    notebook = load_notebook(path, "n.ipynb")
    write(path, nbformat.v4.new_code_cell("2", id="a"), nbformat.v4.new_code_cell("3", id="b"))
    with pytest.raises(ToolError) as caught:
        save_notebook(notebook)
    assert str(caught.value) == (
        "The edit was not saved: n.ipynb changed on disk while it was being edited. Read it "
        "again with NotebookRead, then edit it."
    )
    assert len(json.loads(path.read_text())["cells"]) == 2


def test_a_notebook_a_front_end_sends_is_read_and_given_new_cells_without_nbformat() -> None:
    """nbformat imports jsonschema, whose format checkers compile a grammar for seconds: the
    first read of the notebook JupyterLab shows took 6 to 10 s. That path needs none of it."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nbagent.tools.notebook.file import new_cell, notebook_from_dict, render_cells\n"
        "data = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {}, 'cells': [\n"
        "    {'id': 'a', 'cell_type': 'code', 'source': 'x = 1', 'metadata': {},\n"
        "     'execution_count': 1, 'outputs': [{'output_type': 'stream', 'name': 'stdout',\n"
        "     'text': 'hi'}]}]}\n"
        "notebook = notebook_from_dict(Path('n.ipynb'), data)\n"
        "render_cells(notebook, range(1), None, True, 100, 1000)\n"
        "notebook.cells.append(new_cell('markdown', '# More', {'a'}))\n"
        "print(sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_notebook_from_a_front_end_is_nodes_as_nbformat_makes_them(tmp_path: Path) -> None:
    data = {
        "nbformat": 4,
        "nbformat_minor": 4,
        "metadata": {"kernelspec": {"name": "python3"}},
        "cells": [{"cell_type": "markdown", "source": ["# A", "\nB"], "metadata": {}}],
    }
    notebook = notebook_from_dict(tmp_path / "n.ipynb", data)
    cell = notebook.cells[0]
    assert cell.id == "cell-0" and cell.cell_type == "markdown"
    assert notebook.node.nbformat_minor == 5
    assert notebook.node.metadata.kernelspec.name == "python3"
    cell.source = "changed"
    assert cell["source"] == "changed" and copy.deepcopy(cell) == cell
    with pytest.raises(AttributeError):
        cell.outputs  # noqa: B018 - a missing key is a missing attribute, as in nbformat
    assert data["cells"][0]["source"] == ["# A", "\nB"]  # the answer itself is not changed


@pytest.mark.parametrize("kind", ["code", "markdown", "raw"])
def test_new_cells_are_valid_nbformat_with_an_id_no_other_cell_has(kind: str) -> None:
    ours = new_cell(kind, "text", existing={"a"})
    theirs = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }[kind]("text")
    assert {**ours, "id": theirs.id} == theirs
    assert re.fullmatch(r"[0-9a-f]{8}", ours.id)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [ours, new_cell(kind, "again", {ours.id}, id="b", metadata={"tags": ["t"]})]
    nbformat.validate(notebook)
    assert notebook.cells[1].id == "b" and notebook.cells[1].metadata.tags == ["t"]
