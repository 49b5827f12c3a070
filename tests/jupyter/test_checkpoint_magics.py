"""Checkpoints and undo in real kernels, with a front end showing the notebook (FrontEndPeer).

The agent inserts, replaces and deletes cells of the notebook the user sees and writes a file;
``%agent undo`` puts them back exactly through the front end (the notebook's file is never
written), keeps what the person typed since, tells the model at its next turn, and works after
a kernel restart; ``%agent rewind N --conversation`` cuts the conversation back too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.frontend_peer import FrontEndPeer
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow


def make_notebook(path: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    other = nbformat.v4.new_code_cell("y = 2\nprint(y)", id="other", execution_count=3)
    other.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell("data = [3, 1, 4]", id="data"),
        other,
        nbformat.v4.new_code_cell("%%agent\nTidy up.", id="agent"),
    ]
    nbformat.write(notebook, path)
    return path


def tidy_up(fake_api: FakeAnthropicServer) -> None:
    """Script: read, insert a cell, replace one, delete one, write a file, answer."""
    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {}),
        Reply.tool_use(
            "NotebookEdit", {"edit_mode": "insert", "cell_id": "data", "new_source": "data.sort()"}
        ),
        Reply.tool_use("NotebookEdit", {"cell_id": "intro", "new_source": "# Revenue"}),
        Reply.tool_use("NotebookEdit", {"cell_id": "other", "edit_mode": "delete"}),
        Reply.tool_use("Write", {"file_path": "notes.txt", "content": "sorted\n"}),
        Reply.text("Tidied."),
    )


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    return make_notebook(tmp_path / "analysis.ipynb")


@pytest.fixture
def env(notebook: Path, fake_api: FakeAnthropicServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(notebook),
    }


@pytest.fixture
def session(notebook: Path, env: dict[str, str]) -> Iterator[tuple[Any, Any]]:
    with kernel(env, cwd=str(notebook.parent)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        yield manager, client


def agent_cell(client: Any, prompt: str = "Tidy up.") -> Any:
    run = execute(client, f"%%agent\n{prompt}", stdin=lambda prompt: "y", cell_id="agent")
    assert run.status == "ok", run.error
    return run


def test_undo_restores_cells_and_files_exactly_and_keeps_the_persons_typing(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    saved = notebook.read_bytes()
    peer = FrontEndPeer(manager, notebook)
    try:
        before = [(c.id, c.cell_type, c.source, c.get("outputs")) for c in peer.notebook.cells]
        tidy_up(fake_api)
        agent_cell(client)
        assert [c.source for c in peer.notebook.cells][:3] == [
            "# Revenue",
            "data = [3, 1, 4]",
            "data.sort()",
        ]
        assert (notebook.parent / "notes.txt").read_text() == "sorted\n"
        listed = execute(client, "%agent checkpoints")
        assert "2 cells edited" not in listed.text
        assert "1 cell edited, 1 inserted, 1 deleted, 1 file" in listed.text
        peer.type("data", "\n# typed by the person")  # a cell the agent did not touch
        undone = execute(client, "%agent undo")
        assert undone.status == "ok", undone.error
        assert "Undid checkpoint 1" in undone.text
        after = [(c.id, c.cell_type, c.source, c.get("outputs")) for c in peer.notebook.cells]
        expected = [
            (i, t, s + "\n# typed by the person" if i == "data" else s, o) for i, t, s, o in before
        ]
        assert after == expected  # outputs of the deleted cell included
        assert not (notebook.parent / "notes.txt").exists()
        assert notebook.read_bytes() == saved  # never written behind the front end
        # The model hears of it at its next turn, before the prompt, in the same message.
        fake_api.enqueue(Reply.text("Noted."))
        agent_cell(client, "Go on.")
        content = fake_api.requests[-1].body["messages"][-1]["content"]
        texts = [block.get("text") or "" for block in content]
        [told] = [t for t in texts if t.startswith("<system-reminder>\nThe user undid changes")]
        assert "cell intro of analysis.ipynb: its source restored" in told
        assert "Go on." in texts
        # Undo of the undo: the agent's version is back.
        redone = execute(client, "%agent redo")
        assert redone.status == "ok", redone.error
        assert [c.source for c in peer.notebook.cells][:3] == [
            "# Revenue",
            "data = [3, 1, 4]\n# typed by the person",
            "data.sort()",
        ]
        assert (notebook.parent / "notes.txt").read_text() == "sorted\n"
    finally:
        peer.close()


def test_a_cell_the_person_changed_after_the_agent_is_left_until_forced(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    try:
        tidy_up(fake_api)
        agent_cell(client)
        peer.type("intro", " (checked)")
        undone = execute(client, "%agent undo")
        assert "Left as they are (1)" in undone.text
        assert "cell intro of analysis.ipynb: left as it is" in undone.text
        assert "%agent undo 1 --force" in undone.text
        assert peer.cell("intro").source == "# Revenue (checked)"
        assert [c.id for c in peer.notebook.cells] == ["intro", "data", "other", "agent"]
        forced = execute(client, "%agent undo 1 --force")
        assert forced.status == "ok", forced.error
        assert peer.cell("intro").source == "# Sales"
    finally:
        peer.close()


def test_undo_after_a_kernel_restart(
    notebook: Path, env: dict[str, str], fake_api: FakeAnthropicServer
) -> None:
    with kernel(env, cwd=str(notebook.parent)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        peer = FrontEndPeer(manager, notebook)
        try:
            tidy_up(fake_api)
            agent_cell(client)
            edited = peer.notebook
        finally:
            peer.close()
    shown = notebook.parent / "shown.ipynb"  # what the user sees, carried to the new kernel
    nbformat.write(edited, shown)
    with kernel(env, cwd=str(notebook.parent)) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        peer = FrontEndPeer(manager, shown, path=notebook.name)
        try:
            listed = execute(client, "%agent checkpoints")
            assert "Tidy up." in listed.text
            undone = execute(client, "%agent undo")
            assert undone.status == "ok", undone.error
            assert [c.source for c in peer.notebook.cells][:3] == [
                "# Sales",
                "data = [3, 1, 4]",
                "y = 2\nprint(y)",
            ]
            assert not (notebook.parent / "notes.txt").exists()
        finally:
            peer.close()


def test_rewind_with_the_conversation_cuts_it_back_to_before_that_cell(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    try:
        fake_api.enqueue(Reply.text("Hello."))
        agent_cell(client, "Hi.")
        tidy_up(fake_api)
        agent_cell(client)
        fake_api.enqueue(
            Reply.tool_use("Bash", {"command": "true"}),
            Reply.tool_use("Write", {"file_path": "more.txt", "content": "more"}),
            Reply.text("More."),
        )
        agent_cell(client, "More.")
        listed = execute(client, "%agent checkpoints")
        assert "Bash not tracked" in listed.text
        rewound = execute(client, "%agent rewind 1 --conversation")
        assert rewound.status == "ok", rewound.error
        assert "Undid checkpoints 1 to 2" in rewound.text
        assert "Bash ran" in rewound.text and "not undone" in rewound.text
        assert "The conversation is back to before checkpoint 1" in rewound.text
        assert [c.source for c in peer.notebook.cells][0] == "# Sales"
        assert not (notebook.parent / "more.txt").exists()
        length = execute(
            client,
            "print(len(__import__('nbagent').jupyter.session.Session.of(get_ipython()).agent.messages))",
        )
        assert length.text.strip() == "2"  # Hi. and Hello.
    finally:
        peer.close()


CLICK = """
import gc
panel = [w for w in gc.get_objects() if type(w).__name__ == "UndoPanel"][-1]
rows = {row.children[1].value: row.children[0] for row in panel.children[1:-1]}
[button] = [b for label, b in rows.items() if NEEDLE in label]
button.click()
print(sorted(rows))
"""


def test_the_undo_button_of_an_edit_takes_back_that_edit_only_and_undo_all_the_rest(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    try:
        tidy_up(fake_api)
        run = agent_cell(client)
        panel = [
            o["data"]["text/plain"]
            for o in run.outputs
            if "nbagent: " in o.get("data", {}).get("text/plain", "")
        ]
        assert panel == [
            "nbagent: 1 cell edited, 1 inserted, 1 deleted, 1 file (%agent undo takes them back)"
        ]
        clicked = execute(client, CLICK.replace("NEEDLE", repr("cell intro")))
        assert clicked.status == "ok", clicked.error
        assert "NotebookEdit · cell intro of analysis.ipynb · edited" in clicked.text
        sources = [c.source for c in peer.notebook.cells]
        assert sources[0] == "# Sales" and "data.sort()" in sources  # that edit only
        everything = execute(
            client, "panel.children[0].children[1].click()\nprint(panel.children[-1].value)"
        )
        assert everything.status == "ok", everything.error
        assert "Undid checkpoint 1" in everything.text  # shown in the panel
        assert [c.id for c in peer.notebook.cells] == ["intro", "data", "other", "agent"]
        assert not (notebook.parent / "notes.txt").exists()
    finally:
        peer.close()


def test_undo_of_a_run_gives_the_cell_its_outputs_and_count_back(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    try:
        before = peer.cell("other")
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookRun", {"cell_id": "other"}),
            Reply.text("Ran."),
        )
        agent_cell(client, "Run it.")
        ran = peer.cell("other")
        assert ran.execution_count != before.execution_count
        undone = execute(client, "%agent undo")
        assert "its outputs restored" in undone.text
        assert "does not run anything" in undone.text
        restored = peer.cell("other")
        assert restored.outputs == before.outputs
        assert restored.execution_count == before.execution_count
    finally:
        peer.close()


def test_review_mode_keeps_an_accepted_edit_and_undoes_a_rejected_one_telling_why(
    notebook: Path, session: tuple[Any, Any], fake_api: FakeAnthropicServer
) -> None:
    manager, client = session
    peer = FrontEndPeer(manager, notebook)
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        if "Review: keep this NotebookEdit" in prompt:
            assert peer.cell("intro").source == "# Revenue"  # made first, where it is seen
            return "n"
        return "keep the title" if prompt.startswith("Why") else "y"

    try:
        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use("NotebookEdit", {"cell_id": "intro", "new_source": "# Revenue"}),
            Reply.tool_use("Write", {"file_path": "notes.txt", "content": "sorted\n"}),
            Reply.text("Done."),
        )
        run = execute(client, "%%agent --review\nTidy up.", stdin=answer, cell_id="agent")
        assert run.status == "ok", run.error
        assert peer.cell("intro").source == "# Sales"
        assert (notebook.parent / "notes.txt").read_text() == "sorted\n"
        reviews = [p for p in asked if "Review: keep" in p]
        assert len(reviews) == 2 and "-# Sales\n+# Revenue" in reviews[0]
        rejected = fake_api.requests[2].body["messages"][-1]["content"][-1]
        assert rejected["is_error"]
        assert "rejected this change and it was undone: keep the title" in str(rejected["content"])
        # Without --review (and c.NbAgent.review off) nothing is asked beyond permissions.
        asked.clear()
        fake_api.enqueue(
            Reply.tool_use("NotebookEdit", {"cell_id": "intro", "new_source": "# Sales 2"}),
            Reply.text("Done."),
        )
        execute(client, "%%agent\nAgain.", stdin=answer, cell_id="agent")
        assert not [p for p in asked if "Review" in p]
    finally:
        peer.close()
