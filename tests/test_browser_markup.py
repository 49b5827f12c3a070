"""Injected markup never runs in a real JupyterLab (Debian's Chromium), live or after reopening.

A scripted model in the kernel answers an ``%%agent`` cell with text from outside that would
set a marker (``window.PWNED``, ``document.title``) if it became markup: an image whose
loading fails, an ``<svg onload>``, an ``<iframe srcdoc>``, a ``<script>``, a ``<details
ontoggle>``, a code-span trick, a line that opened raw HTML, a ``javascript:`` link, an image
from a server the test watches. The same texts come as a web page's title, a task subject, a
plan shown for approval, an MCP tool's description and parameters (``%tools``), and in
``%agent history``. JupyterLab trusts output made in the session, and the save signs the
notebook, so the reopened notebook's outputs are trusted too; a control cell proves that
trusted HTML does run script here. The marker is never set, no element that loads or runs
anything is in the outputs, the watched server gets no request, and the transcript still
reads as Markdown (screenshots).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.test_browser_permissions import (
    LIVE_BOX,
    PANEL_READY,
    cell,
    open_notebook,
    run_cell,
    wait_for_text,
    wait_until_ran,
)
from tests.tools.rtc import KERNEL, Server, jupyter_server

pytestmark = pytest.mark.slow

NAME = "hostile.ipynb"
MARK = "window.PWNED=1;document.title='PWNED'"
"""What each injection would run."""

SETUP = """\
import os

import nbagent
from nbagent.testing import Cite, FakeAnthropicServer, Reply, Text, WebResult
from nbagent.core.tool import Tool

api = FakeAnthropicServer().start()
os.environ["ANTHROPIC_API_KEY"] = "test-key"
os.environ["ANTHROPIC_BASE_URL"] = api.url
%load_ext nbagent
%config NbAgent.permission_mode = 'bypassPermissions'
%config NbAgent.server_tools = ['web_search']
%agent status"""

CONTROL = """\
from IPython.display import HTML
HTML('<img src=x onerror="window.NBAGENT_CONTROL=1">')"""
"""Trusted output that runs script: proof that the marker would be set if markup got through."""

ANSWER = """\
## Findings

The **mean** is 42 and the trend is *rising*; see [the docs](https://docs.python.org/3/).

- a `code` span
- an item

| month | revenue |
|---|--:|
| June | 9 |

```python
print("hello")
```
"""
"""Ordinary Markdown from the model, which must still render."""

BREAK = "\n\n"
"""Where the answer goes on in a new paragraph."""

CELLS = ("setup", "control", "script", "agent", "tools", "history")
SETUP_CELL, CONTROL_CELL, SCRIPT_CELL, AGENT_CELL, TOOLS_CELL, HISTORY_CELL = range(len(CELLS))

ACTIVE = (
    ".jp-OutputArea img, .jp-OutputArea iframe, .jp-OutputArea script, .jp-OutputArea object, "
    ".jp-OutputArea embed, .jp-OutputArea svg[onload], .jp-OutputArea [onerror], "
    ".jp-OutputArea [ontoggle], .jp-OutputArea a[href^='javascript' i]"
)
"""Elements of the outputs that load or run something (none may be there)."""


class Watched(http.server.BaseHTTPRequestHandler):
    """A server whose image would tell it that the notebook was shown: it records requests."""

    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """Record the request and send an empty image."""
        Watched.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet."""


@pytest.fixture(scope="module")
def watched() -> Iterator[str]:
    """The address of a watched server on loopback."""
    server = http.server.HTTPServer(("127.0.0.1", 0), Watched)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Plain JupyterLab with this checkout's nbagent extension."""
    base = tmp_path_factory.mktemp("lab-markup")
    python = lab_setup("plain", base)
    with jupyter_server(python, base, LAB_OPTIONS) as server:
        yield server


def hostile(watched: str) -> list[str]:
    """Texts from outside that would set the marker if they became markup."""
    return [
        f'<img src=x onerror="{MARK}"> <svg onload="{MARK}"></svg>',
        '<iframe srcdoc="<script>parent.PWNED=1</script>"></iframe>',
        f'<script>{MARK}</script> <details open ontoggle="{MARK}">x</details>',
        f'``<img src=x onerror="{MARK}">` and \n$a$ $b$ <img src=x onerror={MARK}//>',
        f"[click](javascript:{MARK}) ![beacon]({watched}/beacon.png) $x^2 < y$",
        "\x1b[8mhidden\x1b[0m rm -rf ~\u202e/txt.exe",
    ]


def script(texts: list[str], watched: str) -> str:
    """The cell that scripts the model and registers a hostile MCP tool."""
    every = " ".join(texts)
    page = f"WebResult({watched + '/page'!r}, {every!r})"
    return f"""\
page = {page}
nbagent.registry.register(Tool(
    name="mcp__evil__lookup", description={every!r}, is_mcp=True, server={texts[1]!r},
    input_schema={{"type": "object", "properties": {{
        {texts[0]!r}: {{"type": "string", "description": {every!r}, "default": {texts[3]!r}}}
    }}}},
    handler=lambda **kwargs: {every!r},
), replace=True)
api.replace_script([
    Reply.tool_use(
        "ToolSearch", {{"query": "select:TaskCreate,EnterPlanMode,ExitPlanMode,web_search"}}
    ),
    Reply.tool_use("TaskCreate", {{"subject": {every!r}}}),
    Reply.tool_use("Bash", {{"command": {"true # " + texts[5]!r}}}),
    Reply.tool_use("EnterPlanMode"),
    Reply.tool_use("ExitPlanMode", {{"plan": {every!r}}}),
    Reply.web_search({texts[2]!r}, (page,), then=[
        Text({every!r}, citations=(Cite(page.url, {texts[0]!r}),)),
        Text({BREAK + ANSWER!r}),
    ]),
])"""


def make_notebook(texts: list[str], watched: str) -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    sources = (
        SETUP,
        CONTROL,
        script(texts, watched),
        "%%agent\nLook it up.",
        "%tools mcp__evil__lookup\n%tools mcp__evil*",
        "%agent history\n%agent status",
    )
    notebook.cells = [
        nbformat.v4.new_code_cell(source, id=name)
        for name, source in zip(CELLS, sources, strict=True)
    ]
    return notebook


def assert_inert(page: Any, watched_requests: list[str], when: str) -> None:
    """The marker is not set, no agent output loads or runs anything, the watched server is
    quiet (the control cell's image is its own)."""
    assert page.evaluate("window.PWNED") is None, f"{when}: window.PWNED was set"
    assert page.title() != "PWNED", f"{when}: the title was changed"
    for index in (AGENT_CELL, TOOLS_CELL, HISTORY_CELL):
        found = cell(page, index).locator(ACTIVE)
        active = [found.nth(i).evaluate("e => e.outerHTML") for i in range(found.count())]
        assert not active, f"{when}: cell {index} holds {active}"
    assert page.evaluate("() => window.frames.length") == 0, f"{when}: a frame was made"
    assert watched_requests == [], f"{when}: the watched server was asked {watched_requests}"


def test_injected_markup_never_runs_live_or_after_save_and_reopen(
    lab: Server, watched: str, tmp_path: Path
) -> None:
    texts = hostile(watched)
    path = lab.root / NAME
    nbformat.write(make_notebook(texts, watched), path)
    Watched.requests.clear()
    with chromium() as browser:
        page = open_notebook(browser, lab, NAME)
        run_cell(page, SETUP_CELL)
        run_cell(page, CONTROL_CELL)
        wait_until(lambda: page.evaluate("window.NBAGENT_CONTROL") == 1, "trusted HTML runs")
        page.evaluate("delete window.NBAGENT_CONTROL")
        run_cell(page, SCRIPT_CELL)
        run_cell(page, AGENT_CELL, wait=False)

        # Live: the cards and the plan, while the plan waits for the person's answer.
        box = cell(page, AGENT_CELL).locator(LIVE_BOX)
        box.wait_for(timeout=90_000)
        output = cell(page, AGENT_CELL).locator(".jp-OutputArea")
        wait_for_text(output, "onerror", "the hostile texts show, as text")
        page.wait_for_timeout(500)  # an image's error, a frame's script, would have run
        assert_inert(page, Watched.requests, "live")
        box.scroll_into_view_if_needed()
        assert screenshot(page, "markup-live", tmp_path).exists()
        box.click()
        page.keyboard.type("n")
        page.keyboard.press("Enter")
        wait_until_ran(page, AGENT_CELL)
        wait_for_text(output, "hello", "the answer shows")
        run_cell(page, TOOLS_CELL)
        run_cell(page, HISTORY_CELL)
        page.wait_for_timeout(500)
        assert_inert(page, Watched.requests, "after the run")
        answer = cell(page, AGENT_CELL).locator(".nbagent-answer")
        for element in ("h2", "strong", "em", "li code", "table td", "pre code"):
            assert answer.locator(element).count(), f"the answer's {element} is rendered"
        assert answer.locator("a[href='https://docs.python.org/3/']").count() == 1
        answer.scroll_into_view_if_needed()
        assert screenshot(page, "markup-answer", tmp_path).exists()
        cell(page, TOOLS_CELL).scroll_into_view_if_needed()
        assert screenshot(page, "markup-magics", tmp_path).exists()

        # Saved (which signs the notebook) and reopened: the outputs are trusted, and inert.
        page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
        page.reload()
        page.wait_for_function(PANEL_READY, arg=NAME, timeout=90_000, polling=100)
        trusted = page.evaluate(
            f"() => window.jupyterapp.shell.currentWidget.content.model.cells.get({AGENT_CELL})"
            ".trusted"
        )
        assert trusted is True, "the reopened notebook's outputs are trusted"
        wait_for_text(
            cell(page, AGENT_CELL).locator(".jp-OutputArea"), "hello", "the reopened answer"
        )
        page.wait_for_timeout(1000)
        assert page.evaluate("window.NBAGENT_CONTROL") == 1, "the control cell ran again"
        assert_inert(page, Watched.requests, "reopened")
        cell(page, AGENT_CELL).scroll_into_view_if_needed()
        assert screenshot(page, "markup-reopened", tmp_path).exists()
