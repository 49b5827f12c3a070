"""NotebookRead and NotebookEdit on real notebooks in a temporary folder; finding the notebook."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool
from nbagent.frontend.channel import FrontEndChannel
from nbagent.policy.combining import decide
from nbagent.policy.decisions import PermissionDecision
from nbagent.policy.permissions import PermissionPolicy
from nbagent.tools import ToolContext
from nbagent.tools.notebook.locate import NO_NOTEBOOK, find_notebook, running_cell_id
from tests.frontend_peer import RecordingComm, hello
from tests.tools.helpers import (
    LazyTools,
    call,
    error,
    save_around_the_swap,
    summary,
    text,
    without_file_note,
)


def make_notebook(path: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    load = nbformat.v4.new_code_cell(
        "import pandas as pd\ndf = pd.DataFrame()", id="load", execution_count=1
    )
    plot = nbformat.v4.new_code_cell("df.plot()", id="plot", execution_count=2)
    plot.outputs = [
        nbformat.v4.new_output(
            "display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"}
        )
    ]
    agent = nbformat.v4.new_code_cell("%%agent\nTidy this notebook", id="agent")
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Analysis\nSome words.", id="intro"),
        load,
        plot,
        agent,
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def notebook(root: Path) -> Path:
    return make_notebook(root / "analysis.ipynb")


@pytest.fixture
def nb_tools(root: Path, notebook: Path) -> dict[str, Tool]:
    context = ToolContext(root=root, notebook_path=lambda: notebook, cell_id=lambda: "agent")
    return LazyTools(context)


def cells_of(path: Path) -> list[dict[str, Any]]:
    """The cells as saved (sources as lists of lines)."""
    return json.loads(path.read_text())["cells"]


def source(path: Path, index: int) -> str:
    return "".join(cells_of(path)[index]["source"])


def touch_later(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


# Finding the notebook ------------------------------------------------------------------


def test_finding_the_notebook_in_order(
    tmp_path: Path, shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, third = (make_notebook(tmp_path / f"{n}.ipynb") for n in ("a", "b", "c"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    for name in ("__session__", "__vsc_ipynb_file__"):
        shell.user_ns.pop(name, None)
    assert find_notebook(shell) is None
    shell.user_ns["__vsc_ipynb_file__"] = str(third)
    assert find_notebook(shell) == third
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/dir/b.ipynb")  # relative to a server root
    assert find_notebook(shell) == second
    shell.user_ns["__session__"] = "a.ipynb"
    assert find_notebook(shell) == first
    assert find_notebook(shell, explicit="~/x.ipynb") == Path("~/x.ipynb").expanduser().resolve()
    shell.user_ns["__session__"] = "console-1-5b1e"  # a console's session name is no notebook
    assert find_notebook(shell) == second


@pytest.fixture
def channel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FrontEndChannel:
    """A channel to front ends, without a kernel: they speak through ``_on_message``."""
    monkeypatch.setattr(
        "nbagent.frontend.comm.open_comm", lambda target, on_message: RecordingComm()
    )
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))  # no server's file
    channel = FrontEndChannel(greeting_wait=0)
    channel.open()
    return channel


def test_the_notebook_is_the_one_the_front_end_shows_renamed_or_moved(
    tmp_path: Path, shell: Any, channel: FrontEndChannel, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    untitled = make_notebook(root / "work" / "Untitled.ipynb")
    monkeypatch.setenv("JPY_SESSION_NAME", str(untitled))  # as the server starts the kernel
    for name in ("__session__", "__vsc_ipynb_file__"):
        shell.user_ns.pop(name, None)
    channel._on_message(hello(path="work/Untitled.ipynb"))
    assert find_notebook(shell, frontend=channel) == untitled.resolve()
    renamed = untitled.rename(root / "work" / "sales.ipynb")
    make_notebook(untitled)  # a new notebook takes the free name
    channel._on_message({"op": "path", "client": "tab", "path": "work/sales.ipynb"})
    assert find_notebook(shell, frontend=channel) == renamed.resolve()
    moved = renamed.rename(root / "sales.ipynb")
    channel._on_message({"op": "path", "client": "tab", "path": "sales.ipynb"})
    assert find_notebook(shell, frontend=channel) == moved.resolve()
    channel.open()  # the front end does not answer now: what it said last still holds
    assert find_notebook(shell, frontend=channel) == moved.resolve()
    assert find_notebook(shell) == untitled.resolve()  # the name the kernel started with


def test_a_shell_without_a_kernel_has_no_running_cell(shell: Any) -> None:
    assert running_cell_id(shell) is None
    assert running_cell_id(None) is None


def test_without_a_notebook_the_tools_say_so(tools: dict[str, Tool]) -> None:
    assert error(tools["NotebookRead"]) == NO_NOTEBOOK
    assert error(tools["NotebookEdit"], cell_id="x", new_source="") == NO_NOTEBOOK
    assert NO_NOTEBOOK == (
        "No notebook is open: nbagent could not find this kernel's notebook (no notebook "
        "setting, no __session__ or JPY_SESSION_NAME, no __vsc_ipynb_file__). Pass "
        "notebook_path to name one."
    )


# NotebookRead --------------------------------------------------------------------------


def test_the_running_cell_is_shown_as_this_cell_not_as_its_widget(root: Path) -> None:
    path = make_notebook(root / "analysis.ipynb")
    notebook = nbformat.read(path, as_version=4)
    widget = {
        "text/plain": "VBox(children=(HTML(value='', layout=Layout(display='none')),))",
        "application/vnd.jupyter.widget-view+json": {"model_id": "m", "version_major": 2},
    }
    notebook.cells[3].outputs = [nbformat.v4.new_output("display_data", data=widget)]
    nbformat.write(notebook, path)
    context = ToolContext(root=root, notebook_path=lambda: path, cell_id=lambda: "agent")
    read = LazyTools(context)["NotebookRead"]
    said = text(read)
    assert "VBox" not in said and "widget" not in said
    assert said.endswith(
        '<cell index="3" id="agent" type="code" running="true">\n%%agent\nTidy this notebook\n'
        "</cell>\n[This cell: it runs %%agent, and its output is this conversation.]"
    )
    assert text(read, overview=True).endswith(
        "   3  agent  code      %%agent  (+1 lines)  [running: this agent]"
    )


def test_a_notebook_open_where_nbagent_cannot_see_it_is_read_from_its_file_and_said_so(
    root: Path, notebook: Path, channel: FrontEndChannel
) -> None:
    context = ToolContext(root=root, notebook_path=lambda: notebook, frontend=channel)
    said = text(LazyTools(context)["NotebookRead"], overview=True)
    assert said.startswith("Notebook analysis.ipynb: 4 cells, kernel python3. [")
    assert "analysis.ipynb is open but nbagent cannot see it: this is its file, saved" in said
    assert "what was typed there since is not included" in said
    assert "`jupyter labextension enable nbagent-frontend`" in said


def test_an_open_notebook_whose_file_has_no_cells_is_not_read_as_empty(
    root: Path, channel: FrontEndChannel
) -> None:
    path = root / "Untitled.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)  # a new notebook, not saved yet
    context = ToolContext(root=root, notebook_path=lambda: path, frontend=channel)
    old = {"app": "JupyterLab", "version": "4.2.5", "extension": "0.2.0"}
    channel._on_message(hello(versions=old, subshell=False))
    said = error(LazyTools(context)["NotebookRead"])
    assert said.startswith(
        "Untitled.ipynb is open but nbagent cannot see it, and its file (saved 0 s ago) has no "
        "cells: what the notebook shows has not been saved. JupyterLab 4.2.5 is older than "
        "nbagent supports: it needs JupyterLab 4.4 or Notebook 7.4 (or newer)"
    )
    assert "0 cells" not in said


def test_read_the_whole_notebook(nb_tools: dict[str, Tool]) -> None:
    assert without_file_note(text(nb_tools["NotebookRead"])) == (
        "Notebook analysis.ipynb: 4 cells, kernel python3. Cell agent runs this agent: it "
        "cannot be edited.\n"
        '<cell index="0" id="intro" type="markdown">\n# Analysis\nSome words.\n</cell>\n'
        '<cell index="1" id="load" type="code" execution_count="1">\n'
        "import pandas as pd\ndf = pd.DataFrame()\n</cell>\n"
        '<cell index="2" id="plot" type="code" execution_count="2">\ndf.plot()\n</cell>\n'
        '<output type="display_data">\n<Figure>\n'
        "[image/png output not sent: its data is not base64]\n</output>\n"
        '<cell index="3" id="agent" type="code" running="true">\n%%agent\nTidy this notebook\n'
        "</cell>"
    )
    assert summary(nb_tools["NotebookRead"]) == "4 cells"


def test_overview_range_and_single_cell(nb_tools: dict[str, Tool]) -> None:
    read = nb_tools["NotebookRead"]
    assert without_file_note(text(read, overview=True)) == (
        "Notebook analysis.ipynb: 4 cells, kernel python3. Cell agent runs this agent: it "
        "cannot be edited. Overview (index, id, type, first line):\n"
        "   0  intro  markdown  # Analysis  (+1 lines)\n"
        "   1  load  code      import pandas as pd  (+1 lines)\n"
        "   2  plot  code      df.plot()  [1 output]\n"
        "   3  agent  code      %%agent  (+1 lines)  [running: this agent]"
    )
    assert summary(read, overview=True) == "overview of 4 cells"
    assert summary(read, overview=True, start=2) == "overview of cells 2-3 of 4"
    assert summary(read, start=1, count=1, outputs=False) == "cells 1-1 of 4"
    assert summary(read, cell_id="plot") == "1 cell"
    out = text(read, start=1, count=1, outputs=False)
    assert out.endswith(
        '<cell index="1" id="load" type="code" execution_count="1">\nimport pandas as pd\n'
        "df = pd.DataFrame()\n</cell>\n[Cells 1-1 of 4 shown. Read on with start=2.]"
    )
    assert text(read, cell_id="plot", outputs=False).endswith(
        '<cell index="2" id="plot" type="code" execution_count="2">\ndf.plot()\n</cell>'
    )


def test_read_errors(nb_tools: dict[str, Tool]) -> None:
    read = nb_tools["NotebookRead"]
    assert error(read, cell_id="nope") == (
        "No cell with id 'nope' in analysis.ipynb. Its cell ids are: intro, load, plot, agent."
    )
    assert error(read, start=9) == (
        "analysis.ipynb has 4 cells (indices 0 to 3); start=9 is out of range."
    )
    assert error(read, start=0, count=0) == (
        "analysis.ipynb has 4 cells (indices 0 to 3); start=0, count=0 is out of range."
    )
    assert error(read, notebook_path="notes.txt") == "notes.txt is not a notebook (.ipynb file)."
    assert error(read, notebook_path="other.ipynb") == "Notebook does not exist: other.ipynb"


# NotebookEdit --------------------------------------------------------------------------


def test_replace_keeps_every_other_cell_and_output(
    nb_tools: dict[str, Tool], notebook: Path
) -> None:
    before = cells_of(notebook)
    text(nb_tools["NotebookRead"])
    result = call(nb_tools["NotebookEdit"], cell_id="plot", new_source="df.plot(kind='bar')")
    assert result.metadata["summary"] == "replaced: +1 -1"
    assert result.content == (
        "Replaced cell plot in analysis.ipynb (code, 1 line). Its outputs are from the old "
        "source until the cell runs again."
    )
    after = cells_of(notebook)
    expected = copy.deepcopy(before)
    expected[2]["source"] = ["df.plot(kind='bar')"]
    # The cell is marked as the agent's until a person edits it.
    expected[2]["metadata"]["nbagent"] = {"changed": "edited", "source": "4f1e0927"}
    assert after == expected
    nbformat.validate(nbformat.read(notebook, as_version=4))


def test_insert_after_a_cell_and_at_the_top(nb_tools: dict[str, Tool], notebook: Path) -> None:
    text(nb_tools["NotebookRead"], overview=True)
    edit = nb_tools["NotebookEdit"]
    result = call(edit, edit_mode="insert", cell_id="agent", new_source="print('done')")
    new_id = cells_of(notebook)[4]["id"]
    assert result.content == (
        f"Inserted code cell {new_id} (1 line) after cell agent of analysis.ipynb, at index 4."
    )
    assert result.metadata["summary"] == f"inserted cell {new_id} below it"
    result = call(edit, edit_mode="insert", new_source="Intro", cell_type="markdown")
    top = cells_of(notebook)[0]
    assert result.content == (
        f"Inserted markdown cell {top['id']} (1 line) at the top of analysis.ipynb, at index 0."
    )
    assert result.metadata["summary"] == f"inserted markdown cell {top['id']} at the top"
    assert [c["id"] for c in cells_of(notebook)] == [
        top["id"],
        "intro",
        "load",
        "plot",
        "agent",
        new_id,
    ]
    # A cell the agent inserted counts as read: it may edit it at once.
    text(edit, cell_id=new_id, new_source="print('really done')")
    assert source(notebook, 5) == "print('really done')"


def test_delete_and_change_of_type(nb_tools: dict[str, Tool], notebook: Path) -> None:
    text(nb_tools["NotebookRead"])
    edit = nb_tools["NotebookEdit"]
    result = call(edit, cell_id="plot", edit_mode="delete")
    assert result.content == (
        "Deleted code cell plot (1 line, with its 1 output) from analysis.ipynb."
    )
    assert result.metadata["summary"] == "deleted"
    result = call(edit, cell_id="load", new_source="Loading *data*", cell_type="markdown")
    assert result.content == "Replaced cell load in analysis.ipynb (code to markdown, 1 line)."
    assert result.metadata["summary"] == "replaced: code to markdown, +1 -2"
    cells = cells_of(notebook)
    assert [(c["id"], c["cell_type"]) for c in cells] == [
        ("intro", "markdown"),
        ("load", "markdown"),
        ("agent", "code"),
    ]
    assert error(edit, cell_id="plot", new_source="x") == (
        "No cell with id 'plot' in analysis.ipynb. Its cell ids are: intro, load, agent."
    )


def test_edits_need_a_read_and_a_fresh_one(nb_tools: dict[str, Tool], notebook: Path) -> None:
    edit = nb_tools["NotebookEdit"]
    assert error(edit, cell_id="load", new_source="x") == (
        "analysis.ipynb has not been read yet. Read it with NotebookRead first, then edit it."
    )
    text(nb_tools["NotebookRead"], overview=True)
    assert error(edit, cell_id="load", new_source="x") == (
        "Cell load has not been read yet. Read it with NotebookRead (cell_id='load') first, "
        "then edit it."
    )
    text(nb_tools["NotebookRead"], cell_id="load")
    saved = nbformat.read(notebook, as_version=4)
    saved.cells[0].source = "# Changed by the user"
    nbformat.write(saved, str(notebook))
    touch_later(notebook)
    assert error(edit, cell_id="load", new_source="x") == (
        "analysis.ipynb has changed on disk since it was last read (saved by Jupyter or edited "
        "elsewhere). Read it again with NotebookRead, then edit it."
    )
    assert source(notebook, 0) == "# Changed by the user"


def test_a_notebook_gone_or_made_unreadable_since_it_was_read_has_changed(
    nb_tools: dict[str, Tool], notebook: Path
) -> None:
    edit = nb_tools["NotebookEdit"]
    changed = (
        "analysis.ipynb has changed on disk since it was last read (saved by Jupyter or edited "
        "elsewhere). Read it again with NotebookRead, then edit it."
    )
    text(nb_tools["NotebookRead"])
    notebook.write_text("{ half a save")
    assert error(edit, cell_id="load", new_source="x") == changed
    notebook.unlink()
    assert error(edit, edit_mode="insert", new_source="x") == changed


def test_an_unreadable_notebook_written_by_the_model_is_named_unreadable(
    root: Path, nb_tools: dict[str, Tool]
) -> None:
    """Not "changed": the file is exactly what the model wrote (with Write) and read."""
    text(nb_tools["Write"], file_path="draft.ipynb", content="not json")
    message = error(
        nb_tools["NotebookEdit"], notebook_path="draft.ipynb", new_source="x", edit_mode="insert"
    )
    assert message.startswith("draft.ipynb is not a readable notebook: ")


def test_the_running_cell_cannot_be_edited(nb_tools: dict[str, Tool], notebook: Path) -> None:
    text(nb_tools["NotebookRead"])
    edit = nb_tools["NotebookEdit"]
    assert error(edit, cell_id="agent", new_source="x") == (
        "Cell agent is the cell running this agent: it cannot be replaced while it runs. "
        "Insert a new cell instead."
    )
    assert error(edit, cell_id="agent", edit_mode="delete") == (
        "Cell agent is the cell running this agent: it cannot be deleted while it runs. "
        "Insert a new cell instead."
    )
    assert source(notebook, 3) == "%%agent\nTidy this notebook"


def test_edit_input_errors(nb_tools: dict[str, Tool]) -> None:
    text(nb_tools["NotebookRead"])
    edit = nb_tools["NotebookEdit"]
    assert error(edit, new_source="x") == "cell_id is required to replace a cell."
    assert error(edit, edit_mode="delete") == "cell_id is required to delete a cell."
    assert error(edit, cell_id="load") == "new_source is required to replace a cell."
    assert error(edit, edit_mode="insert") == "new_source is required to insert a cell."
    assert error(edit, cell_id="load", new_source="x", edit_mode="move").startswith(
        "Invalid input for tool NotebookEdit:\n- `edit_mode`:"
    )


def test_other_notebooks_by_path_and_the_root_rule(root: Path, nb_tools: dict[str, Tool]) -> None:
    other = make_notebook(root / "sub" / "other.ipynb")
    text(nb_tools["NotebookRead"], notebook_path="sub/other.ipynb")
    # Not the open notebook: its "agent" cell is just a cell.
    assert (
        text(
            nb_tools["NotebookEdit"],
            notebook_path="sub/other.ipynb",
            cell_id="agent",
            edit_mode="delete",
        )
        == "Deleted code cell agent (2 lines) from sub/other.ipynb."
    )
    assert len(cells_of(other)) == 3
    policy = PermissionPolicy("acceptEdits", root=root)
    make_notebook(root.parent / "elsewhere.ipynb")
    text(nb_tools["NotebookRead"])
    text(nb_tools["NotebookRead"], notebook_path="../elsewhere.ipynb")
    edit = {"cell_id": "load", "new_source": "x"}
    for name, tool_input in (("NotebookRead", {}), ("NotebookEdit", edit)):
        assert decide(nb_tools[name], tool_input, policy).behavior == "allow"
        outside = {**tool_input, "notebook_path": "../elsewhere.ipynb"}
        decision = decide(nb_tools[name], outside, policy)
        assert decision.behavior == "ask" and decision.rule == "outside the working folder"


def asked_about(tool: Tool, root: Path, **tool_input: Any) -> PermissionDecision:
    """What the agent decides about a call in the default mode (before anyone is asked)."""
    return decide(tool, tool_input, PermissionPolicy("default", root=root))


def test_the_question_shows_the_new_code_the_diff_or_the_source_deleted(
    root: Path, nb_tools: dict[str, Tool], notebook: Path
) -> None:
    text(nb_tools["NotebookRead"])
    edit, before = nb_tools["NotebookEdit"], notebook.read_bytes()
    cases = [
        (
            {"edit_mode": "insert", "cell_id": "load", "new_source": "df.describe()"},
            "insert a code cell after cell load in analysis.ipynb",
            "```python\ndf.describe()\n```",
        ),
        (
            {"edit_mode": "insert", "new_source": "# Notes", "cell_type": "markdown"},
            "insert a markdown cell at the top of analysis.ipynb",
            "```markdown\n# Notes\n```",
        ),
        (
            {"cell_id": "load", "new_source": "import pandas as pd\ndf = pd.read_csv('s.csv')"},
            "replace cell load in analysis.ipynb",
            "```diff python\n@@ -1,2 +1,2 @@\n import pandas as pd\n-df = pd.DataFrame()\n"
            "+df = pd.read_csv('s.csv')\n```",
        ),
        (
            {"cell_id": "plot", "new_source": "A *plot*", "cell_type": "markdown"},
            "replace cell plot (code to markdown) in analysis.ipynb",
            "```diff markdown\n@@ -1 +1 @@\n-df.plot()\n+A *plot*\n```",
        ),
        (
            {"cell_id": "plot", "edit_mode": "delete"},
            "delete code cell plot, with its 1 output from analysis.ipynb",
            "```python\ndf.plot()\n```",
        ),
        (
            {"cell_id": "plot", "new_source": "df.plot()"},
            "replace cell plot in analysis.ipynb, its source unchanged",
            "",
        ),
    ]
    for tool_input, request, question in cases:
        decision = asked_about(edit, root, **tool_input)
        assert (decision.behavior, decision.request, decision.message) == (
            "ask",
            request,
            question,
        )
        assert decision.always == "NotebookEdit"
    assert notebook.read_bytes() == before  # deciding edited nothing
    # Where the mode lets edits run, the question's words change nothing.
    policy = PermissionPolicy("acceptEdits", root=root)
    assert decide(edit, cases[0][0], policy).behavior == "allow"


def test_an_edit_that_cannot_be_made_is_refused_before_anyone_is_asked(
    root: Path, nb_tools: dict[str, Tool]
) -> None:
    edit = nb_tools["NotebookEdit"]
    unread = "analysis.ipynb has not been read yet. Read it with NotebookRead first, then edit it."
    with pytest.raises(ToolError) as failed:
        asked_about(edit, root, cell_id="load", new_source="x")
    assert str(failed.value) == unread
    text(nb_tools["NotebookRead"])
    refusals = {
        "No cell with id 'gone' in analysis.ipynb. Its cell ids are: intro, load, plot, agent.": {
            "cell_id": "gone",
            "new_source": "x",
        },
        "Cell agent is the cell running this agent: it cannot be deleted while it runs. "
        "Insert a new cell instead.": {"cell_id": "agent", "edit_mode": "delete"},
        "new_source is required to insert a cell.": {"edit_mode": "insert"},
    }
    for mode in ("default", "bypassPermissions"):
        policy = PermissionPolicy(mode, root=root)
        for message, tool_input in refusals.items():
            with pytest.raises(ToolError) as failed:
                decide(edit, tool_input, policy)
            assert str(failed.value) == message


UUIDS = (
    "0f3c9a2e-5b7d-4e1a-9c8b-2d4f6a8b0c1e",
    "0f3c9a2e-77aa-4e1a-9c8b-2d4f6a8b0c1e",
    "9d8e7f6a-1111-4222-8333-944455556666",
)


def test_a_cell_is_found_by_the_start_of_its_id_when_no_other_shares_it(root: Path) -> None:
    path = root / "lab.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"x = {i}", id=u) for i, u in enumerate(UUIDS)]
    nbformat.write(notebook, path)
    tools = LazyTools(ToolContext(root=root, notebook_path=lambda: path, cell_id=lambda: None))
    assert f'id="{UUIDS[2]}"' in text(tools["NotebookRead"], cell_id="9d8e7f6a")
    result = call(tools["NotebookEdit"], cell_id="9d8e7f6a-11", new_source="x = 20")
    assert result.content == f"Replaced cell {UUIDS[2]} in lab.ipynb (code, 1 line)."
    assert source(path, 2) == "x = 20"
    result = call(tools["NotebookEdit"], edit_mode="insert", cell_id="9d8e7f6a", new_source="y")
    assert f"after cell {UUIDS[2]} of lab.ipynb, at index 3." in result.content
    assert error(tools["NotebookEdit"], cell_id="0f3c9a2e", edit_mode="delete") == (
        f"The ids of 2 cells of lab.ipynb start with '0f3c9a2e': {UUIDS[0]}, {UUIDS[1]}. "
        "Give the whole id."
    )
    assert error(tools["NotebookRead"], cell_id="9d8e7f").startswith(
        "No cell with id '9d8e7f' in lab.ipynb."  # too short to stand for an id
    )
    assert len(cells_of(path)) == 4


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("edits")


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.integers(0, 20),
        st.text(alphabet="ab \n", max_size=6),
    ),
    max_size=8,
)


@settings(max_examples=30, deadline=None)
@given(ops=_OPS)
def test_edit_sequences_match_a_list_model(scratch: Path, ops: list[tuple[str, int, str]]) -> None:
    """Any sequence of edits does to the notebook what it does to a list, outputs kept."""
    path = make_notebook(scratch / "seq.ipynb")
    tools = LazyTools(ToolContext(root=scratch, notebook_path=lambda: path, cell_id=lambda: None))
    text(tools["NotebookRead"])
    model = [(c["id"], "".join(c["source"]), c.get("outputs")) for c in cells_of(path)]
    for mode, pick, new_source in ops:
        if mode == "insert":
            after = model[pick % len(model)][0] if model and pick % 3 else None
            text(tools["NotebookEdit"], edit_mode="insert", cell_id=after, new_source=new_source)
            new_id = next(c["id"] for c in cells_of(path) if c["id"] not in {m[0] for m in model})
            position = 0 if after is None else [m[0] for m in model].index(after) + 1
            model.insert(position, (new_id, new_source, []))
        elif model:
            index = pick % len(model)
            cell_id, _, outputs = model[index]
            text(tools["NotebookEdit"], edit_mode=mode, cell_id=cell_id, new_source=new_source)
            if mode == "delete":
                del model[index]
            else:
                model[index] = (cell_id, new_source, outputs)
    assert [(c["id"], "".join(c["source"]), c.get("outputs")) for c in cells_of(path)] == model
    nbformat.validate(nbformat.read(str(path), as_version=4))


def test_a_save_over_the_edited_notebook_in_its_instant_is_reported(
    nb_tools: dict[str, Tool], notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program saves after the check and again onto the just-swapped-in edit: its
    last save is what the file holds, and the model is told the edit may not be in it."""
    text(nb_tools["NotebookRead"])
    first, second = (nbformat.read(notebook, as_version=4) for _ in range(2))
    first.cells[0].source, second.cells[0].source = "# first save", "# second save"
    save_around_the_swap(
        notebook, monkeypatch, nbformat.writes(first).encode(), nbformat.writes(second).encode()
    )
    assert error(nb_tools["NotebookEdit"], edit_mode="insert", new_source="x") == (
        "The edit may not be in analysis.ipynb: another program saved it at the moment the edit "
        "was written, and the file now holds that save (made from the edited notebook or not). "
        "Read it again with NotebookRead to see, then edit it."
    )
    assert source(notebook, 0) == "# second save"


def test_read_returns_figures_as_images_and_names_the_rest(root: Path) -> None:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (320, 200), "steelblue").save(buffer, "PNG")
    png = base64.b64encode(buffer.getvalue()).decode()
    notebook = nbformat.v4.new_notebook()
    figures = nbformat.v4.new_code_cell("plot()", id="figs")
    figures.outputs = [
        nbformat.v4.new_output("display_data", {"image/png": png, "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", {"image/svg+xml": "<svg/>", "text/plain": "svg"}),
    ]
    notebook.cells = [figures]
    path = root / "figures.ipynb"
    nbformat.write(notebook, path)
    context = ToolContext(root=root, notebook_path=lambda: path)
    result = call(LazyTools(context)["NotebookRead"])
    assert isinstance(result.content, list) and not result.is_error
    said, image = result.content
    assert "<Figure>\n[image 1: image/png, 320×200]" in said["text"]
    assert "[image/svg+xml output not sent: the API takes PNG, JPEG, GIF, WebP]" in said["text"]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png},
    }
    assert result.metadata["summary"] == "1 cell, 1 image"
