"""The transcript and the widgets in a real JupyterLab, driven by Playwright in Debian's Chromium.

- The quick tour (``example_notebooks/00_quick_tour.ipynb``, offline against the scripted
  model): one card per tool call, the ToolSearch table inside its card, the answer set apart.
- A scripted run of every card state, live: running, waiting for the user (the last thing
  above JupyterLab's stdin box), ok, error, denied, interrupted; then the saved transcript,
  read back untrusted (JupyterLab's sanitizer keeps the classes the styles need) and as
  nbconvert HTML (no extension: the marks are text).

Screenshots of the cells in the light and the dark theme; with ``$NBAGENT_SCREENSHOTS`` set,
copies go there. JupyterLab's settings (the theme) live in the test's own folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.jupyterlab_server import CHROMIUM, LabServer, chromium, jupyterlab, screenshot

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[1] / "example_notebooks" / "00_quick_tour.ipynb"

STATES = """\
from nbagent.jupyter.display import CellTranscript
from nbagent.core.events import (
    PermissionAnswered, PermissionRequested, RunFinished, TextDelta, ToolCallFinished,
    ToolCallStarted, ToolSearchResults, ToolSetAnnounced, Usage, UsageReported,
)
from nbagent.catalogue.toolsearch import SearchHit

hits = (
    SearchHit("get_forecast", 12.0, ("'weather' in description (6)", "'forecast' name part (6)")),
    SearchHit("get_alerts", 8.0, ("'weather' in description (6)",)),
)
lines = "\\n".join(f"{i},{i * 3}" for i in range(42))
view = CellTranscript(live=True)
for event in [
    ToolSetAnnounced(("AskUserQuestion", "get_forecast", "get_alerts"), (), "", initial=True),
    TextDelta("Let me find a weather tool and look at the data."),
    ToolCallStarted("s1", "ToolSearch", {"query": "weather"}),
    ToolCallFinished("s1", "ToolSearch", "ok", "", 0.01, "allow: mode default"),
    ToolSearchResults("s1", "weather", hits, ("get_forecast", "get_alerts")),
    ToolCallStarted("r1", "Read", {"file_path": "data/sales.csv"}),
    ToolCallFinished("r1", "Read", "ok", lines, 0.002, "allow: mode default", "42 lines"),
    ToolCallStarted("b1", "Bash", {"command": "pytest -q tests/test_sales.py"}),
    ToolCallFinished(
        "b1", "Bash", "error", "3 failed, 4 passed\\nexit 1", 7.3, "", "exit 1: 3 failed"
    ),
    ToolCallStarted("d1", "Bash", {"command": "rm -rf data/"}),
    ToolCallFinished("d1", "Bash", "denied", "Denied.", 0.0, "deny: deny rule Bash(rm:*)"),
    ToolCallStarted("i1", "WebFetch", {"url": "https://example.com/slow"}),
    ToolCallFinished("i1", "WebFetch", "interrupted", "Interrupted.", 3.2),
    ToolCallStarted("g1", "get_forecast", {"city": "Paris", "days": 3}),
    ToolCallStarted("b2", "Bash", {"command": "git status --short"}),
    PermissionRequested(
        "b2", "Bash", "git status --short", "Bash is not read-only.", "Bash(git status:*)"
    ),
]:
    view(event)
answer = {"y": "yes", "a": "always"}.get(input("Allow? [y/n/a] ").strip(), "no")
for event in [
    PermissionAnswered("b2", answer, "Bash(git status:*)" if answer == "always" else ""),
    ToolCallFinished("b2", "Bash", "ok", " M sales.py", 0.05, "approved by the user"),
    ToolCallFinished("g1", "get_forecast", "ok", "sunny, 21 °C", 0.4),
    TextDelta("Three rows have a negative **quantity**; the tests reject them."),
    UsageReported(Usage(120, 80, 2000, 300)),
    RunFinished("end_turn", "", Usage(120, 80, 2000, 300)),
]:
    view(event)
"""
"""A cell that shows every card state live, waits on stdin, then ends the run."""

THEME_COLOURS = {
    "ok": "--jp-success-color1",
    "error": "--jp-error-color1",
    "denied": "--jp-warn-color1",
    "waiting": "--jp-warn-color1",
    "running": "--jp-brand-color1",
    "interrupted": "--jp-ui-font-color3",
}
"""The theme variable each card state's edge is drawn in."""

KERNEL_IDLE = (
    "window.jupyterapp && window.jupyterapp.shell.currentWidget"
    " && window.jupyterapp.shell.currentWidget.sessionContext"
    " && window.jupyterapp.shell.currentWidget.sessionContext.session"
    " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
    " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
    " === 'idle'"
)

COLOUR_OF = """(element, variable) => {
    const probe = document.createElement('span');
    probe.style.color = `var(${variable})`;
    element.appendChild(probe);
    const expected = getComputedStyle(probe).color;
    probe.remove();
    return [getComputedStyle(element).borderLeftColor, expected];
}"""
"""The left border colour of an element, and the colour of a theme variable there."""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("lab")
    folder = base / "root"
    folder.mkdir()
    shutil.copy(NOTEBOOK, folder / NOTEBOOK.name)
    states = nbformat.v4.new_notebook()
    states.metadata.kernelspec = {"name": "python3", "display_name": "Python 3"}
    states.cells = [nbformat.v4.new_code_cell(STATES, id="states")]
    nbformat.write(states, folder / "states.ipynb")
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    return folder


@pytest.fixture(scope="module")
def lab(root: Path) -> Iterator[LabServer]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    env = {
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_BASE_URL": "",
        "JUPYTERLAB_SETTINGS_DIR": str(root.parent / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(root.parent / "workspaces"),
    }
    with jupyterlab(root, env=env) as server:
        yield server


@pytest.fixture(scope="module")
def browser(lab: LabServer) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def open_notebook(browser: Any, lab: LabServer, name: str) -> Any:
    """A page showing a notebook (in a workspace of its own) with its kernel idle."""
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    page.goto(lab.page(f"lab/workspaces/{Path(name).stem}/tree/{name}"))
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    return page


@pytest.fixture(scope="module")
def tour(browser: Any, lab: LabServer) -> Iterator[Any]:
    page = open_notebook(browser, lab, NOTEBOOK.name)
    page.evaluate("window.jupyterapp.commands.execute('editmenu:clear-all')")
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    yield page
    page.close()


def set_theme(page: Any, theme: str) -> None:
    """Change the theme as the Settings menu does, and wait until the page shows it."""
    page.evaluate(
        "theme => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme}); }",
        theme,
    )
    light = "true" if theme == "JupyterLab Light" else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    page.wait_for_timeout(500)


def shoot(locator: Any, name: str, folder: Path) -> Path:
    """A screenshot of one element (a cell), kept in ``$NBAGENT_SCREENSHOTS`` too if set."""
    locator.scroll_into_view_if_needed()
    path = folder / f"{name}.png"
    locator.screenshot(path=str(path))
    keep = os.environ.get("NBAGENT_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def outputs(cell: Any) -> Any:
    """A cell's outputs (and its stdin box), without its source."""
    return cell.locator(".jp-Cell-outputWrapper")


def code_cell(page: Any, source: str) -> Any:
    return page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea", has_text=source))


def colours(locator: Any, variable: str) -> tuple[str, str]:
    """The element's left border colour, and the theme variable's colour."""
    border, expected = locator.evaluate(COLOUR_OF, variable)
    return border, expected


def test_the_agent_cell_shows_one_card_per_call(tour: Any, tmp_path: Path) -> None:
    agent = code_cell(tour, "%%agent -o result")
    agent.locator(".nbagent-answer").wait_for(timeout=60_000)
    cards = agent.locator("details.nbagent-call")
    assert cards.count() == 2  # ToolSearch (its table inside) and convert_temperature
    search, convert = cards.nth(0), cards.nth(1)
    assert (
        search.locator("summary")
        .inner_text()
        .strip()
        .startswith('✓ ToolSearch "convert temperature" → loaded 1: convert_temperature')
    )  # then " · ranked by bm25 (…)" if the embedding models were still loading
    assert convert.locator("summary").inner_text().strip() == (
        "✓ convert_temperature value=21, to='F' → 69.8"
    )
    output = agent.locator(".jp-OutputArea-output").inner_text()
    assert "deferred tools available" not in output  # the first announcement: no news
    assert "allow: mode default" not in output and "0.00 s" not in output
    assert agent.locator("table").count() == 1 and agent.locator("table caption").count() == 0
    assert "69.8 °F" in agent.locator(".nbagent-answer").inner_text()
    assert search.get_attribute("open") is None
    search.locator("summary").click()
    table = search.locator("table.nbagent-search")
    table.wait_for()
    assert "bm25 1.000 (normalised)" in table.inner_text()  # the default ranker, hybrid
    assert "query: convert temperature" in search.locator("pre.nbagent-input").inner_text()
    border, expected = colours(search, THEME_COLOURS["ok"])
    assert border == expected
    shoot(agent, "quick-tour-agent-cell-light", tmp_path)
    set_theme(tour, "JupyterLab Dark")
    border, expected = colours(search, THEME_COLOURS["ok"])
    assert border == expected
    assert shoot(agent, "quick-tour-agent-cell-dark", tmp_path).stat().st_size > 10_000
    set_theme(tour, "JupyterLab Light")
    assert screenshot(tour, "quick-tour", tmp_path).stat().st_size > 10_000


def test_the_registry_browser_filters_in_the_page(tour: Any, tmp_path: Path) -> None:
    browser = tour.locator(".jp-OutputArea-output input[placeholder^='filter']")
    browser.wait_for(timeout=60_000)
    rows = tour.locator("details.nbagent-tool")
    assert rows.count() >= 2  # ToolSearch, convert_temperature and the session's own tools
    browser.fill("fahrenheit")
    tour.wait_for_function("document.querySelectorAll('details.nbagent-tool').length === 1")
    rows.first.locator("summary").click()
    assert "The temperature." in rows.first.inner_text()  # the parameters, with their docs
    screenshot(tour, "registry-browser", tmp_path)


@pytest.fixture(scope="module")
def states(browser: Any, lab: LabServer) -> Iterator[Any]:
    """The states notebook, its cell run up to the question on stdin."""
    page = open_notebook(browser, lab, "states.ipynb")
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.locator(".jp-Stdin-input").wait_for(timeout=60_000)
    yield page
    page.close()


def test_every_card_state_is_clear_live(states: Any, tmp_path: Path) -> None:
    cell = code_cell(states, "CellTranscript(live=True)")
    live = cell.locator(".nbagent-live")
    for state in ("ok", "error", "denied", "interrupted", "running", "waiting"):
        assert live.locator(f"details.nbagent-{state}").count() >= 1, state
    assert "AskUserQuestion" not in live.inner_text()  # the first announcement
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(states, theme)
        for state, variable in THEME_COLOURS.items():
            card = live.locator(f"details.nbagent-{state}:visible").first
            border, expected = colours(card, variable)
            assert border == expected, (theme, state)
        name = "light" if theme.endswith("Light") else "dark"
        shoot(outputs(cell), f"card-states-waiting-{name}", tmp_path)
    set_theme(states, "JupyterLab Light")


def test_the_waiting_card_is_the_last_thing_above_the_stdin_box(states: Any) -> None:
    cell = code_cell(states, "CellTranscript(live=True)")
    waiting = cell.locator("details.nbagent-waiting:visible")
    assert waiting.count() == 1 and waiting.get_attribute("open") is not None
    assert waiting.locator(".nbagent-request code").inner_text() == "git status --short"
    choices = waiting.locator(".nbagent-choices").inner_text()
    assert "y yes · n no · a always (adds Bash(git status:*))" in choices
    below = states.evaluate(
        """() => {
            const card = [...document.querySelectorAll('details.nbagent-waiting')]
                .find(d => d.offsetParent !== null);
            const stdin = document.querySelector('.jp-Stdin');
            const after = [...document.querySelectorAll('.nbagent-live *')].filter(e =>
                e.offsetParent !== null && !card.contains(e) && e !== card &&
                !e.contains(card) && e.getBoundingClientRect().height > 0 &&
                e.getBoundingClientRect().top >= card.getBoundingClientRect().bottom);
            return [stdin.getBoundingClientRect().top - card.getBoundingClientRect().bottom,
                    after.map(e => e.className)];
        }"""
    )
    gap, between = below
    assert 0 <= gap < 40 and between == []


def test_the_tool_search_table_is_aligned_live(states: Any, tmp_path: Path) -> None:
    cell = code_cell(states, "CellTranscript(live=True)")
    card = cell.locator("details.nbagent-ok", has_text="ToolSearch").first
    card.locator("summary").click()
    table = card.locator("table.nbagent-search")
    table.wait_for()
    aligns = table.evaluate(
        "t => [...t.rows].map(r => [...r.cells].map(c => getComputedStyle(c).textAlign))"
    )
    assert all(row == ["left", "right", "left", "left"] for row in aligns), aligns
    heights = table.evaluate(
        "t => [...t.tBodies[0].rows].map(r => r.getBoundingClientRect().height)"
    )
    font = table.evaluate("t => parseFloat(getComputedStyle(t).fontSize)")
    assert max(heights) < 3.5 * font  # no widget line height: at most two lines of text
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(states, theme)
        shoot(card, f"tool-search-live-{theme.split()[-1].lower()}", tmp_path)
    set_theme(states, "JupyterLab Light")
    card.locator("summary").click()


def test_after_the_answer_the_cell_keeps_the_static_transcript(
    states: Any, root: Path, tmp_path: Path
) -> None:
    stdin = states.locator(".jp-Stdin-input")
    stdin.fill("a")
    stdin.press("Enter")
    cell = code_cell(states, "CellTranscript(live=True)")
    cell.locator(".jp-RenderedMarkdown .nbagent-answer").wait_for(timeout=60_000)
    static = cell.locator(".jp-RenderedMarkdown").last
    text = static.inner_text()
    assert "allowed by you, always: added rule Bash(git status:*)" in text
    assert "→ denied: deny rule Bash(rm:*)" in text and "negative quantity" in text
    assert static.locator("details.nbagent-waiting").count() == 0
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(states, theme)
        shoot(outputs(cell), f"card-states-saved-{theme.split()[-1].lower()}", tmp_path)
    set_theme(states, "JupyterLab Light")
    states.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
    states.wait_for_function(
        "!window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )


def test_an_untrusted_copy_keeps_the_classes_the_styles_need(
    browser: Any, lab: LabServer, root: Path, tmp_path: Path
) -> None:
    """JupyterLab sanitizes an untrusted notebook's Markdown: the cards must still be cards."""
    saved = nbformat.read(root / "states.ipynb", as_version=4)
    assert "nbagent-answer" in json.dumps(saved.cells[0].outputs)
    saved.metadata["copied"] = True  # no longer matches its signature: untrusted
    nbformat.write(saved, root / "untrusted.ipynb")
    page = open_notebook(browser, lab, "untrusted.ipynb")
    try:
        output = page.locator(".jp-RenderedMarkdown").first
        output.wait_for(timeout=60_000)
        trusted = page.evaluate(
            "window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
        )
        assert trusted is False
        for state in ("ok", "error", "denied", "interrupted"):
            card = output.locator(f"details.nbagent-call.nbagent-{state}").first
            border, expected = colours(card, THEME_COLOURS[state])
            assert border == expected, state
        assert output.locator(".nbagent-mark").count() == 7
        assert output.locator("hr.nbagent-rule").evaluate("e => getComputedStyle(e).display") == (
            "none"
        )
        answer = output.locator(".nbagent-answer")
        border, expected = colours(answer, "--jp-brand-color1")
        assert border == expected
        shoot(outputs(page.locator(".jp-CodeCell").first), "untrusted-saved-light", tmp_path)
    finally:
        page.close()


def test_nbconvert_html_reads_without_the_extension(
    browser: Any, root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "html"
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(out)]
        + [str(root / "states.ipynb")],
        check=True,
        capture_output=True,
    )
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    try:
        page.goto((out / "states.html").as_uri())
        cell = page.locator(".jp-CodeCell").first
        text = cell.inner_text()
        for line in (
            '✓ ToolSearch "weather" → loaded 2: get_forecast, get_alerts',
            "✓ Read data/sales.csv → 42 lines",
            "✗ Bash pytest -q tests/test_sales.py → exit 1: 3 failed · 7.3 s",
            "⊘ Bash rm -rf data/ → denied: deny rule Bash(rm:*)",
            "■ WebFetch https://example.com/slow → interrupted after 3.2 s",
        ):
            assert line in text
        assert page.locator("hr.nbagent-rule").is_visible()  # the answer set apart, unstyled
        assert shoot(outputs(cell), "nbconvert-html", tmp_path).stat().st_size > 10_000
    finally:
        page.close()
