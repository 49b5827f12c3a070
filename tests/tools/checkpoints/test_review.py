"""What an edit's card opens on: a cell's or a file's diff, an inserted or deleted cell whole."""

from __future__ import annotations

from nbagent.core.events import ToolCallFinished, ToolCallStarted
from nbagent.render.transcript.model import Transcript
from nbagent.tools.checkpoints.model import Change
from nbagent.tools.checkpoints.review import UNTRACKED_REVIEW, cell_review, file_review


def cell(source: str, kind: str = "code") -> dict:
    return {"id": "abcdef123456", "cell_type": kind, "source": source, "metadata": {}}


def test_a_replaced_cell_shows_its_source_before_and_after_as_a_diff() -> None:
    change = Change("cell", "/n/a.ipynb", "NotebookEdit", cell_id="abcdef123456")
    change.before, change.after = cell("x = 1\ny = 2"), cell("x = 1\ny = 3")
    assert cell_review(change, "a.ipynb") == (
        "Replaced cell abcdef12 of a.ipynb:\n```diff python\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n"
        "+y = 3\n```"
    )


def test_inserted_and_deleted_cells_show_whole() -> None:
    inserted = Change("cell", "/n/a.ipynb", "NotebookEdit", cell_id="abcdef123456")
    inserted.after = cell("# Title", "markdown")
    assert cell_review(inserted, "a.ipynb") == (
        "Inserted markdown cell abcdef12 of a.ipynb:\n```diff markdown\n@@ -0,0 +1,1 @@\n"
        "+# Title\n```"
    )
    deleted = Change("cell", "/n/a.ipynb", "NotebookEdit", cell_id="abcdef123456")
    deleted.before = cell("a\nb")
    assert "Deleted code cell abcdef12" in cell_review(deleted, "a.ipynb")
    assert "-a\n-b" in cell_review(deleted, "a.ipynb")


def test_a_file_shows_its_unified_diff_and_a_new_file_whole() -> None:
    assert file_review("s.py", b"a\nb\n", b"a\nc\n") == (
        "Changed s.py:\n```diff text\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n```"
    )
    assert file_review("n.txt", None, b"hi").startswith("Created n.txt:\n```diff text")
    assert "not text" in file_review("b.bin", b"\xff", b"\xfe")


def test_the_card_opens_on_the_diff_in_html_and_markdown() -> None:
    transcript = Transcript()
    transcript.apply(ToolCallStarted("t1", "Edit", {"file_path": "s.py"}))
    review = file_review("s.py", b"a\n", b"b\n")
    transcript.apply(ToolCallFinished("t1", "Edit", "ok", "Edited s.py", 0.1, review=review))
    html = transcript.to_markdown()
    assert 'class="nbagent-review"' in html and "Changed s.py:" in html
    assert "background:color-mix" in html  # the added and removed lines tinted
    assert 'class="nbagent-input"' not in html  # the diff shows what the input asked
    transcript.apply(ToolCallStarted("t2", "Bash", {"command": "make"}))
    transcript.apply(ToolCallFinished("t2", "Bash", "ok", "done", 0.1, review=UNTRACKED_REVIEW))
    html = transcript.to_markdown()
    assert "%agent undo does not take back" in html and "make" in html
