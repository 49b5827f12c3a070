"""Permission prompts in a real JupyterLab, in Debian's Chromium, as the user meets them.

A notebook registers a ``Bash`` tool that is not read-only, starts a scripted model
(``FakeAnthropicServer``) in the kernel and runs an ``%%agent`` cell whose model calls it:
nbagent asks on the kernel's stdin, and JupyterLab shows its input box under the card.

- Always: the user types ``a``; the call runs, and a second ``git status`` call runs without
  asking (the model got both results). Saved, the file holds no question or answer as text:
  the card says what was asked and answered.
- Stop: the user presses the toolbar's Stop while the question waits; the cell ends with the
  call interrupted and the kernel is free. Whatever box is still on the page, the user types
  ``y`` into it; then saves and reloads: the cell holds no late answer and no prompt.
- Withdrawn (plain JupyterLab, a new Untitled notebook named at its first save): a
  sub-agent's question is left unanswered until its call reaches the time limit, and the
  agent asks about ``rm -rf data``. The first box stays on the page, disabled, saying it was
  withdrawn and why; ``n`` in the open box refuses the command. Saved and reloaded, the file
  holds neither question as text; the cards say what was asked and answered, or withdrawn.

Both setups people have: plain JupyterLab, and JupyterLab with jupyter-collaboration (from
its own environment, ``$NBAGENT_RTC_ENV``). Screenshots in the light and the dark theme (with
``$NBAGENT_SCREENSHOTS`` set, copies go there).

JupyterLab (4.6) by itself records each answer, after its prompt, as a ``stdin`` stream
output saved with the notebook, and leaves the stdin box of an execution that has ended (an
answer typed into it is recorded too; the kernel is safe: ipykernel drops stale replies
before its next question; the notebook was not). nbagent's JupyterLab extension takes the
answers to nbagent's questions out of the cell once recorded, disables a withdrawn question's
box, and removes the unanswered boxes when the cell's execution ends; the Stop test fails
without that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.tools.rtc import KERNEL, RTC_ENV, Server, jupyter_server

pytestmark = pytest.mark.slow


SETUP = '''\
import os

import nbagent
from nbagent import tool
from nbagent.testing import FakeAnthropicServer, Reply


@tool(name="Bash")
def bash(command: str) -> str:
    """Run a shell command (here it only says it did).

    Args:
        command: The command line.
    """
    return f"ran {command}"


def results(request):
    """What the calls returned, in order, from the conversation the model is sent."""
    said = []
    for message in request["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if not isinstance(content, str):
                        content = " ".join(part.get("text", "") for part in content)
                    said.append(content)
    return Reply.text("The calls returned: " + "; ".join(said) + ".")


api = FakeAnthropicServer().start()
os.environ["ANTHROPIC_API_KEY"] = "test-key"
os.environ["ANTHROPIC_BASE_URL"] = api.url
%load_ext nbagent
%agent status
nbagent.registry.register(bash, replace=True);  # after the built-ins: replaces their Bash'''
"""The first cell: the scripted model in the kernel, nbagent loaded, the tool registered.

``%agent status`` waits for nbagent's built-in tools (registered on a thread after
``%load_ext``), so that this ``Bash`` replaces the built-in one, which would run the command."""

ALWAYS_SCRIPT = """\
api.replace_script([
    Reply.tool_use("Bash", {"command": "git status -s"}),
    Reply.tool_use("Bash", {"command": "git status --short"}),
    results,
])"""
ALWAYS_PROMPT = "Allow Bash: git status -s?  y = yes, n = no, a = always (allow Bash(git status:*))"
ALWAYS_ANSWER = "The calls returned: ran git status -s; ran git status --short."

STOP_SCRIPT = """\
api.replace_script([Reply.tool_use("Bash", {"command": "git log -1"}), results])"""
STOP_PROMPT = "Allow Bash: git log -1?  y = yes, n = no, a = always (allow Bash(git log:*))"
FREE = "the kernel is free"

SETUP_CELL, SCRIPT_CELL, AGENT_CELL, AFTER_CELL = range(4)

PANEL_READY = """name => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!panel || !panel.context || panel.context.path !== name || !panel.context.isReady) {
        return false;
    }
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (!kernel || kernel.status !== 'idle') return false;
    const cells = panel.content.model.cells.length;
    return cells > 0 && document.querySelectorAll('.jp-Notebook .jp-Cell').length === cells;
}"""
"""The notebook is the current tab, open, every cell drawn, and its kernel idle."""

OUTPUTS = """index => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
    .toJSON().outputs"""
"""A cell's outputs as the page holds them (nbformat JSON)."""

LIVE_BOX = ".jp-OutputArea-stdin-item:not(.jp-OutputArea-stdin-hiding) .jp-Stdin-input"
"""JupyterLab's stdin box that still takes an answer (an answered one hides, then goes)."""

WATCH_DONE = """index => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    window.nbagentRunDone = false;
    const done = () => { window.nbagentRunDone = true; };
    cell.outputArea.future.done.then(done, done);
}"""
"""Flag the end of the execution the cell's output area shows (its reply and idle status)."""


class StrayAnswer(AssertionError):
    """After a Stop, an input box still took an answer or the notebook recorded one."""


@pytest.fixture(scope="module", params=["plain", "collaboration"])
def lab(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """JupyterLab with this checkout's nbagent extension, plain or with collaboration."""
    base = tmp_path_factory.mktemp(f"lab-{request.param}")
    python = lab_setup(request.param, base)
    with jupyter_server(python, base, LAB_OPTIONS) as server:
        yield server


def make_notebook(script: str, agent: str, *more: str) -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_code_cell(script, id="script"),
        nbformat.v4.new_code_cell(agent, id="agent"),
        *(nbformat.v4.new_code_cell(source, id=f"more-{i}") for i, source in enumerate(more)),
    ]
    return notebook


def kind(lab: Server) -> str:
    return "rtc" if str(RTC_ENV) in " ".join(map(str, lab.process.args)) else "plain"


def open_notebook(browser: Any, lab: Server, name: str) -> Any:
    """Open a notebook in a new page, in a workspace of its own: JupyterLab reopens the tabs
    of the workspace it last showed, and the other test's notebook would be one."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    workspace = Path(name).stem
    page.goto(f"{lab.url}lab/workspaces/{workspace}/tree/{name}?token={lab.token}", timeout=90_000)
    page.wait_for_function(PANEL_READY, arg=name, timeout=90_000, polling=100)
    set_theme(page, "JupyterLab Light")
    return page


def set_theme(page: Any, theme: str) -> None:
    """Change the theme as the Settings menu does, and wait until the page shows it."""
    page.evaluate(
        "theme => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme}); }",
        theme,
    )
    light = "true" if theme == "JupyterLab Light" else "false"
    page.wait_for_function(
        f"document.body.dataset.jpThemeLight === '{light}'"
        " && !document.querySelector('#jupyterlab-splash')"
    )


def run_cell(page: Any, index: int, wait: bool = True) -> None:
    """Run one cell as the user does (select it, run it); wait until it is done if told to."""
    page.evaluate(
        "index => { const panel = window.jupyterapp.shell.currentWidget;"
        " panel.content.activeCellIndex = index;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }",
        index,
    )
    if wait:
        wait_until_ran(page, index)


def ran(page: Any, index: int) -> bool:
    """The cell has run and the kernel is idle again."""
    return bool(
        page.evaluate(
            "index => { const panel = window.jupyterapp.shell.currentWidget;"
            " const cell = panel.content.model.cells.get(index);"
            " return cell.executionCount !== null"
            " && panel.sessionContext.session.kernel.status === 'idle'; }",
            index,
        )
    )


def wait_until_ran(page: Any, index: int) -> None:
    wait_until(lambda: ran(page, index), f"cell {index} ran")


def wait_for_text(locator: Any, text: str, what: str) -> None:
    """Wait until an element's text holds ``text``; on a timeout, say what it held."""
    shown: list[str] = [""]

    def holds() -> bool:
        shown[0] = locator.inner_text()
        return text in shown[0]

    try:
        wait_until(holds, what)
    except AssertionError as error:
        raise AssertionError(f"{error}; it shows {shown[0]!r}") from None


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def wait_for_question(page: Any) -> Any:
    """Wait until the agent's cell shows JupyterLab's stdin box; return the box."""
    box = cell(page, AGENT_CELL).locator(LIVE_BOX)
    box.wait_for(timeout=90_000)
    return box


def prompt_of(page: Any) -> str:
    """The question above the stdin box, as written (text content: spaces kept)."""
    prompt = cell(page, AGENT_CELL).locator(".jp-OutputArea-stdin-item .jp-Stdin-prompt")
    return str(prompt.first.text_content()).strip()


def stdin_streams(outputs: list[Any]) -> list[str]:
    """The texts of the answers JupyterLab recorded in a cell (``stdin`` stream outputs)."""
    return [
        "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
        for o in outputs
        if o.get("output_type") == "stream" and o.get("name") == "stdin"
    ]


def transcript_of(outputs: list[Any]) -> str:
    """What the cell's displays say (the transcript as saved: Markdown and plain text)."""
    return "\n".join(
        "".join(text) if isinstance(text, list) else text
        for o in outputs
        for mime, text in (o.get("data") or {}).items()
        if mime in ("text/markdown", "text/plain")
    )


def assert_no_question_as_text(path: Path, index: int) -> Any:
    """The saved file holds no question or answer as text (JupyterLab's ``stdin`` streams, a
    line of nbagent's): only the transcript says them. Returns the cell's saved outputs."""
    text = path.read_text()
    assert "y = yes, n = no" not in text  # the prompt's own words, never the card's
    assert "Question withdrawn" not in text and "did nothing" not in text
    outputs = nbformat.read(path, as_version=4).cells[index].outputs
    assert stdin_streams(outputs) == []
    assert "Allow Bash" not in stream_texts(outputs)
    return outputs


def stream_texts(outputs: list[Any]) -> str:
    return "\n".join(
        "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
        for o in outputs
        if o.get("output_type") == "stream"
    )


def save(page: Any, path: Path, index: int) -> list[Any]:
    """Save as the user does and wait until the file holds the cell's outputs the page shows.

    Returns:
        The saved cell's outputs (nbformat JSON).
    """
    shown = page.evaluate(OUTPUTS, index)
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")

    def saved() -> list[Any] | None:
        try:
            cells = json.loads(path.read_text())["cells"]
        except (OSError, ValueError):  # read in the middle of a save
            return None
        outputs = cells[index].get("outputs", [])
        return outputs if _comparable(outputs) == _comparable(shown) else None

    outputs = wait_until(saved, "the file holds the cell's outputs", 30)
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    return list(outputs)


def _comparable(outputs: list[Any]) -> list[Any]:
    """Outputs as the page and the file both hold them (a file splits texts into lines)."""

    def joined(value: Any) -> Any:
        return "".join(value) if isinstance(value, list) else value

    return [
        (
            o["output_type"],
            o.get("name"),
            joined(o.get("text")),
            {mime: joined(value) for mime, value in (o.get("data") or {}).items()},
        )
        for o in outputs
    ]


def test_always_runs_the_call_and_the_same_subcommand_asks_no_more(
    lab: Server, tmp_path: Path
) -> None:
    name = "always.ipynb"
    path = lab.root / name
    nbformat.write(make_notebook(ALWAYS_SCRIPT, "%%agent\nShow the git status, twice."), path)
    with chromium() as browser:
        page = open_notebook(browser, lab, name)
        run_cell(page, SETUP_CELL)
        run_cell(page, SCRIPT_CELL)
        run_cell(page, AGENT_CELL, wait=False)

        # The question waits under the card, in the light and the dark theme.
        box = wait_for_question(page)
        assert prompt_of(page) == ALWAYS_PROMPT
        assert not ran(page, AGENT_CELL)
        box.scroll_into_view_if_needed()
        assert screenshot(page, f"always-{kind(lab)}-waiting-light", tmp_path).exists()
        set_theme(page, "JupyterLab Dark")
        box.scroll_into_view_if_needed()
        assert screenshot(page, f"always-{kind(lab)}-waiting-dark", tmp_path).exists()
        set_theme(page, "JupyterLab Light")

        # The user answers "always": the call runs, then `git status --short` without a question.
        box.click()
        page.keyboard.type("a")
        page.keyboard.press("Enter")
        live = cell(page, AGENT_CELL).locator(LIVE_BOX)
        wait_until(lambda: ran(page, AGENT_CELL) or live.count(), "the cell ends or asks again")
        assert live.count() == 0, f"asked again: {prompt_of(page)!r}"
        wait_until_ran(page, AGENT_CELL)
        output = cell(page, AGENT_CELL).locator(".jp-OutputArea")
        wait_for_text(output, ALWAYS_ANSWER, "the model's answer shows")
        assert screenshot(page, f"always-{kind(lab)}-done", tmp_path).exists()

        # Saved: no answer recorded as text; the card says what was asked and answered.
        saved = save(page, path, AGENT_CELL)
        assert stdin_streams(saved) == []
        on_disk = transcript_of(assert_no_question_as_text(path, AGENT_CELL))
        assert "allowed by you, always: added rule Bash(git status:*)" in on_disk
        assert "asked: git status -s · answered: always" in on_disk


def test_stop_while_asking_interrupts_the_call_and_records_no_late_answer(
    lab: Server, tmp_path: Path
) -> None:
    name = "stop.ipynb"
    path = lab.root / name
    notebook = make_notebook(STOP_SCRIPT, "%%agent\nShow the last commit.", f"print({FREE!r})")
    nbformat.write(notebook, path)
    problems: list[str] = []
    with chromium() as browser:
        page = open_notebook(browser, lab, name)
        run_cell(page, SETUP_CELL)
        run_cell(page, SCRIPT_CELL)
        run_cell(page, AGENT_CELL, wait=False)

        box = wait_for_question(page)
        assert prompt_of(page) == STOP_PROMPT
        page.evaluate(WATCH_DONE, AGENT_CELL)
        box.scroll_into_view_if_needed()
        assert screenshot(page, f"stop-{kind(lab)}-waiting-light", tmp_path).exists()
        set_theme(page, "JupyterLab Dark")
        assert screenshot(page, f"stop-{kind(lab)}-waiting-dark", tmp_path).exists()
        set_theme(page, "JupyterLab Light")

        # The user presses the toolbar's Stop: the cell ends, the call interrupted.
        page.locator(".jp-NotebookPanel-toolbar [data-jp-item-name='interrupt']").click()
        page.wait_for_function("window.nbagentRunDone === true")
        wait_until_ran(page, AGENT_CELL)
        output = cell(page, AGENT_CELL).locator(".jp-OutputArea")
        wait_for_text(output, "interrupted", "the call shows interrupted")
        run_cell(page, AFTER_CELL)  # the kernel waits for no answer any more
        assert FREE in cell(page, AFTER_CELL).locator(".jp-OutputArea").inner_text()
        assert screenshot(page, f"stop-{kind(lab)}-stopped", tmp_path).exists()

        # A box still on the page would take an answer: the user types one into it.
        live = cell(page, AGENT_CELL).locator(LIVE_BOX)
        if live.count():
            problems.append(f"an input box is still live after the cell ended: {prompt_of(page)!r}")
            live.click()
            page.keyboard.type("y")
            page.keyboard.press("Enter")
            wait_until(lambda: live.count() == 0, "the box takes the answer")
            assert screenshot(page, f"stop-{kind(lab)}-late-answer", tmp_path).exists()

        # Saved and reloaded, the cell holds the interrupted call and no answer or prompt.
        saved = save(page, path, AGENT_CELL)
        page.reload()
        page.wait_for_function(PANEL_READY, arg=name, timeout=90_000, polling=100)
        output = cell(page, AGENT_CELL).locator(".jp-OutputArea")
        wait_for_text(output, "interrupted", "the reloaded cell shows")
        assert cell(page, AGENT_CELL).locator(".jp-Stdin").count() == 0
        cell(page, AGENT_CELL).scroll_into_view_if_needed()
        assert screenshot(page, f"stop-{kind(lab)}-reloaded", tmp_path).exists()
        reloaded = page.evaluate(OUTPUTS, AGENT_CELL)

    # The card says the question was withdrawn (the time is how long the question waited).
    said = transcript_of(assert_no_question_as_text(path, AGENT_CELL))
    assert re.search(r"Bash git log -1 → interrupted after [\d.]+ s · question withdrawn", said)
    assert "asked: git log -1 · withdrawn before an answer" in said
    for where, outputs in (("saved", saved), ("reloaded", reloaded)):
        late = stdin_streams(outputs)
        if late:
            problems.append(f"the {where} cell records an answer: {late!r}")
        streams = stream_texts(outputs)
        if "Allow Bash" in streams or "[y/N]" in streams:
            problems.append(f"the {where} cell records the prompt: {streams!r}")
    if problems:
        raise StrayAnswer("; ".join(problems))


# -- an answer typed into a withdrawn question's box ------------------------------------------

WITHDRAWN_SETUP = """\
import os

import nbagent
from nbagent.orchestration.subagent import SUBAGENT_SYSTEM
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.core.tool import Tool

ran = []


def bash(command: str) -> str:
    ran.append(command)
    return f"ran {command}"


def results_in(body):
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def withdrawn_then_asked(body):
    if body.get("system") == SUBAGENT_SYSTEM:
        return Reply.tool_use("Bash", {"command": "echo first"})
    if not results_in(body):
        return Reply.tool_use("Agent", {"description": "first", "prompt": "Run it."})
    if len(body["messages"]) == 3:
        return Reply.tool_use("Bash", {"command": "rm -rf data"})
    return Reply.text("Done.")


api = FakeAnthropicServer().start()
api.replace_script([withdrawn_then_asked] * 4)
os.environ["ANTHROPIC_API_KEY"] = "test-key"
os.environ["ANTHROPIC_BASE_URL"] = api.url
%load_ext nbagent
%agent status
schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
nbagent.registry.register(
    Tool(name="Bash", description="Runs a command (here: notes that it ran).",
         input_schema=schema, handler=bash, main_thread=True),
    replace=True,
)
%config NbAgent.call_timeout = 2"""
"""The first cell: the scripted model (a sub-agent asks about ``echo first`` and is abandoned
at the 2 s time limit; then the agent asks about ``rm -rf data``), a ``Bash`` tool that only
records the commands it is given, and the time limit."""

WITHDRAWN_CELLS = (WITHDRAWN_SETUP, "%%agent\nTidy up the data folder.", "print(ran)")
WITHDRAWN_AGENT, WITHDRAWN_CHECK = 1, 2
FIRST_PROMPT = "Allow Bash: echo first?"
SECOND_PROMPT = "Allow Bash: rm -rf data?"
WITHDRAWN = "withdrawn: its call reached its time limit"
"""What the withdrawn question's box says where the answer would go."""

NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!panel || !panel.context || !panel.context.isReady || !panel.sessionContext) return null;
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    return kernel && kernel.status === 'idle' ? panel.context.path : null;
}"""
"""The current tab is an open notebook whose kernel is idle: its path (else null)."""

SOURCES = (
    "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
    ".map(cell => cell.source)"
)


def new_notebook(browser: Any, lab: Server, kernel_name: str) -> Any:
    """Open JupyterLab in a workspace of its own, open a launcher (the file browser's +) and
    start a notebook with the kernel; return the page once the notebook is open and idle."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{lab.url}lab/workspaces/withdrawn?token={lab.token}", timeout=90_000)
    page.wait_for_function(
        "() => window.jupyterapp && !document.querySelector('#jupyterlab-splash')",
        timeout=90_000,
    )
    set_theme(page, "JupyterLab Light")
    page.locator(".jp-FileBrowser-toolbar button").first.click()  # the +: a new launcher
    card = f".jp-LauncherCard[data-category='Notebook'][title='{kernel_name}']:visible"
    page.locator(card).click()
    page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100)
    return page


def type_cells(page: Any, sources: tuple[str, ...]) -> None:
    """Write the cells as a person pastes them: into the editor, adding a cell below (``b``)."""
    for index, source in enumerate(sources):
        if index:
            page.keyboard.press("Escape")
            page.keyboard.press("b")
        cell(page, index).locator(".cm-content").click()
        page.keyboard.insert_text(source)
    assert page.evaluate(SOURCES) == list(sources)


def press_in_cell(page: Any, index: int, keys: str) -> None:
    """Click into a cell's editor and press keys (``Shift+Enter`` runs it)."""
    cell(page, index).locator(".cm-content").click()
    page.keyboard.press(keys)


def stdin_item(page: Any, index: int, prompt: str, live: bool = False) -> Any:
    """A cell's stdin box (its prompt and input) whose prompt starts with ``prompt``."""
    item = ".jp-OutputArea-stdin-item" + (":not(.jp-OutputArea-stdin-hiding)" if live else "")
    return cell(page, index).locator(item, has_text=prompt)


def questions(page: Any) -> list[str]:
    """The questions of the agent cell's stdin boxes that still take an answer, top to
    bottom (each prompt up to its ``?``)."""
    items = cell(page, WITHDRAWN_AGENT).locator(
        ".jp-OutputArea-stdin-item:not(.jp-OutputArea-stdin-hiding)"
    )
    asked = []
    for item in items.all():
        if item.locator(".jp-Stdin-input").is_editable():
            prompt = str(item.locator(".jp-Stdin-prompt").text_content())
            asked.append(prompt.strip().split("?")[0] + "?")
    return asked


def answer(page: Any, box: Any, text: str, shot: str, folder: Path) -> None:
    """Click into a stdin box, type an answer (screenshot), press Enter."""
    box.locator(".jp-Stdin-input").click()
    page.keyboard.type(text)
    assert screenshot(page, shot, folder).exists()
    page.keyboard.press("Enter")


def save_renamed(page: Any, path: Path, index: int, folder: Path) -> list[Any]:
    """Save as a person does (Ctrl+S); at the first save, JupyterLab asks for a name: give
    ``path``'s. Wait until the file holds the cell's outputs the page shows; return them."""
    shown = page.evaluate(OUTPUTS, index)
    page.keyboard.press("Control+s")
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text("Rename file").wait_for()
    assert screenshot(page, "withdrawn-rename-dialog", folder).exists()
    dialog.locator("input.jp-mod-styled").first.fill(path.name)
    dialog.get_by_role("button", name="Rename and Save").click()

    def saved() -> list[Any] | None:
        try:
            cells = json.loads(path.read_text())["cells"]
        except (OSError, ValueError):  # not saved yet, or read in the middle of a save
            return None
        outputs = cells[index].get("outputs", [])
        return outputs if _comparable(outputs) == _comparable(shown) else None

    outputs = wait_until(saved, "the file holds the cell's outputs", 30)
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    dismiss_listing_race(page, path.name)
    return list(outputs)


def dismiss_listing_race(page: Any, name: str) -> None:
    """Once the file browser lists the renamed file, close JupyterLab's own "Directory not
    found" error if its refresh raced the rename.

    jupyter_server answers a folder listing with 404 when a file it listed is renamed before
    it reads that file's model, and JupyterLab's file browser shows that 404 as a dialog. The
    race is between JupyterLab's rename and its own refresh (nbagent writes nothing there: its
    temporary files are hidden, and hidden files are not read by a listing).
    """
    page.locator(".jp-DirListing-itemText", has_text=name).first.wait_for(state="attached")
    race = page.locator('.jp-Dialog[aria-label^="Directory not found"]')
    if race.count():
        race.get_by_role("button").last.click()
        race.wait_for(state="detached")


@pytest.mark.parametrize("lab", ["plain"], indirect=True)
def test_an_answer_typed_in_a_withdrawn_questions_box_does_not_answer_the_open_question(
    lab: Server, tmp_path: Path
) -> None:
    """A sub-agent's question is left unanswered until its call reaches the time limit; the
    agent then asks about ``rm -rf data``. JupyterLab still shows the first box: nbagent's
    extension disables it, saying it was withdrawn and why; the person types ``n`` into the
    second. Before 18eeee3 a ``y`` typed into the first answered the open question and
    ``rm -rf data`` ran; before the extension disabled the box, the ``y`` did nothing but
    stayed in the saved notebook, with both prompts and a line saying it was withdrawn."""
    name = "withdrawn.ipynb"
    path = lab.root / name
    with chromium() as browser:
        page = new_notebook(browser, lab, "nbagent test")
        opened = page.wait_for_function(NOTEBOOK_READY, timeout=90_000, polling=100)
        assert opened.json_value().startswith("Untitled")
        type_cells(page, WITHDRAWN_CELLS)
        assert screenshot(page, "withdrawn-typed", tmp_path).exists()
        press_in_cell(page, SETUP_CELL, "Shift+Enter")
        wait_until_ran(page, SETUP_CELL)

        # The sub-agent asks; nobody answers.
        press_in_cell(page, WITHDRAWN_AGENT, "Shift+Enter")
        first = stdin_item(page, WITHDRAWN_AGENT, FIRST_PROMPT)
        first.wait_for(timeout=90_000)
        first.scroll_into_view_if_needed()
        assert screenshot(page, "withdrawn-first-question", tmp_path).exists()

        # Its call reaches the time limit; the agent asks the second question. The first box
        # is still on the page, disabled: it says it was withdrawn and why.
        second = stdin_item(page, WITHDRAWN_AGENT, SECOND_PROMPT, live=True)
        second.wait_for(timeout=90_000)
        stale = first.locator(".jp-Stdin-input")
        assert stale.is_disabled() and not stale.is_editable()
        assert stale.get_attribute("placeholder") == WITHDRAWN
        assert "nbagent-withdrawn" in str(first.get_attribute("class"))
        # The cell's output area (the first: the model's answer is an Output widget, with an
        # output area of its own inside).
        output = cell(page, WITHDRAWN_AGENT).locator(".jp-OutputArea").first
        assert "Question withdrawn" not in output.inner_text()  # the box says it
        second.scroll_into_view_if_needed()
        assert screenshot(page, "withdrawn-both-boxes-light", tmp_path).exists()
        set_theme(page, "JupyterLab Dark")
        assert screenshot(page, "withdrawn-both-boxes-dark", tmp_path).exists()
        set_theme(page, "JupyterLab Light")
        assert questions(page) == [SECOND_PROMPT]
        assert not ran(page, WITHDRAWN_AGENT)
        assert "Bash rm -rf data → waiting for your answer" in output.inner_text()

        # "n" in the open box refuses rm -rf data; the model goes on. The answer is not left
        # in the cell as text: the card says it.
        answer(page, second, "n", "withdrawn-open-typed", tmp_path)
        wait_until_ran(page, WITHDRAWN_AGENT)
        wait_for_text(output, "Done.", "the model's answer shows")
        boxes = cell(page, WITHDRAWN_AGENT).locator(".jp-OutputArea-stdin-item")
        wait_until(lambda: boxes.count() == 0, "the answered box fades out, the withdrawn goes")
        shown = output.inner_text()
        assert "Bash rm -rf data → refused by you" in shown
        assert "Allow Bash" not in shown and WITHDRAWN not in shown  # no box, no prompt left
        # The person opens the sub-agent's card: its question says it was withdrawn.
        summaries = cell(page, WITHDRAWN_AGENT).locator("details.nbagent-call > summary")
        summaries.filter(has_text="Agent first").first.click()
        wait_for_text(output, "Bash echo first → interrupted · question withdrawn", "it says")
        assert stdin_streams(page.evaluate(OUTPUTS, WITHDRAWN_AGENT)) == []
        cell(page, WITHDRAWN_AGENT).scroll_into_view_if_needed()
        assert screenshot(page, "withdrawn-done", tmp_path).exists()

        # The recording tool ran nothing.
        press_in_cell(page, WITHDRAWN_CHECK, "Control+Enter")
        wait_until_ran(page, WITHDRAWN_CHECK)
        checked = cell(page, WITHDRAWN_CHECK).locator(".jp-OutputArea").first
        wait_for_text(checked, "[]", "the check cell prints")
        assert checked.inner_text().strip() == "[]"

        # Saved (named at the first save) and reloaded.
        saved = save_renamed(page, path, WITHDRAWN_AGENT, tmp_path)
        assert screenshot(page, "withdrawn-saved", tmp_path).exists()
        page.reload()
        page.wait_for_function(PANEL_READY, arg=name, timeout=90_000, polling=100)
        output = cell(page, WITHDRAWN_AGENT).locator(".jp-OutputArea").first
        wait_for_text(output, "Done.", "the reloaded cell shows")
        assert cell(page, WITHDRAWN_AGENT).locator(".jp-Stdin").count() == 0
        # The person opens the cards: each says what was asked, and the answer or withdrawal.
        for summary in cell(page, WITHDRAWN_AGENT).locator("details.nbagent-call > summary").all():
            summary.click()
        reloaded_text = output.inner_text()
        cell(page, WITHDRAWN_AGENT).scroll_into_view_if_needed()
        assert screenshot(page, "withdrawn-reloaded", tmp_path).exists()
        reloaded = page.evaluate(OUTPUTS, WITHDRAWN_AGENT)

    on_disk = assert_no_question_as_text(path, WITHDRAWN_AGENT)
    for outputs in (saved, reloaded, on_disk):
        assert stdin_streams(outputs) == []
        said = transcript_of(outputs)
        assert "Bash rm -rf data → refused by you" in said
        assert "asked: rm -rf data · answered: no" in said
        assert "Bash echo first → interrupted · question withdrawn" in said
        assert "asked: echo first · withdrawn before an answer" in said
    assert "asked: rm -rf data · answered: no" in reloaded_text
    assert "asked: echo first · withdrawn before an answer" in reloaded_text
