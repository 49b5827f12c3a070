"""Questions about notebook edits in a real JupyterLab, in Debian's Chromium, as the user meets
them.

The scripted model (``FakeAnthropicServer`` in the kernel) reads the notebook, inserts a code
cell after the ``data`` cell (its id a JupyterLab UUID), then replaces the ``data`` cell. The
first question shows the new cell's code, the second the diff of the cell: the card highlights
the code in the editor's colours and tints the added and removed lines; the prompt on stdin
shows the same, without them. The user answers ``y`` twice: the page shows the new cell and the
replaced one, the cards name cells by 8 characters of their id (the new cell's too), and the
model got the whole ids. Plain JupyterLab and JupyterLab with jupyter-collaboration; screenshots
of both questions in the light theme and of the diff in the dark one (``$NBAGENT_SCREENSHOTS``
keeps copies).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_permissions import (
    AGENT_CELL,
    LIVE_BOX,
    cell,
    kind,
    open_notebook,
    run_cell,
    set_theme,
    wait_for_question,
    wait_until_ran,
)
from tests.tools.rtc import KERNEL, Server, jupyter_server

pytestmark = pytest.mark.slow

NAME = "questions.ipynb"
DATA_ID = "7c1d5e2a-40b9-4c3e-9f2d-1a6b8e0c5d47"
DATA = "import math\nradius = 2\nprint(radius)"
NEW_DATA = "import math\nradius = 3\narea_m2 = math.pi * radius ** 2\nprint(radius, area_m2)"
INSERTED = (
    "def area(r):\n"
    '    """The area of a circle of radius r."""\n'
    "    return math.pi * r ** 2  # r in metres\n"
    "\n"
    "print(area(radius), 'm2')"
)
DIFF = (
    "@@ -1,3 +1,4 @@\n"
    " import math\n"
    "-radius = 2\n"
    "-print(radius)\n"
    "+radius = 3\n"
    "+area_m2 = math.pi * radius ** 2\n"
    "+print(radius, area_m2)"
)
CHOICES = "?  y = yes, n = no, a = always (allow NotebookEdit)"
INSERT_PROMPT = (
    f"{INSERTED}\n\nAllow NotebookEdit: insert a code cell after cell 7c1d5e2a in {NAME}{CHOICES}"
)
REPLACE_PROMPT = f"{DIFF}\n\nAllow NotebookEdit: replace cell 7c1d5e2a in {NAME}{CHOICES}"

SETUP = """\
import os

from nbagent.testing import FakeAnthropicServer, Reply


def results(request):
    \"\"\"What the edits returned (after the read), from the conversation the model is sent.\"\"\"
    said = []
    for message in request["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if not isinstance(content, str):
                        content = " ".join(part.get("text", "") for part in content)
                    said.append(content)
    return Reply.text("The edits returned: " + " | ".join(said[1:]))


api = FakeAnthropicServer().start()
os.environ["ANTHROPIC_API_KEY"] = "test-key"
os.environ["ANTHROPIC_BASE_URL"] = api.url
%load_ext nbagent
%agent status"""

SCRIPT = f"""\
api.replace_script([
    Reply.tool_use("NotebookRead", {{}}),
    Reply.tool_use(
        "NotebookEdit",
        {{"edit_mode": "insert", "cell_id": {DATA_ID!r}, "new_source": {INSERTED!r}}},
    ),
    Reply.tool_use("NotebookEdit", {{"cell_id": {DATA_ID!r}, "new_source": {NEW_DATA!r}}}),
    results,
])"""

CODE_STYLE = """index => {
    const card = [...document.querySelectorAll('.jp-Notebook .jp-Cell')[index]
        .querySelectorAll('details.nbagent-waiting')].find(d => d.offsetParent !== null);
    const pre = card.querySelector('pre.nbagent-code');
    const span = [...pre.querySelectorAll('span')].find(s => s.textContent === 'def'
        || s.textContent === 'import');
    const lines = [...pre.querySelectorAll('code > span')].map(line => [
        line.textContent.slice(0, 1), getComputedStyle(line).backgroundColor]);
    return {
        text: pre.innerText,
        plain: getComputedStyle(pre).color,
        keyword: getComputedStyle(span).color,
        weight: getComputedStyle(span).fontWeight,
        lines: lines,
    };
}"""
"""The waiting card's block of code (the card shown above the stdin box; its place among the
cards is hidden meanwhile): its text, the colour of plain text and of a keyword, and each diff
line's first character and background."""

CELLS = """() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells.map(
    cell => [cell.id, cell.source])"""

TRANSPARENT = "rgba(0, 0, 0, 0)"


@pytest.fixture(scope="module", params=["plain", "collaboration"])
def lab(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """JupyterLab with this checkout's nbagent extension, plain or with collaboration."""
    base = tmp_path_factory.mktemp(f"lab-{request.param}")
    python = lab_setup(request.param, base)
    with jupyter_server(python, base, LAB_OPTIONS) as server:
        yield server


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_code_cell(SCRIPT, id="script"),
        nbformat.v4.new_code_cell("%%agent\nAdd an area function, then use radius 3.", id="agent"),
        nbformat.v4.new_code_cell(DATA, id=DATA_ID),
    ]
    return notebook


def open_prompt(page: Any) -> str:
    """The question above the stdin box that still takes an answer, as written."""
    item = ".jp-OutputArea-stdin-item:not(.jp-OutputArea-stdin-hiding) .jp-Stdin-prompt"
    return str(cell(page, AGENT_CELL).locator(item).first.text_content()).strip()


def answer(page: Any, box: Any, typed: str) -> None:
    """Type an answer into the open box and wait until it has taken it."""
    box.fill(typed)
    box.press("Enter")
    wait_until(lambda: cell(page, AGENT_CELL).locator(LIVE_BOX).count() == 0, "answered")


def shot(page: Any, name: str, folder: Path) -> None:
    """A screenshot of the whole page, the agent cell in view."""
    waiting = cell(page, AGENT_CELL).locator("details.nbagent-waiting").locator("visible=true")
    waiting.scroll_into_view_if_needed()
    assert screenshot(page, name, folder).exists()


def test_questions_show_the_new_code_and_the_diff_highlighted_and_cards_short_ids(
    lab: Server, tmp_path: Path
) -> None:
    setup = kind(lab)
    nbformat.write(make_notebook(), lab.root / NAME)
    with chromium() as browser:
        page = open_notebook(browser, lab, NAME)
        page.set_viewport_size({"width": 1200, "height": 1100})
        run_cell(page, 0)
        run_cell(page, 1)
        run_cell(page, AGENT_CELL, wait=False)

        # The insert: the new cell's code, highlighted in the card, plain in the prompt.
        box = wait_for_question(page)
        assert open_prompt(page) == INSERT_PROMPT
        code = page.evaluate(CODE_STYLE, AGENT_CELL)
        assert code["text"].strip() == INSERTED
        assert code["keyword"] != code["plain"] and int(code["weight"]) >= 600
        shot(page, f"question-insert-{setup}-light", tmp_path)
        answer(page, box, "y")

        # The replace: the diff, its added and removed lines tinted, each its own colour.
        box = wait_for_question(page)
        assert open_prompt(page) == REPLACE_PROMPT
        diff = page.evaluate(CODE_STYLE, AGENT_CELL)
        assert diff["text"].strip() == DIFF
        backgrounds = {mark: colour for mark, colour in diff["lines"]}
        assert [mark for mark, _ in diff["lines"]] == ["@", " ", "-", "-", "+", "+", "+"]
        assert backgrounds[" "] == backgrounds["@"] == TRANSPARENT
        assert TRANSPARENT != backgrounds["-"] != backgrounds["+"] != TRANSPARENT
        assert diff["keyword"] != diff["plain"]
        shot(page, f"question-diff-{setup}-light", tmp_path)
        set_theme(page, "JupyterLab Dark")
        dark = page.evaluate(CODE_STYLE, AGENT_CELL)
        assert dark["keyword"] != diff["keyword"] and dark["plain"] != diff["plain"]
        shot(page, f"question-diff-{setup}-dark", tmp_path)
        set_theme(page, "JupyterLab Light")
        answer(page, box, "y")

        wait_until_ran(page, AGENT_CELL)
        cells = page.evaluate(CELLS)
        assert [source for _, source in cells[3:]] == [NEW_DATA, INSERTED]
        new_id = cells[4][0]
        outputs = cell(page, AGENT_CELL).locator(".jp-OutputArea")
        lines = [
            " ".join(line.split())
            for line in outputs.locator("details.nbagent-call > summary").all_inner_texts()
        ]
        assert lines[1:3] == [
            f"✓ NotebookEdit 7c1d5e2a → inserted cell {new_id[:8]} below it · allowed by you",
            "✓ NotebookEdit 7c1d5e2a → replaced: +3 -2 · allowed by you",
        ]
        said = outputs.inner_text()
        assert "The edits returned:" in said and DATA_ID in said  # the model got whole ids
        assert f"Inserted code cell {new_id} (5 lines) after cell {DATA_ID} of {NAME}" in said
        assert re.search(r"NotebookEdit\s+7c1d5e2a-", said) is None
        outputs.scroll_into_view_if_needed()
        assert screenshot(page, f"question-done-{setup}", tmp_path).exists()
