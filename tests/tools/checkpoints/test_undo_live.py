"""Undo through JupyterLab's live document (an in-process collaboration room, as in
tests/tools/notebook/test_live.py): any sequence of the agent's edits, then typing by the
user in one cell, then undo gives back every cell the user did not touch, outputs included."""

from __future__ import annotations

import json
import os
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.tools import ToolContext
from nbagent.tools.checkpoints.recording import CheckpointLog, MemoryStore
from nbagent.tools.checkpoints.undo import undo
from nbagent.tools.notebook import ysync
from nbagent.tools.notebook.live import LiveDocuments
from tests.components import RTC_EXTRA_HOW, import_module
from tests.tools.helpers import LazyTools, text
from tests.tools.rtc import FakeRoom, make_notebook

import_module("pycrdt", RTC_EXTRA_HOW)
import_module("jupyter_ydoc", RTC_EXTRA_HOW)


def room_cells(room: FakeRoom) -> dict[str, tuple[Any, ...]]:
    """The room's cells by id: type, source, outputs, count, metadata, in order."""
    cells = room.document.get()["cells"]
    return {
        cell["id"]: (
            cell["cell_type"],
            "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"],
            json.dumps(cell.get("outputs"), sort_keys=True),
            cell.get("execution_count"),
            json.dumps(cell.get("metadata"), sort_keys=True),
        )
        for cell in cells
    }


edits = st.lists(
    st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.integers(min_value=0, max_value=20),
        st.text(alphabet="xy =\n", max_size=6),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=edits, typed=st.integers(min_value=0, max_value=20))
def test_undo_in_the_live_document_gives_back_every_cell_the_user_did_not_touch(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, str]], typed: int
) -> None:
    root = tmp_path_factory.mktemp("live")
    runtime = root / "runtime"
    runtime.mkdir()
    path = root / "analysis.ipynb"
    nbformat.write(make_notebook(), path)
    server = {"url": "http://127.0.0.1:1/", "token": "t", "root_dir": str(root)}
    (runtime / f"jpserver-{os.getpid()}.json").write_text(
        json.dumps({**server, "pid": os.getpid()})
    )
    room = FakeRoom(make_notebook())
    store = MemoryStore()
    log = CheckpointLog(lambda: store, lambda: 10)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ysync, "open_room", room.open)
        live = LiveDocuments(timeout=2.0, runtime_dir=runtime)
        try:
            context = ToolContext(
                root=root,
                notebook_path=lambda: path,
                cell_id=lambda: "agent",
                live=live,
                checkpoints=log,
            )
            tools = LazyTools(context)
            original = room_cells(room)
            log.begin("agent", "edits")
            for mode, pick, source in steps:
                text(tools["NotebookRead"])
                ids = [i for i in room_cells(room) if i != "agent"]
                if not ids and mode != "insert":
                    continue
                cell_id = ids[pick % len(ids)] if ids else "agent"
                tools["NotebookEdit"].call(
                    {"cell_id": cell_id, "new_source": source, "edit_mode": mode}
                )
            item = log.end()
            ids = list(room_cells(room))
            touched = ids[typed % len(ids)]
            room.type(touched, "# user")
            if item is not None:
                undo(context, log, [item])
            after = room_cells(room)
        finally:
            live.close()
    for cell_id, cell in original.items():
        if cell_id != touched:
            assert after.get(cell_id) == cell, cell_id
    kept = [i for i in original if i != touched]
    assert [i for i in after if i in kept] == [i for i in kept if i in after]
