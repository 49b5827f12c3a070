"""Big outputs as digests: a long text's head and tail, a DataFrame's shape, types and ends."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools.digest import frame_digest, is_frame, text_digest, with_frame_digest
from tests.frontend.test_kernel_front_end import last_result, result_text
from tests.frontend_peer import FrontEndPeer
from tests.kernels import execute, kernel

MORE = "read cell ab12"


@given(st.text(alphabet="ab\n", max_size=3000), st.integers(min_value=20, max_value=2000))
def test_a_digest_keeps_the_head_and_tail_within_the_limit(text: str, limit: int) -> None:
    """A text that fits is kept whole; a longer one becomes its head, a note naming what was
    left out and how to read it, and its tail: together no longer than the limit."""
    digest = text_digest(text, limit, MORE)
    if len(text) <= limit:
        assert digest == text
        return
    head, rest = digest.split("\n[… ", 1)
    note, tail = rest.split("]\n", 1)
    assert text.startswith(head) and text.endswith(tail)
    assert MORE in note
    assert len(head) + len(tail) <= limit
    left_out = int(note.split(" characters", 1)[0].replace(",", ""))
    assert left_out > 0 and len(head) <= len(text) - len(tail) - left_out


def test_a_long_log_keeps_its_last_lines() -> None:
    """The end of a log (where the error or the result is) survives."""
    log = "\n".join(f"step {k}" for k in range(10_000)) + "\nDONE: accuracy 0.93"
    digest = text_digest(log, 500, MORE)
    assert digest.startswith("step 0\nstep 1\n")
    assert digest.endswith("step 9999\nDONE: accuracy 0.93")
    assert "lines) left out" in digest and len(digest) < 700


def test_a_dataframe_digest_has_shape_dtypes_head_and_tail() -> None:
    frame = pd.DataFrame({"city": [f"c{k}" for k in range(1000)], "temp": range(1000)})
    assert is_frame(frame) and not is_frame([1, 2]) and not is_frame(frame["temp"])
    digest = frame_digest(frame)
    assert digest.startswith("DataFrame: 1,000 rows × 2 columns\ndtypes:\n  city: ")
    assert "temp: int64" in digest and "c0" in digest and "c999" in digest
    assert "c500" not in digest
    small = frame_digest(frame.head(3))
    assert "rows:" in small and "c2" in small


def test_a_run_whose_result_is_a_frame_shows_the_digest() -> None:
    """The execute_result of a DataFrame (the value the run showed) is replaced by its
    digest; other outputs, and other results, stay."""
    frame = pd.DataFrame({"x": range(100)})
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "hi\n"},
        {
            "output_type": "execute_result",
            "execution_count": 7,
            "data": {"text/plain": "big", "text/html": "<table>…</table>"},
            "metadata": {},
        },
    ]
    shown = with_frame_digest(outputs, frame)
    assert shown[0] == outputs[0]
    assert shown[1]["data"] == {"text/plain": frame_digest(frame)}
    assert with_frame_digest(outputs, "text") == outputs
    assert with_frame_digest(outputs[:1], frame) == outputs[:1]  # no execute_result


@pytest.mark.slow
def test_notebook_run_gives_the_model_a_frame_digest_in_a_kernel(
    tmp_path: Path, fake_api: FakeAnthropicServer
) -> None:
    """In a real kernel, NotebookRun of a cell ending in a 1,000-row DataFrame gives the model
    its shape, dtypes and ends, not its HTML; the notebook keeps the full output."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import pandas as pd\npd.DataFrame({'city': [f'c{k}' for k in range(1000)], "
            "'temp': range(1000)})",
            id="frame",
        ),
        nbformat.v4.new_code_cell("%%agent\nRun it.", id="agent"),
    ]
    path = tmp_path / "frames.ipynb"
    nbformat.write(notebook, path)
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_api.url,
        "JPY_SESSION_NAME": str(path),
    }
    with kernel(env, cwd=str(tmp_path)) as (manager, client):
        execute(client, "%load_ext nbagent")
        execute(client, "%config NbAgent.permission_mode = 'bypassPermissions'")
        peer = FrontEndPeer(manager, path)
        try:
            fake_api.enqueue(Reply.tool_use("NotebookRun", {"cell_id": "frame"}), Reply.text("Ok."))
            ran = execute(client, "%%agent\nRun it.", cell_id="agent")
            assert ran.status == "ok", ran.error
        finally:
            peer.close()
    told = result_text(last_result(fake_api.requests[-1].body))
    assert "DataFrame: 1,000 rows × 2 columns" in told and "temp: int64" in told
    assert "c999" in told and "c500" not in told and "<table" not in told
