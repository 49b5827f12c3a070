"""``nbagent run``: the README's main job. It prints the agent's answer, writes the executed
notebook, leaves the notebook's folder as it was, and fails when a cell fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nbagent.jupyter.cli import agent_cell, cell_text, main

EXAMPLES = Path(__file__).resolve().parents[2] / "example_notebooks"

OFFLINE = {**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nbagent", "run", *args],
        cwd=cwd,
        env=OFFLINE,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_an_agent_cell_shows_its_prompt_and_transcript_other_cells_what_they_print() -> None:
    agent = nbformat.v4.new_code_cell("%%agent -o r\nWhat is 2 + 2?")
    agent.outputs = [
        nbformat.v4.new_output(
            "display_data", {"text/plain": "✓ Calc\n\n**4**", "text/markdown": "ignored"}
        )
    ]
    assert (
        cell_text(agent, colour=False) == ">>> %%agent -o r\n>>> What is 2 + 2?\n✓ Calc\n\n**4**\n"
    )
    other = nbformat.v4.new_code_cell("print('hi'); df")
    other.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hi\n"),
        nbformat.v4.new_output("execute_result", {"text/plain": "a table"}),
    ]
    assert cell_text(other, colour=False) == "hi\n"
    failed = nbformat.v4.new_code_cell("1/0")
    failed.outputs = [
        nbformat.v4.new_output(
            "error", ename="ZeroDivisionError", evalue="division by zero", traceback=["\x1b[31mZ"]
        )
    ]
    assert cell_text(failed, colour=False) == "Z\n"
    assert cell_text(nbformat.v4.new_code_cell("x = 1"), colour=False) == ""
    assert agent_cell("  %%agent\nhi") and not agent_cell("%agent status")


def test_no_command_or_an_unknown_one_prints_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "nbagent run NOTEBOOK" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert "enable|disable" in capsys.readouterr().out


def test_a_missing_notebook_or_writing_over_it_is_refused(tmp_path: Path) -> None:
    assert main(["run", str(tmp_path / "none.ipynb")]) == 2
    notebook = tmp_path / "a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    assert main(["run", str(notebook), "-o", str(notebook)]) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("00_quick_tour", "21 °C is **69.8 °F**."),
        ("02_mcp_servers", "Saved your note: *Buy oat milk*."),
    ],
)
def test_an_example_prints_the_answer_writes_the_notebook_and_leaves_its_folder_as_it_was(
    tmp_path: Path, name: str, answer: str
) -> None:
    folder = tmp_path / "examples"
    folder.mkdir()
    shutil.copy(EXAMPLES / f"{name}.ipynb", folder)
    done = run(f"examples/{name}.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert answer in done.stdout
    assert "Offline: no ANTHROPIC_API_KEY" in done.stdout
    assert f"The executed notebook, with every output: {name}.executed.ipynb" in done.stdout
    assert "without encryption" not in done.stderr  # the kernel talks over local sockets
    executed = nbformat.read(tmp_path / f"{name}.executed.ipynb", as_version=4)
    assert all(cell.get("execution_count") for cell in executed.cells if cell.cell_type == "code")
    assert sorted(p.name for p in folder.iterdir()) == [f"{name}.ipynb"]


@pytest.mark.slow
def test_a_failing_cell_stops_the_run_with_exit_1_and_the_notebook_is_still_written(
    tmp_path: Path,
) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("print('before')"),
        nbformat.v4.new_code_cell("1 / 0"),
        nbformat.v4.new_code_cell("print('later')"),
    ]
    nbformat.write(notebook, tmp_path / "fails.ipynb")
    done = run("fails.ipynb", "-o", "out/fails.ipynb", cwd=tmp_path)
    assert done.returncode == 1
    assert "before" in done.stdout and "later" not in done.stdout
    assert "ZeroDivisionError" in done.stdout
    assert "A cell raised an error (above)" in done.stdout
    written = nbformat.read(tmp_path / "out" / "fails.ipynb", as_version=4)
    assert written.cells[1].outputs[0].output_type == "error"
