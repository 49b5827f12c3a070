"""The notebook and variable tools inside a real IPython kernel, as the agent uses them there."""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.kernels import kernel

pytestmark = pytest.mark.slow

SETUP = """
from nbagent.tools import ToolContext, builtin_tools
from nbagent.core.errors import ToolError
context = ToolContext.for_shell(get_ipython())
tools = {t.name: t for t in builtin_tools(context)}
def use(tool_name, **tool_input):
    try:
        result = tools[tool_name].call(tool_input)
        return {"ok": not result.is_error, "content": result.content}
    except ToolError as exc:
        return {"ok": False, "content": str(exc)}
measurements = [1.5, 2.5, 4.0]
"""

AGENT_CELL = """
import json
print(json.dumps({
    "root": str(context.root),
    "notebook": str(context.notebook_path()),
    "cell": context.cell_id(),
    "variables": use("ListVariables", name_contains="measure"),
    "inspect": use("InspectVariable", name="measurements[2]"),
    "read": use("NotebookRead"),
    "edit_own": use("NotebookEdit", cell_id="agent", new_source="x"),
    "insert": use(
        "NotebookEdit", edit_mode="insert", cell_id="load", new_source="total = sum(measurements)"
    ),
    "replace": use("NotebookEdit", cell_id="load", new_source="measurements = [1, 2]"),
    "run": use("RunCode", code="print('from the kernel')\\nsum(measurements)"),
}))
"""


def run_cell(client: Any, code: str, cell_id: str, timeout: float = 60) -> tuple[str, str]:
    """Execute code as the front end does for a notebook cell (``cellId`` in the metadata)."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    message = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    client.shell_channel.send(message)
    msg_id = message["header"]["msg_id"]
    stdout: list[str] = []
    while True:
        try:
            reply = client.get_iopub_msg(timeout=timeout)
        except queue.Empty as exc:
            raise TimeoutError(f"no output from the kernel for {timeout} s") from exc
        if reply["parent_header"].get("msg_id") != msg_id:
            continue
        kind, body = reply["msg_type"], reply["content"]
        if kind == "stream" and body["name"] == "stdout":
            stdout.append(body["text"])
        if kind == "error":
            raise AssertionError("\n".join(body["traceback"]))
        if kind == "status" and body["execution_state"] == "idle":
            break
    status = client.get_shell_msg(timeout=timeout)["content"]["status"]
    return status, "".join(stdout)


def test_notebook_and_variable_tools_in_a_kernel(tmp_path: Path) -> None:
    path = tmp_path / "lab.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Lab", id="intro"),
        nbformat.v4.new_code_cell("measurements = [1.5, 2.5, 4.0]", id="load"),
        nbformat.v4.new_code_cell("%%agent\nsummarise", id="agent"),
    ]
    nbformat.write(notebook, str(path))
    with kernel(env={"JPY_SESSION_NAME": str(path)}, cwd=str(tmp_path)) as (_, client):
        assert run_cell(client, SETUP, "load")[0] == "ok"
        status, out = run_cell(client, AGENT_CELL, "agent")
    assert status == "ok"
    report = json.loads(out)
    assert report["root"] == str(tmp_path.resolve())
    assert report["notebook"] == str(path.resolve())
    assert report["cell"] == "agent"
    assert report["variables"]["ok"]
    assert report["variables"]["content"].split("\n")[1].startswith("measurements  list  len 3")
    assert report["inspect"] == {
        "ok": True,
        "content": "measurements[2]: float\nvalue: 4.0",
    }
    assert report["read"]["ok"]
    assert '<cell index="2" id="agent" type="code" running="true">' in report["read"]["content"]
    assert report["edit_own"] == {
        "ok": False,
        "content": "Cell agent is the cell running this agent: it cannot be replaced while it "
        "runs. Insert a new cell instead.",
    }
    assert report["insert"]["ok"] and report["replace"]["ok"]
    assert report["run"] == {"ok": True, "content": "stdout:\nfrom the kernel\n\nresult: 8.0"}
    saved = nbformat.read(str(path), as_version=4)
    nbformat.validate(saved)
    assert [c.source for c in saved.cells] == [
        "# Lab",
        "measurements = [1, 2]",
        "total = sum(measurements)",
        "%%agent\nsummarise",
    ]
