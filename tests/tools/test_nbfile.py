"""Notebook files: loading, rendering, validated atomic saves."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from nbagent.errors import ToolError
from nbagent.tools.nbfile import load_notebook, render_cell, render_cells, save_notebook


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


def test_loading_bad_files(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    with pytest.raises(ToolError, match=r"^bad.ipynb is not a readable notebook: "):
        load_notebook(tmp_path / "bad.ipynb", "bad.ipynb")
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
    assert render_cell(cell, 4, running="c", outputs=True, output_chars=1000) == (
        '<cell index="4" id="c" type="code" execution_count="3" running="true">\nx\n</cell>\n'
        '<output type="stream stderr">\nwarning\n</output>\n'
        '<output type="display_data">\n<Figure>\n[image/png output, 4 characters]\n</output>\n'
        '<output type="error">\nValueError: bad\ntb\n</output>\n'
        '<output type="execute_result">\n' + "y" * 50 + "\n</output>"
    )
    assert render_cell(cell, 4, None, outputs=True, output_chars=10).endswith(
        '<output type="execute_result">\nyyyyyyyyyy\n[output cut: 40 more characters]\n</output>'
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
