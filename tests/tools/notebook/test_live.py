"""NotebookRead and NotebookEdit through JupyterLab's live document (real-time collaboration).

The fast tests sync with an in-process room (:class:`tests.tools.rtc.FakeRoom`); the slow
ones start a real Jupyter server with jupyter-collaboration and a second Y client that plays
the user's browser.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool
from nbagent.tools.notebook import ysync
from nbagent.tools.notebook.live import MISSING_EXTRA, LiveDocuments
from nbagent.tools.notebook.locate import LIVE
from nbagent.tools.notebook.servers import find_server, parent_server
from nbagent.tools.notebook.ysync import retype
from tests.components import RTC_EXTRA_HOW, RTC_HOW, import_module, require
from tests.tools.helpers import error, text, without_file_note
from tests.tools.rtc import (
    KERNEL,
    RTC_ENV,
    RTC_PYTHON,
    FakeRoom,
    YUser,
    has_collaboration,
    jupyter_server,
    make_notebook,
    saved_sources,
    tools_for,
)

pycrdt = import_module("pycrdt", RTC_EXTRA_HOW)
import_module("jupyter_ydoc", RTC_EXTRA_HOW)


def write_server_file(runtime: Path, root: Path, pid: int, name: str = "", **extra: Any) -> None:
    info = {"url": "http://127.0.0.1:1/", "token": "t", "root_dir": str(root), "pid": pid}
    (runtime / f"jpserver-{name or pid}.json").write_text(json.dumps({**info, **extra}))


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "runtime"
    folder.mkdir()
    return folder


@pytest.fixture
def path(root: Path, runtime: Path) -> Path:
    """A notebook served by a (pretend) Jupyter server: this process, by its runtime file."""
    notebook = root / "analysis.ipynb"
    nbformat.write(make_notebook(), notebook)
    write_server_file(runtime, root, os.getpid())
    return notebook


@pytest.fixture
def room(monkeypatch: pytest.MonkeyPatch) -> FakeRoom:
    room = FakeRoom(make_notebook())
    monkeypatch.setattr(ysync, "open_room", room.open)
    return room


@pytest.fixture
def live(runtime: Path) -> Iterator[LiveDocuments]:
    documents = LiveDocuments(timeout=2.0, runtime_dir=runtime)
    yield documents
    documents.close()


@pytest.fixture
def nb(root: Path, path: Path, room: FakeRoom, live: LiveDocuments) -> dict[str, Tool]:
    return tools_for(root, path, live)


# -- the text edit ---------------------------------------------------------------------------


def y_text(value: str) -> Any:
    document = pycrdt.Doc()
    document["t"] = source = pycrdt.Text(value)
    return source


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_retype_turns_any_text_into_any_other(old: str, new: str) -> None:
    source = y_text(old)
    retype(source, new)
    assert str(source) == new


def test_retype_touches_only_the_span_that_differs() -> None:
    source = y_text("héllo wörld\nsecond line\n")
    changes: list[Any] = []
    source.observe(lambda event: changes.append(event.delta))
    retype(source, "héllo wörld\nthird line\n")
    assert str(source) == "héllo wörld\nthird line\n"
    # One transaction; "héllo wörld\n" is 14 UTF-8 bytes, "d line\n" is kept too.
    assert changes == [[{"retain": 14}, {"delete": 5}, {"insert": "thir"}]]


def test_typing_in_the_same_cell_at_the_same_moment_is_kept() -> None:
    agent, user = pycrdt.Doc(), pycrdt.Doc()
    agent["s"] = pycrdt.Text("x = 1\ny = 2\n")
    user.apply_update(agent.get_update())
    user_text = user.get("s", type=pycrdt.Text)
    agent_state, user_state = agent.get_state(), user.get_state()
    retype(agent.get("s", type=pycrdt.Text), "x = 10\ny = 2\n")
    user_text.insert(len(user_text), "# typed meanwhile\n")
    agent.apply_update(user.get_update(agent_state))
    user.apply_update(agent.get_update(user_state))
    assert str(user_text) == str(agent["s"]) == "x = 10\ny = 2\n# typed meanwhile\n"


# -- finding the server ----------------------------------------------------------------------


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_find_server_picks_a_live_server_whose_root_holds_the_notebook(
    tmp_path: Path, runtime: Path
) -> None:
    notebook = tmp_path / "a" / "b" / "n.ipynb"
    notebook.parent.mkdir(parents=True)
    write_server_file(runtime, tmp_path / "a", os.getpid(), "shallow")
    write_server_file(runtime, tmp_path / "a" / "b", os.getpid(), "deep")
    write_server_file(runtime, tmp_path / "a" / "b", dead_pid(), "dead")
    write_server_file(runtime, tmp_path / "elsewhere", os.getpid(), "other")
    write_server_file(runtime, tmp_path / "a" / "b", os.getpid(), "socket", sock="/tmp/s")
    (runtime / "jpserver-broken.json").write_text("{")
    found = find_server(notebook.resolve(), runtime)
    assert found is not None and found.root_dir == (tmp_path / "a" / "b").resolve()
    assert found.api("api/x", "ws") == "ws://127.0.0.1:1/api/x"
    # The server that started this process wins over a deeper root.
    write_server_file(runtime, tmp_path, os.getppid(), "parent")
    found = find_server(notebook.resolve(), runtime)
    assert found is not None and found.pid == os.getppid()
    assert find_server(tmp_path.parent / "n.ipynb", runtime) is None


def test_the_server_that_started_the_kernel_is_its_parent_process(
    tmp_path: Path, runtime: Path
) -> None:
    assert parent_server(runtime) is None
    write_server_file(runtime, tmp_path / "elsewhere", os.getpid())  # this process: no parent
    assert parent_server(runtime) is None
    write_server_file(runtime, tmp_path, os.getppid())
    found = parent_server(runtime)
    assert found is not None and found.root_dir == tmp_path.resolve()
    write_server_file(runtime, tmp_path, os.getppid(), sock="/tmp/s")  # a Unix socket's
    assert parent_server(runtime) is None


# -- the tools through an in-process room ----------------------------------------------------

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("NotebookEdit", {"cell_id": "sum", "new_source": "x"}),
    ("NotebookRead", {"overview": True}),
    ("NotebookEdit", {"cell_id": "sum", "new_source": "x"}),
    ("NotebookRead", {}),
    ("NotebookEdit", {"cell_id": "nope", "new_source": "x"}),
    ("NotebookEdit", {"cell_id": "agent", "new_source": "x"}),
    ("NotebookEdit", {"cell_id": "agent", "edit_mode": "delete"}),
    ("NotebookEdit", {"cell_id": "sum"}),
    ("NotebookEdit", {"edit_mode": "insert"}),
    ("NotebookEdit", {"edit_mode": "delete"}),
    ("NotebookEdit", {"cell_id": "sum", "new_source": "total = sum(data)\nprint(total)"}),
    ("NotebookEdit", {"cell_id": "load", "new_source": "data = [4]"}),
    ("NotebookEdit", {"cell_id": "intro", "new_source": "print(1)", "cell_type": "code"}),
    ("NotebookEdit", {"cell_id": "load", "new_source": "Data", "cell_type": "markdown"}),
    ("NotebookEdit", {"edit_mode": "insert", "new_source": "# Top", "cell_type": "markdown"}),
    ("NotebookEdit", {"edit_mode": "insert", "cell_id": "sum", "new_source": "a\nb"}),
    ("NotebookEdit", {"cell_id": "sum", "edit_mode": "delete"}),
    ("NotebookEdit", {"cell_id": "sum", "edit_mode": "delete"}),
    ("NotebookRead", {"overview": True}),
]


def run_script(tools: dict[str, Tool]) -> list[str]:
    """Run :data:`SCRIPT`: what the model is told each time (new cell ids as ``<id>``)."""
    said = []
    for name, tool_input in SCRIPT:
        try:
            said.append(tools[name].call(tool_input).content)
        except ToolError as exc:
            said.append(f"error: {exc}")
    return [re.sub(r"\b[0-9a-f]{8}\b", "<id>", line) for line in said]


def test_the_live_path_says_what_the_file_path_says(
    tmp_path: Path, nb: dict[str, Tool], room: FakeRoom
) -> None:
    file_root = tmp_path / "files"
    file_root.mkdir()
    file_path = file_root / "analysis.ipynb"
    nbformat.write(make_notebook(), file_path)
    on_file = run_script(tools_for(file_root, file_path, None))
    on_live = run_script(nb)
    assert [said.replace(f" {LIVE}", "") for said in on_live] == [
        without_file_note(said) for said in on_file
    ]
    assert [LIVE in said for said in on_live] == [name == "NotebookRead" for name, _ in SCRIPT]
    assert sum(said.startswith("error:") for said in on_file) == 9
    saved = nbformat.read(file_path, as_version=4)
    assert [cell[1:] for cell in room.cells()] == [(c.cell_type, c.source) for c in saved.cells]


def test_edits_go_to_the_live_document_and_leave_the_file_to_the_server(
    path: Path, nb: dict[str, Tool], room: FakeRoom
) -> None:
    before = path.read_bytes()
    assert LIVE in text(nb["NotebookRead"])
    said = text(nb["NotebookEdit"], cell_id="sum", new_source="total = sum(data) * 2")
    assert said == "Replaced cell sum in analysis.ipynb (code, 1 line)."
    said = text(nb["NotebookEdit"], edit_mode="insert", cell_id="load", new_source="n = 3")
    new_id = said.split()[3]
    assert room.cells()[2] == (new_id, "code", "n = 3")
    assert room.cells()[3] == ("sum", "code", "total = sum(data) * 2")
    assert path.read_bytes() == before


def test_read_shows_the_live_document_and_counts_as_reading_it(
    path: Path, nb: dict[str, Tool], room: FakeRoom
) -> None:
    """The file lags the live document: Read of the notebook shows what JupyterLab shows."""
    room.type("sum", "  # typed, not saved yet")
    shown = text(nb["Read"], file_path="analysis.ipynb")
    assert LIVE in shown.splitlines()[0]
    assert "total = sum(data)  # typed, not saved yet" in shown
    assert "# typed" not in path.read_text()
    said = text(nb["NotebookEdit"], cell_id="sum", new_source="total = sum(data)  # kept")
    assert said.startswith("Replaced cell sum")


def test_typing_in_other_cells_does_not_block_an_edit(
    path: Path, nb: dict[str, Tool], room: FakeRoom
) -> None:
    text(nb["NotebookRead"])
    room.type("load", "\nmore = 4")
    room.type("intro", " and notes")
    said = text(nb["NotebookEdit"], cell_id="sum", new_source="total = sum(data) + more")
    assert said.startswith("Replaced cell sum")
    assert [source for _, _, source in room.cells()] == [
        "# Analysis and notes",
        "data = [1, 2, 3]\nmore = 4",
        "total = sum(data) + more",
        "%%agent\nTidy up",
    ]


def test_an_edit_of_a_cell_changed_since_it_was_read_is_refused(
    path: Path, nb: dict[str, Tool], room: FakeRoom
) -> None:
    text(nb["NotebookRead"])
    room.type("sum", "  # the user's comment")
    message = error(nb["NotebookEdit"], cell_id="sum", new_source="total = 0")
    assert message == (
        "Cell sum has changed in JupyterLab since it was last read. Read it again with "
        "NotebookRead (cell_id='sum'), then edit it."
    )
    assert error(nb["NotebookEdit"], cell_id="sum", edit_mode="delete") == message
    room.user(lambda notebook: notebook.ycells[1].__setitem__("cell_type", "raw"))
    assert "Cell load has changed" in error(nb["NotebookEdit"], cell_id="load", new_source="x")
    assert "sum(data)  # the user's comment" in text(nb["NotebookRead"], cell_id="sum")
    assert text(nb["NotebookEdit"], cell_id="sum", new_source="total = 0").startswith("Replaced")
    # Its own edit does not make a cell stale.
    assert text(nb["NotebookEdit"], cell_id="sum", new_source="total = 1").startswith("Replaced")


def test_a_dropped_socket_is_opened_again(path: Path, nb: dict[str, Tool], room: FakeRoom) -> None:
    text(nb["NotebookRead"])
    room.drop()
    assert "total = sum(data)" in text(nb["NotebookRead"], cell_id="sum")
    assert room.opened == 2
    room.fail_writes = 1  # the socket drops while the edit is sent: it is made once, anew
    said = text(nb["NotebookEdit"], edit_mode="insert", cell_id="sum", new_source="z = 1")
    assert said.startswith("Inserted code cell")
    assert [source for _, _, source in room.cells()].count("z = 1") == 1
    assert room.opened == 3


def test_a_server_that_hangs_never_hangs_the_tool(
    root: Path, path: Path, room: FakeRoom, runtime: Path
) -> None:
    room.hang = True
    live = LiveDocuments(timeout=0.3, runtime_dir=runtime)
    tools = tools_for(root, path, live)
    started = time.monotonic()
    try:
        read = text(tools["NotebookRead"])
        message = error(tools["NotebookEdit"], cell_id="sum", new_source="x")
    finally:
        live.close()
    assert time.monotonic() - started < 3
    assert "[Read from the file: JupyterLab's live document did not answer (no answer within " in (
        read
    )
    assert message.startswith(
        "JupyterLab's live document of analysis.ipynb did not answer (no answer within 0.3 s). "
        "The notebook was not changed"
    )
    assert nbformat.read(path, as_version=4).cells[2].source == "total = sum(data)"


def test_a_server_without_collaboration_means_the_file_and_is_asked_once(
    monkeypatch: pytest.MonkeyPatch, root: Path, path: Path, live: LiveDocuments
) -> None:
    asked = []

    async def no_collaboration(*args: Any) -> None:
        asked.append(args)
        raise ysync.NotLive("no real-time collaboration", lasting=True)

    monkeypatch.setattr(ysync, "open_room", no_collaboration)
    tools = tools_for(root, path, live)
    assert LIVE not in text(tools["NotebookRead"])
    said = text(tools["NotebookEdit"], cell_id="sum", new_source="total = 0")
    assert said == "Replaced cell sum in analysis.ipynb (code, 1 line)."
    assert nbformat.read(path, as_version=4).cells[2].source == "total = 0"
    assert len(asked) == 1


def test_without_the_rtc_extra_the_file_is_edited_and_the_user_told_once(
    monkeypatch: pytest.MonkeyPatch, root: Path, path: Path, live: LiveDocuments
) -> None:
    async def missing(*args: Any) -> None:
        raise ysync.MissingExtra("No module named 'pycrdt'")

    monkeypatch.setattr(ysync, "open_room", missing)
    tools = tools_for(root, path, live)
    assert "rtc" not in text(tools["NotebookRead"])
    first = text(tools["NotebookEdit"], cell_id="sum", new_source="total = 0")
    assert first == f"Replaced cell sum in analysis.ipynb (code, 1 line).\n\n{MISSING_EXTRA}"
    assert "pip install pycrdt jupyter-ydoc" in MISSING_EXTRA
    second = text(tools["NotebookEdit"], cell_id="sum", new_source="total = 1")
    assert second == "Replaced cell sum in analysis.ipynb (code, 1 line)."


def test_close_ends_the_thread_and_the_sockets(
    path: Path, nb: dict[str, Tool], room: FakeRoom, live: LiveDocuments
) -> None:
    text(nb["NotebookRead"])
    assert any(thread.name == "nbagent-livedoc" for thread in threading.enumerate())
    live.close()
    assert not any(thread.name == "nbagent-livedoc" for thread in threading.enumerate())
    assert all(socket.closed for socket in room.sockets)
    assert "being unloaded" in error(nb["NotebookRead"])


# -- a real Jupyter server with jupyter-collaboration ----------------------------------------


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Jupyter server with jupyter-collaboration, from its own environment."""
    require(
        has_collaboration(RTC_PYTHON), f"a jupyter-collaboration environment at {RTC_ENV}", RTC_HOW
    )
    with jupyter_server(RTC_PYTHON, tmp_path_factory.mktemp("rtc")) as server:
        yield server


@pytest.fixture
def served(request: pytest.FixtureRequest, rtc_server: Any) -> Iterator[tuple[Path, Any]]:
    """A fresh notebook in the server's root, the agent's tools on it, the user's client."""
    name = re.sub(r"\W", "_", request.node.name)[:60] + ".ipynb"
    path = rtc_server.root / name
    nbformat.write(make_notebook(), path)
    live = LiveDocuments(runtime_dir=rtc_server.runtime_dir)
    user = YUser(rtc_server, name)
    try:
        yield path, (tools_for(rtc_server.root, path.resolve(), live), user)
    finally:
        user.close()
        live.close()


@pytest.mark.slow
def test_an_edit_shows_in_the_users_browser_at_once(served: tuple[Path, Any]) -> None:
    path, (tools, user) = served
    assert LIVE in text(tools["NotebookRead"])
    latencies = []
    for step in range(3):
        started = time.perf_counter()
        text(tools["NotebookEdit"], edit_mode="insert", cell_id="load", new_source=f"n = {step}")
        latencies.append(user.wait_for(lambda s, v=f"n = {step}": v in s.values()) - started)
        started = time.perf_counter()
        text(tools["NotebookEdit"], cell_id="sum", new_source=f"total = sum(data) * {step}")
        seen = user.wait_for(lambda s, v=f"* {step}": s["sum"].endswith(v)) - started
        latencies.append(seen)
    assert max(latencies) < 1.0, latencies
    print(f"\nedit -> seen by the user: median {statistics.median(latencies) * 1000:.1f} ms")
    expected = ["# Analysis", "data = [1, 2, 3]", "n = 2", "n = 1", "n = 0"]
    expected += ["total = sum(data) * 2", "%%agent\nTidy up"]
    assert list(user.sources().values()) == expected
    assert saved_sources(path, expected) == expected


@pytest.mark.slow
def test_the_users_typing_meanwhile_is_never_lost(served: tuple[Path, Any]) -> None:
    path, (tools, user) = served
    text(tools["NotebookRead"])
    keys = [f" k{index}" for index in range(40)]
    same_cell = [f" s{index}" for index in range(10)]

    def type_away() -> None:
        for key in keys:
            user.type("intro", key)
            time.sleep(0.005)
        for key in same_cell:
            user.type("sum", key)
            time.sleep(0.005)

    typist = threading.Thread(target=type_away)
    typist.start()
    for step in range(10):
        text(tools["NotebookEdit"], cell_id="load", new_source=f"data = [{step}]")
    for step in range(5):
        try:
            tools["NotebookEdit"].call({"cell_id": "sum", "new_source": f"total = {step}"})
        except ToolError as exc:  # the user typed in it since the agent read it
            assert "Cell sum has changed in JupyterLab" in str(exc)
            text(tools["NotebookRead"], cell_id="sum")
    typist.join()
    user.wait_for(lambda s: s["load"] == "data = [9]" and s["sum"].endswith(" s9"))
    sources = user.sources()
    assert sources["intro"] == "# Analysis" + "".join(keys)
    assert all(key in sources["sum"] for key in same_cell), sources["sum"]
    final = tools["NotebookRead"].call({"cell_id": "sum"}).content
    assert sources["sum"] in final
    assert saved_sources(path, list(sources.values())) == list(sources.values())


@pytest.mark.slow
def test_an_edit_of_a_cell_the_user_changed_is_refused(served: tuple[Path, Any]) -> None:
    _, (tools, user) = served
    text(tools["NotebookRead"])
    user.type("sum", "  # mine")
    agent_sees(tools, lambda notebook: notebook.cells[2].source.endswith("# mine"))
    assert "Cell sum has changed in JupyterLab" in error(
        tools["NotebookEdit"], cell_id="sum", new_source="total = 0"
    )
    said = text(tools["NotebookEdit"], cell_id="load", new_source="data = []")
    assert said.startswith("Replaced cell load")
    user.wait_for(lambda s: s["load"] == "data = []")
    assert user.sources()["sum"] == "total = sum(data)  # mine"


def agent_sees(tools: Any, condition: Any, timeout: float = 5) -> None:
    """Wait until the agent's copy of the live document satisfies a condition."""
    context = tools.context
    document = context.live.route(context.notebook_path()).document
    deadline = time.monotonic() + timeout
    while not condition(document.read()):
        assert time.monotonic() < deadline, "the agent's live document never caught up"
        time.sleep(0.01)


@pytest.mark.slow
def test_without_collaboration_the_file_is_edited(tmp_path: Path) -> None:
    with jupyter_server(sys.executable, tmp_path) as server:
        path = server.root / "plain.ipynb"
        nbformat.write(make_notebook(), path)
        live = LiveDocuments(runtime_dir=server.runtime_dir)
        try:
            tools = tools_for(server.root, path.resolve(), live)
            assert find_server(path.resolve(), server.runtime_dir) is not None
            assert LIVE not in text(tools["NotebookRead"])
            said = text(tools["NotebookEdit"], cell_id="sum", new_source="total = 0")
            assert said == f"Replaced cell sum in {path.name} (code, 1 line)."
            assert nbformat.read(path, as_version=4).cells[2].source == "total = 0"
        finally:
            live.close()


KERNEL_SETUP = """
%load_ext nbagent
%config NbAgent.permission_mode = "acceptEdits"
from nbagent.testing.scripted import offline_unless_api_key
from nbagent.testing import Reply
offline_unless_api_key([
    Reply.tool_use("NotebookRead", {}),
    Reply.tool_use(
        "NotebookEdit",
        {"edit_mode": "insert", "cell_id": "load", "new_source": "mean = sum(data) / len(data)"},
    ),
    Reply.text("I added the mean."),
])
"""

TOOL_RESULTS = """
import json
print(json.dumps([
    block["content"] for message in run.messages if message["role"] == "user"
    for block in message["content"] if isinstance(block, dict) and block["type"] == "tool_result"
]))
"""

THREADS_AFTER_UNLOAD = """
%unload_ext nbagent
import threading
print(sorted(thread.name for thread in threading.enumerate()))
"""


@pytest.mark.slow
def test_the_agent_in_a_kernel_of_the_server_edits_the_live_document(
    served: tuple[Path, Any], rtc_server: Any
) -> None:
    from jupyter_client import BlockingKernelClient

    from tests.tools.test_kernel_tools import run_cell

    path, (_, user) = served
    session = rtc_server.call(
        "POST",
        "api/sessions",
        {"path": path.name, "type": "notebook", "name": path.name, "kernel": {"name": KERNEL}},
    )
    client = BlockingKernelClient(
        connection_file=str(rtc_server.runtime_dir / f"kernel-{session['kernel']['id']}.json")
    )
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        assert run_cell(client, KERNEL_SETUP, "load")[0] == "ok"
        status, _ = run_cell(client, "%%agent -o run\nAdd the mean after the data.", "agent")
        assert status == "ok"
        user.wait_for(lambda s: "mean = sum(data) / len(data)" in s.values())
        assert list(user.sources().values())[1:3] == [
            "data = [1, 2, 3]",
            "mean = sum(data) / len(data)",
        ]
        status, results = run_cell(client, TOOL_RESULTS, "sum")
        read, edit = json.loads(results)
        assert LIVE in read and 'id="agent" type="code" running="true"' in read
        assert edit.startswith("Inserted code cell") and edit.endswith("at index 2.")
        status, threads = run_cell(client, THREADS_AFTER_UNLOAD, "sum")
        assert status == "ok" and "nbagent-livedoc" not in threads
    finally:
        client.stop_channels()
        rtc_server.call("DELETE", f"api/sessions/{session['id']}")


def test_a_runs_outputs_go_into_the_live_cell_while_the_user_types_in_it(
    path: Path, room: FakeRoom, live: LiveDocuments
) -> None:
    from nbagent.tools.notebook.file import CellEdit

    document = live.route(path).document
    assert document is not None
    outputs = (
        {"output_type": "stream", "name": "stdout", "text": "6\n"},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0K"}, "metadata": {}},
    )

    def show(running: bool) -> Any:
        def change(notebook: Any) -> tuple[CellEdit, None]:
            index = notebook.index_of("sum")
            shown = () if running else outputs
            return CellEdit(
                "outputs", index, outputs=shown, execution_count=4, running=running
            ), None

        return change

    document.edit(show(running=True))
    assert room.cell("sum")["execution_state"] == "running"
    room.type("sum", "  # typed meanwhile")
    document.edit(show(running=False))
    cell = room.cell("sum").to_py()
    assert cell["execution_state"] == "idle" and cell["execution_count"] == 4
    assert cell["outputs"] == [dict(o) for o in outputs]
    assert cell["source"] == "total = sum(data)  # typed meanwhile"
    assert document.read().cells[2].outputs[0].text == "6\n"
