"""Notebook safety: the user and the agent editing one notebook, and a kernel killed mid-write.

The user is another process that saves the ``.ipynb`` as Jupyter does (the whole file as
indented JSON, written to a temporary file and renamed over the old one). After every
scenario the file is read back with nbformat, validated, and every cell is compared by id and
source: none may be lost.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools import ToolContext, builtin_tools
from tests.kernels import kernel
from tests.reliability.helpers import FIGURES, bodies, tool_results

ORIGINAL = [(f"orig-{i}", f"# original cell {i}\nvalue_{i} = {i}") for i in range(5)]
"""The cells the notebook starts with: (id, source)."""

USER = """\
import json, os, sys, time

path, mode, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
saved, conflicts = [], 0
while len(saved) < count:
    before = open(path, "rb").read()
    stat = os.stat(path)
    notebook = json.loads(before)
    cell_id = f"{prefix}{len(saved)}"
    cell = {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": f"note {cell_id}"}
    notebook["cells"].append(cell)
    temp = f"{path}.user-{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as stream:
        json.dump(notebook, stream, indent=1, ensure_ascii=False)
        stream.flush()
        os.fsync(stream.fileno())
    if mode == "hammer" and open(path, "rb").read() != before:
        os.unlink(temp)  # changed since it was read, as Jupyter's "file changed" check sees
        conflicts += 1
        continue
    os.replace(temp, path)
    if mode == "hammer":
        time.sleep(0.005)  # a save every few milliseconds, still far faster than any user
    if mode == "same-tick":  # a filesystem whose clock did not tick between the two saves
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    saved.append(cell_id)
print(json.dumps({"saved": saved, "conflicts": conflicts}))
"""
"""The user's Jupyter: ``python -c USER notebook.ipynb MODE COUNT PREFIX`` appends COUNT
markdown cells ``note PREFIX<n>`` with ids ``PREFIX<n>``.

Modes: ``once`` (save), ``same-tick`` (save, and the file's mtime is as it was, as on a
filesystem with a coarse clock), ``hammer`` (save every 5 ms, skipping a save when the file
changed since it was read).
"""


def user_saves(path: Path, mode: str, count: int, prefix: str = "user-") -> dict[str, Any]:
    """Run the user's process to its end; return what it saved."""
    done = subprocess.run(
        [sys.executable, "-c", USER, str(path), mode, str(count), prefix],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def make_notebook(path: Path, extra_source: str = "") -> Path:
    """Write the original cells, with an mtime ten seconds in the past."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(source + extra_source, id=cell_id) for cell_id, source in ORIGINAL
    ]
    nbformat.write(notebook, path)
    past = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(past, past))
    return path


def cells(path: Path) -> list[tuple[str, str]]:
    """Read the notebook back, validate it, and return its cells as (id, source)."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return [(cell.id, cell.source) for cell in notebook.cells]


def notebook_tools(path: Path) -> tuple[Tool, Tool]:
    """NotebookRead and NotebookEdit on ``path``, as the open notebook."""
    context = ToolContext(root=path.parent, notebook_path=lambda: path)
    read, edit = builtin_tools(context, ["NotebookRead", "NotebookEdit"])
    return read, edit


def insert(edit: Tool, source: str) -> str:
    """Insert a code cell at the top; return its id."""
    message = edit.call({"edit_mode": "insert", "new_source": source}).content
    assert isinstance(message, str) and message.startswith("Inserted code cell ")
    return message.split()[3]


def test_a_user_save_between_read_and_edit_is_refused_then_merged(tmp_path: Path) -> None:
    """Through the agent loop: the user saves while the model decides; the edit is refused,
    the model reads again, and its second edit keeps the user's cell."""
    path = make_notebook(tmp_path / "analysis.ipynb")
    saved: list[dict[str, Any]] = []

    def user_saves_then_edit(body: dict[str, Any]) -> Reply:
        saved.append(user_saves(path, "once", 1))
        return Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": "agent 1"})

    edit_again = Reply.tool_use("NotebookEdit", {"edit_mode": "insert", "new_source": "agent 2"})
    script = [
        Reply.tool_use("NotebookRead", {"overview": True}),
        user_saves_then_edit,
        Reply.tool_use("NotebookRead", {"overview": True}),
        edit_again,
        Reply.text("Done."),
    ]
    with FakeAnthropicServer(script) as api:
        agent = Agent(registry=ToolRegistry(notebook_tools(path)), client=api.client())
        result = agent.run("Add a cell.")
        api.assert_no_errors()
    assert result.text == "Done."
    assert [c.status for c in result.tool_calls] == ["ok", "error", "ok", "ok"]
    refused = tool_results(bodies(api)[2]["messages"][-1])[0]
    assert refused["is_error"] is True
    assert refused["content"] == (
        "analysis.ipynb has changed on disk since it was last read (saved by Jupyter or edited "
        "elsewhere). Read it again with NotebookRead, then edit it."
    )
    after = cells(path)
    assert saved == [{"saved": ["user-0"], "conflicts": 0}]
    assert [source for _, source in after] == [
        "agent 2",
        *[source for _, source in ORIGINAL],
        "note user-0",
    ]
    assert [cell_id for cell_id, _ in after][1:] == [*[i for i, _ in ORIGINAL], "user-0"]


def test_an_edit_and_a_user_save_in_turn_keep_every_cell(tmp_path: Path) -> None:
    """The agent edits, the user saves, the agent's next edit is refused until it reads again:
    after three rounds every cell of both is there, in order."""
    path = make_notebook(tmp_path / "turns.ipynb")
    read, edit = notebook_tools(path)
    expected = list(ORIGINAL)
    for turn in range(3):
        read.call({"overview": True})
        expected.insert(0, (insert(edit, f"agent {turn}"), f"agent {turn}"))
        time.sleep(0.05)  # the clock ticks between the two saves
        user_saves(path, "once", 1, prefix=f"user{turn}-")
        expected.append((f"user{turn}-0", f"note user{turn}-0"))
        with pytest.raises(ToolError, match="has changed on disk since it was last read"):
            insert(edit, "refused")
        assert cells(path) == expected


def save_during_the_edit(path: Path, mode: str) -> tuple[Tool, Tool]:
    """NotebookRead and NotebookEdit on ``path``; the user saves while an edit runs.

    The edit asks for the running cell's id after it has loaded the notebook and before it
    writes it: the user's process saves the file right then, once.
    """
    context = ToolContext(root=path.parent, notebook_path=lambda: path)
    read, edit = builtin_tools(context, ["NotebookRead", "NotebookEdit"])
    read.call({"cell_id": "orig-0"})
    pending = [mode]

    def running_cell() -> None:
        if pending:
            user_saves(path, pending.pop(), 1)

    context.cell_id = running_cell
    return read, edit


def test_a_user_save_while_an_edit_runs_is_never_overwritten(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "window.ipynb")
    _, edit = save_during_the_edit(path, "once")
    with pytest.raises(ToolError) as refused:
        edit.call({"cell_id": "orig-0", "new_source": "changed by the agent"})
    assert str(refused.value) == (
        "The edit was not saved: window.ipynb changed on disk while it was being edited. Read "
        "it again with NotebookRead, then edit it."
    )
    assert cells(path) == [*ORIGINAL, ("user-0", "note user-0")]


def test_a_user_save_within_the_same_clock_tick_is_never_overwritten(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "tick.ipynb")
    _, edit = save_during_the_edit(path, "same-tick")
    with pytest.raises(ToolError, match="changed on disk while it was being edited"):
        edit.call({"cell_id": "orig-0", "new_source": "changed by the agent"})
    assert cells(path) == [*ORIGINAL, ("user-0", "note user-0")]


@pytest.mark.slow
def test_concurrent_saves_neither_corrupt_the_notebook_nor_lose_a_cell(tmp_path: Path) -> None:
    """The agent edits in a loop while the user's process saves 150 times and a third reader
    checks the file all along: it always parses and validates, and keeps the original cells.

    No save of the user's is ever lost. An agent's edit refused with "may not be in" can be
    in the file (the user's save was made from it) or not. The user's process checks the file
    and then renames over it, as Jupyter does: an agent save landing in between is
    overwritten by the user's own save; that is counted in the figures, and the agent's next
    edit is refused as stale, so the model reads the notebook again.
    """
    path = make_notebook(tmp_path / "busy.ipynb")
    read, edit = notebook_tools(path)
    user = subprocess.Popen(
        [sys.executable, "-c", USER, str(path), "hammer", "150", "user-"],
        stdout=subprocess.PIPE,
        text=True,
    )
    reads: list[int] = []
    problems: list[str] = []
    stop = threading.Event()

    def check_all_along() -> None:
        while not stop.is_set():
            try:
                found = cells(path)
            except Exception as error:  # any failure to read is a corrupted file
                problems.append(repr(error))
                continue
            if not set(ORIGINAL) <= set(found):
                problems.append(f"original cells missing: {found[:3]}")
            reads.append(len(found))

    reader = threading.Thread(target=check_all_along)
    reader.start()
    agent_cells: list[tuple[str, str]] = []
    uncertain: set[str] = set()
    refused = 0
    read.call({"overview": True})
    try:
        while user.poll() is None:
            source = f"agent {len(agent_cells)}.{refused}"
            try:
                agent_cells.append((insert(edit, source), source))
            except ToolError as error:
                refused += 1
                if "may not be in" in str(error):
                    uncertain.add(source)
                read.call({"overview": True})
    finally:
        stop.set()
        reader.join()
        out, _ = user.communicate(timeout=60)
    user_cells = json.loads(out)["saved"]
    assert problems == [] and len(reads) > 50
    final = cells(path)
    assert set(ORIGINAL) <= set(final)
    assert len({cell_id for cell_id, _ in final}) == len(final)
    known = set(ORIGINAL) | set(agent_cells) | {(u, f"note {u}") for u in user_cells}
    unknown = {cell for cell in set(final) - known if cell[1] not in uncertain}
    assert unknown == set(), "every cell is an original, an agent's or a user's, whole"
    ids = {cell_id for cell_id, _ in final}
    lost_user = [cell_id for cell_id in user_cells if cell_id not in ids]
    assert lost_user == [], "no save of the user's is overwritten"
    lost_agent = [cell_id for cell_id, _ in agent_cells if cell_id not in ids]
    FIGURES["concurrent saves"] = (
        f"{len(agent_cells)} agent edits saved ({refused} refused as stale, {len(uncertain)} "
        f"of them 'may not be in'), {len(user_cells)} user saves, {len(reads)} reads all "
        f"valid; user cells overwritten: 0; agent cells overwritten by the user's own "
        f"check-then-rename: {len(lost_agent)}"
    )


KERNEL_LOOP = """\
from pathlib import Path
from nbagent.tools import ToolContext, builtin_tools
path = Path({path!r})
read, edit = builtin_tools(
    ToolContext(root=path.parent, notebook_path=lambda: path), ["NotebookRead", "NotebookEdit"]
)
read.call({{"overview": True}})
for i in range(100_000):
    edit.call({{"edit_mode": "insert", "new_source": f"agent {{i}}\\n" + "#" * 2_000}})
    print(f"saved {{i}}", flush=True)
"""


@pytest.mark.slow
def test_killing_the_kernel_mid_write_loses_no_cell(tmp_path: Path) -> None:
    """SIGKILL while NotebookEdit writes a 2 MB notebook: the kill comes the moment a save's
    temporary file appears (mid-write). The notebook is the last save or the one before,
    whole, and every save reported before the kill is in it; the next save removes the
    temporary file the killed kernel left."""
    path = make_notebook(tmp_path / "crash.ipynb", extra_source="\n# padding" + "." * 400_000)
    with kernel(cwd=str(tmp_path)) as (manager, client):
        msg_id = client.execute(KERNEL_LOOP.format(path=str(path)))
        reported: list[int] = []
        deadline = time.monotonic() + 60
        while len(reported) < 10 and time.monotonic() < deadline:
            try:
                message = client.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "error":
                pytest.fail("\n".join(message["content"]["traceback"]))
            if message["msg_type"] == "stream":
                lines = message["content"]["text"].split("\n")
                reported += [int(line.split()[1]) for line in lines if line]
        while time.monotonic() < deadline and not any(tmp_path.glob(".crash.ipynb.*.tmp")):
            pass
        os.kill(manager.provisioner.pid, signal.SIGKILL)
        manager.provisioner.process.wait(10)
    assert len(reported) >= 10
    final = cells(path)
    agent = [source.split("\n")[0] for _, source in final if source.startswith("agent ")]
    saved = [int(line.split()[1]) for line in agent]
    assert saved == list(range(len(saved) - 1, -1, -1))
    assert set(reported) <= set(saved), "every save reported before the kill is in the file"
    originals = [(i, source.split("\n# padding")[0]) for i, source in final[len(saved) :]]
    assert originals == ORIGINAL
    leftovers = list(tmp_path.glob(".crash.ipynb.*.tmp"))
    assert len(leftovers) <= 1
    FIGURES["kernel killed mid-write"] = (
        f"{len(reported)} saves reported, {len(saved)} in the file; temporary files left by "
        f"the kill: {len(leftovers)} ({', '.join(f'{p.stat().st_size:,} B' for p in leftovers)}),"
        " removed by the next save"
    )
    read, edit = notebook_tools(path)
    read.call({"overview": True})
    insert(edit, "after the crash")
    assert cells(path)[0][1] == "after the crash"
    assert list(tmp_path.glob(".crash.ipynb.*.tmp")) == [], "the next save removes the leftover"
