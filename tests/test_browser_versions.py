"""The extension in the oldest supported JupyterLab and Notebook, and in an older JupyterLab.

JupyterLab 4.4 and Notebook 7.4 (one environment, ``tests/lab_versions.OLDEST``): an
``%%agent`` cell inserts a cell into the open notebook and runs it, and the page shows the new
cell with its output without a reload, the file untouched; the extension's ``hello`` names the
application, its version and the extension's. JupyterLab 4.3 (``UNSUPPORTED``), which has no
kernel subshells: the extension still loads and says ``hello`` with the versions (and
``subshell: false``), so that the kernel can tell the user what to upgrade. Each page's console
has no error or version warning from the extension. Screenshots of each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.components import require
from tests.jupyterlab_server import LAB_OPTIONS, chromium, lab_setup, screenshot, wait_until
from tests.lab_versions import OLDEST, UNSUPPORTED, LabEnv
from tests.test_browser_notebook import CELLS, PANEL_READY, run_cell, wait_until_ran
from tests.tools.rtc import KERNEL, Server, jupyter_server

pytestmark = pytest.mark.slow

PACKAGE = json.loads((Path(__file__).parents[1] / "package.json").read_text())
EXTENSION_VERSION = PACKAGE["version"]
REQUIRED = sorted(
    {shared["requiredVersion"] for shared in PACKAGE["jupyterlab"]["sharedPackages"].values()}
)
"""The version ranges the extension asks of the modules JupyterLab shares (e.g. ``^4.4.0``)."""
SAID = "hello from the agent's cell"
INSERTED = f"print({SAID!r})"

RECORD = """() => {
    window.nbagentSent = [];
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    kernel.anyMessage.connect((_, {msg, direction}) => {
        const data = msg.content && msg.content.data;
        if (direction === 'send' && msg.header.msg_type === 'comm_msg' && data
                && ['hello', 'path', 'bye'].includes(data.op)) {
            window.nbagentSent.push({data: data, subshell: msg.header.subshell_id || null});
        }
    });
}"""
"""Record what the extension says on its comm (hello, path, bye) as the page sends it."""


def make_notebook() -> Any:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.kernelspec = {"name": KERNEL, "display_name": "nbagent test"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext nbagent\n%config NbAgent.permission_mode = 'bypassPermissions'",
            id="setup",
        ),
        nbformat.v4.new_code_cell("data = [3, 1, 4]", id="data"),
        nbformat.v4.new_code_cell("%%agent\nSay hello in a new cell and run it.", id="agent"),
    ]
    return notebook


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


def serve(env: LabEnv, base: Path, fake_api: FakeAnthropicServer, *options: str) -> Any:
    """A Jupyter server from ``env`` with this checkout's extension, talking to the fake API."""
    require(env.present(), f"{' '.join(env.pins)} at {env.path}", env.how)
    lab_setup("plain", base)
    api = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    return jupyter_server(env.python, base, (*LAB_OPTIONS, *options), env=api)


@pytest.fixture(scope="module")
def oldest(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    """JupyterLab 4.4 and Notebook 7.4 on one server."""
    base = tmp_path_factory.mktemp("lab44")
    notebook_app = "--JupyterNotebookApp.expose_app_in_browser=True"
    with serve(OLDEST, base, fake_api, notebook_app) as server:
        yield server


@pytest.fixture(scope="module")
def unsupported(
    tmp_path_factory: pytest.TempPathFactory, fake_api: FakeAnthropicServer
) -> Iterator[Server]:
    """JupyterLab 4.3."""
    with serve(UNSUPPORTED, tmp_path_factory.mktemp("lab43"), fake_api) as server:
        yield server


class Console:
    """What a page logs: console messages and failed requests."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        page.on("console", lambda message: self.messages.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.messages.append(f"pageerror: {error}"))
        page.on(
            "response",
            lambda response: (
                response.status >= 400
                and self.messages.append(f"http {response.status}: {response.url}")
            ),
        )

    def of_the_extension(self) -> list[str]:
        """The errors and warnings that are the extension's: they name it, a comm, or a shared
        module's version it asked for (webpack's "Unsatisfied version ... (required ^4.4.0)";
        other extensions' ask for other versions)."""
        ours = "|".join(re.escape(f"(required {required})") for required in REQUIRED)
        return [
            message
            for message in self.messages
            if re.match(r"(error|warning|pageerror|http)", message)
            and re.search(rf"nbagent|\b[Cc]omms?\b|{ours}", message)
            # JupyterLab times each plugin's start, waiting for the plugins it needs included:
            # on a busy machine every plugin is "slow" (the extension's start does no I/O).
            and not re.search(r"(took [\d.]+ms|is taking too long) to activate", message)
        ]


def open_notebook(browser: Any, server: Server, url: str) -> tuple[Any, Console]:
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    console = Console(page)
    page.goto(f"{server.url}{url}?token={server.token}", timeout=90_000)
    page.wait_for_function(PANEL_READY, timeout=90_000, polling=100)
    page.evaluate(RECORD)
    return page, console


def hellos(page: Any) -> list[dict[str, Any]]:
    return [sent for sent in page.evaluate("window.nbagentSent") if sent["data"]["op"] == "hello"]


@pytest.mark.parametrize(
    ("app", "url", "version"),
    [("JupyterLab", "lab/tree/{}", "4.4.10"), ("Notebook", "notebooks/{}", "7.4.7")],
)
def test_an_agent_cell_edits_the_open_notebook_in_the_oldest_supported_versions(
    oldest: Server,
    fake_api: FakeAnthropicServer,
    tmp_path: Path,
    app: str,
    url: str,
    version: str,
) -> None:
    name = f"oldest-{app.lower()}.ipynb"
    path = oldest.root / name
    nbformat.write(make_notebook(), path)
    written = path.read_text()
    fake_api.wait_idle()
    with chromium() as browser:
        page, console = open_notebook(browser, oldest, url.format(name))
        run_cell(page, 0)
        run_cell(page, 1)

        def inserted(body: dict[str, Any]) -> Reply:
            said = body["messages"][-1]["content"][-1]["content"]
            found = re.search(r"Inserted code cell (\S+)", said)
            assert found, said
            return Reply.tool_use("NotebookRun", {"cell_id": found.group(1)})

        fake_api.enqueue(
            Reply.tool_use("NotebookRead", {}),
            Reply.tool_use(
                "NotebookEdit", {"edit_mode": "insert", "cell_id": "data", "new_source": INSERTED}
            ),
            inserted,
            Reply.text("The new cell says hello."),
        )
        run_cell(page, 2, wait=False)
        cells = wait_until(lambda: len(page.evaluate(CELLS)) == 4 and page.evaluate(CELLS), "4")
        assert [source.splitlines()[0] for _, source, _ in cells] == [
            "%load_ext nbagent",
            "data = [3, 1, 4]",
            INSERTED,
            "%%agent",
        ]
        wait_until_ran(page, 3)
        new_cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
        assert SAID in new_cell.locator(".jp-OutputArea").inner_text()
        answer = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".jp-OutputArea")
        wait_until(lambda: "The new cell says hello." in answer.inner_text(), "the answer")
        shot = screenshot(page, f"oldest-{app.lower()}-{version}", tmp_path)

        sent = hellos(page)
        assert sent, page.evaluate("window.nbagentSent")
        hello = sent[-1]
        assert hello["data"]["versions"] == {
            "app": app,
            "version": version,
            "extension": EXTENSION_VERSION,
        }
        assert hello["data"]["subshell"] is True and hello["subshell"]
        label = {"JupyterLab": "JupyterLab", "Notebook": "Jupyter Notebook"}[app]
        assert hello["data"]["app"] == f"{label} {version}"
        assert console.of_the_extension() == []
    assert shot.exists()
    assert path.read_text() == written  # the page shows the edit; nothing wrote the file


def test_an_older_jupyterlab_says_hello_with_its_version(
    unsupported: Server, fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    name = "unsupported.ipynb"
    nbformat.write(make_notebook(), unsupported.root / name)
    with chromium() as browser:
        page, console = open_notebook(browser, unsupported, f"lab/tree/{name}")
        run_cell(page, 0)
        sent = wait_until(lambda: hellos(page), "the extension's hello")
        shot = screenshot(page, "unsupported-jupyterlab-4.3.8", tmp_path)
    hello = sent[-1]
    assert hello["data"]["versions"] == {
        "app": "JupyterLab",
        "version": "4.3.8",
        "extension": EXTENSION_VERSION,
    }
    assert hello["data"]["app"] == "JupyterLab 4.3.8"
    assert hello["data"]["subshell"] is False and hello["subshell"] is None
    # JupyterLab 4.3 shares older modules than the extension asks for: webpack says so (a
    # warning), and nothing fails.
    assert not [m for m in console.of_the_extension() if not m.startswith("warning:")]
    assert shot.exists()
