"""Checkpoints kept on disk beside a notebook's conversations: read back by a new kernel's log."""

from __future__ import annotations

from pathlib import Path

from nbagent.store.checkpoints import CONTENTS, LOG_NAME, notebook_checkpoints
from nbagent.store.folders import notebook_folder
from nbagent.tools.checkpoints.model import Change


def test_a_log_saved_by_one_kernel_is_read_by_the_next_with_its_file_contents(
    tmp_path: Path,
) -> None:
    notebook = str(tmp_path / "work" / "a.ipynb")
    first = notebook_checkpoints(lambda: notebook, lambda: 10, root=tmp_path / "store")
    first.begin("cell1", "Make a file\nmore")
    first.record_file(str(tmp_path / "f.txt"), b"old", b"new", "Write", "toolu_1")
    cell = {"id": "c", "cell_type": "code", "source": "x", "outputs": [], "execution_count": 1}
    first.record(Change("cell", notebook, "NotebookEdit", cell_id="c", before=None, after=cell))
    first.end()
    first.tell("<system-reminder>\nundone\n</system-reminder>")
    folder = notebook_folder(notebook, tmp_path / "store")
    assert (folder / LOG_NAME).is_file() and len(list((folder / CONTENTS).iterdir())) == 2

    second = notebook_checkpoints(lambda: notebook, lambda: 10, root=tmp_path / "store")
    [item] = second.checkpoints()
    assert (item.number, item.cell_id, item.prompt) == (1, "cell1", "Make a file")
    assert item.summary() == "1 cell inserted, 1 file"
    change = item.changes[0]
    assert second.content(change.before) == b"old" and second.content(change.after) == b"new"
    assert second.take_notes() == ["<system-reminder>\nundone\n</system-reminder>"]
    second.begin(None, "next")
    second.record_file(str(tmp_path / "g.txt"), None, b"g", "Write")
    assert [i.number for i in second.checkpoints()] == [1, 2]


def test_contents_no_kept_checkpoint_names_are_removed(tmp_path: Path) -> None:
    notebook = str(tmp_path / "a.ipynb")
    log = notebook_checkpoints(lambda: notebook, lambda: 1, root=tmp_path)
    for number in range(3):
        log.begin(None, str(number))
        log.record_file(str(tmp_path / "f"), f"v{number}".encode(), f"w{number}".encode(), "Edit")
        log.end()
    kept = {path.name for path in (notebook_folder(notebook, tmp_path) / CONTENTS).iterdir()}
    assert kept == log.checkpoints()[0].blobs() and len(kept) == 2
