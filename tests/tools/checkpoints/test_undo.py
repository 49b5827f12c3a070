"""Checkpoints of the notebook and file tools, and their undo, on real files (no kernel).

A notebook no front end shows is edited in its file, and restored there; the open notebook's
path (through a front end or a live document) is tested in real kernels and browsers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.tools import ToolContext
from nbagent.tools.checkpoints.recording import CheckpointLog, MemoryStore
from nbagent.tools.checkpoints.undo import undo, undo_call
from tests.tools.helpers import LazyTools, text


def make_notebook(path: Path, count: int = 3) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(f"x{i} = {i}", id=f"cell{i}", execution_count=i + 1)
        for i in range(count)
    ]
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    nbformat.write(notebook, path)
    return path


def cells(path: Path) -> list[tuple[str, str, str, Any, Any]]:
    notebook = nbformat.read(path, as_version=4)
    return [
        (c.id, c.cell_type, c.source, c.get("outputs"), c.get("execution_count"))
        for c in notebook.cells
    ]


def setup(tmp_path: Path, limit: int = 50) -> tuple[LazyTools, CheckpointLog, ToolContext]:
    store = MemoryStore()
    log = CheckpointLog(lambda: store, lambda: limit)
    context = ToolContext(root=tmp_path, checkpoints=log)
    return LazyTools(context), log, context


def test_undo_restores_inserted_replaced_and_deleted_cells_and_a_file_exactly(
    tmp_path: Path,
) -> None:
    tools, log, context = setup(tmp_path)
    path = make_notebook(tmp_path / "a.ipynb")
    script = tmp_path / "script.py"
    script.write_text("print(1)\n")
    original, original_bytes = cells(path), script.read_bytes()
    log.begin("agent", "Tidy up")
    text(tools["NotebookRead"], notebook_path=str(path))
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell1", new_source="x1 = 10")
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell0", edit_mode="delete")
    text(
        tools["NotebookEdit"],
        notebook_path=str(path),
        cell_id="cell2",
        edit_mode="insert",
        new_source="# new",
        cell_type="markdown",
    )
    text(
        tools["NotebookEdit"],
        notebook_path=str(path),
        cell_id="cell2",
        new_source="# t",
        cell_type="markdown",
    )
    text(tools["Read"], file_path=str(script))
    text(tools["Edit"], file_path=str(script), old_string="1", new_string="2")
    text(tools["Write"], file_path=str(tmp_path / "new.txt"), content="made")
    item = log.end()
    assert item is not None
    assert item.summary() == "2 cells edited, 1 inserted, 1 deleted, 2 files"
    report = undo(context, log, [item])
    assert not report.outcome.left, report.outcome.left
    assert cells(path) == original
    assert script.read_bytes() == original_bytes
    assert not (tmp_path / "new.txt").exists()
    # Undoing the undo is a redo: the agent's version is back.
    assert report.record is not None
    redo = undo(context, log, [report.record])
    assert not redo.outcome.left
    assert [c[2] for c in cells(path)] == ["x1 = 10", "# t", "# new"]
    assert script.read_text() == "print(2)\n" and (tmp_path / "new.txt").read_text() == "made"
    assert log.get(item.number).undone_by is None  # done again


def test_what_a_person_changed_after_the_agent_is_kept_and_named(tmp_path: Path) -> None:
    tools, log, context = setup(tmp_path)
    path = make_notebook(tmp_path / "a.ipynb")
    script = tmp_path / "s.py"
    script.write_text("a\n")
    log.begin("agent", "Edit")
    text(tools["NotebookRead"], notebook_path=str(path))
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell1", new_source="agent 1")
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell2", new_source="agent 2")
    text(tools["Read"], file_path=str(script))
    text(tools["Write"], file_path=str(script), content="agent\n")
    item = log.end()
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[1].source = "person"  # the person typed in a cell the agent edited
    notebook.cells[0].source = "x0 = 'person'"  # and in one it did not touch
    nbformat.write(notebook, path)
    script.write_text("person\n")
    report = undo(context, log, [item], force_command="%agent undo 1 --force")
    assert [c[2] for c in cells(path)] == ["x0 = 'person'", "person", "x2 = 2"]
    assert script.read_text() == "person\n"
    left = "\n".join(report.outcome.left)
    assert "cell cell1 of a.ipynb: left as it is" in left and "s.py: left as it is" in left
    assert "%agent undo 1 --force" in "\n".join(report.lines())
    forced = undo(context, log, [item], force=True)
    assert [c[2] for c in cells(path)] == ["x0 = 'person'", "x1 = 1", "x2 = 2"]
    assert script.read_text() == "a\n" and not forced.outcome.left


def test_the_undo_button_undoes_one_call_only(tmp_path: Path) -> None:
    tools, log, context = setup(tmp_path)
    path = make_notebook(tmp_path / "a.ipynb")
    log.begin("agent", "Edit")
    text(tools["NotebookRead"], notebook_path=str(path))
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell1", new_source="one")
    text(tools["NotebookEdit"], notebook_path=str(path), cell_id="cell2", new_source="two")
    item = log.end()
    assert item is not None
    first = item.changes[0]
    first.call_id = "toolu_first"  # a call outside the loop has no id: name it as the loop would
    report = undo_call(context, log, "toolu_first")
    assert [c[2] for c in cells(path)] == ["x0 = 0", "x1 = 1", "two"]
    assert "Undid the NotebookEdit call" in report.lines()[0]
    assert "<system-reminder>" in log.take_notes()[0]


def test_checkpoints_are_bounded_by_the_setting(tmp_path: Path) -> None:
    tools, log, _ = setup(tmp_path, limit=2)
    for number in range(4):
        log.begin(None, f"cell {number}")
        text(tools["Write"], file_path=str(tmp_path / f"f{number}.txt"), content="x")
        log.end()
    assert [item.prompt for item in log.checkpoints()] == ["cell 2", "cell 3"]


edits = st.lists(
    st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.integers(min_value=0, max_value=20),
        st.text(alphabet="abc \n", max_size=8),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=edits, typed=st.integers(min_value=0, max_value=20))
def test_undo_of_any_edits_gives_back_every_cell_the_person_did_not_touch(
    tmp_path_factory: Any, steps: list[tuple[str, int, str]], typed: int
) -> None:
    """undo(apply(x)) == x for every cell the person did not change after the agent."""
    folder = tmp_path_factory.mktemp("nb")
    tools, log, context = setup(folder)
    path = make_notebook(folder / "a.ipynb", count=4)
    original = {c[0]: c for c in cells(path)}
    log.begin(None, "edits")
    for mode, pick, source in steps:
        text(tools["NotebookRead"], notebook_path=str(path))
        ids = [c[0] for c in cells(path)]
        if not ids and mode != "insert":
            continue
        cell_id = ids[pick % len(ids)] if ids else None
        tools["NotebookEdit"].call(
            {
                "notebook_path": str(path),
                "cell_id": cell_id,
                "new_source": source,
                "edit_mode": mode,
            }
        )
    item = log.end()
    now = nbformat.read(path, as_version=4)
    touched = None
    if now.cells:  # the person types in one cell after the agent
        touched = now.cells[typed % len(now.cells)]
        touched.source += "# person"
        nbformat.write(now, path)
    if item is not None:
        undo(context, log, [item])
    after = {c[0]: c for c in cells(path)}
    for cell_id, cell in original.items():
        if touched is not None and cell_id == touched.id:
            continue
        assert after.get(cell_id) == cell
    assert [c for c in after if c in original and (touched is None or c != touched.id)] == [
        c for c in original if c in after and (touched is None or c != touched.id)
    ]
