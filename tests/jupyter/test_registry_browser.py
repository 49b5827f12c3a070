"""Tests of nbagent.jupyter.registry_browser: the filterable table of tools."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from nbagent.catalogue.registry import STATES, ToolRegistry, ToolRow
from nbagent.core.tool import Tool
from nbagent.jupyter.registry_browser import RegistryBrowser, registry_mimebundle


def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool(
                name="Read",
                description="Read a file. Text comes back\nwith line numbers.\n\nArgs: none.",
                read_only=True,
            ),
            Tool(
                name="mcp__gh__create_issue",
                description="Create an issue.",
                is_mcp=True,
                server="gh",
                input_schema={
                    "type": "object",
                    "required": ["title"],
                    "properties": {
                        "title": {"type": "string", "description": "The title."},
                        "labels": {"type": "array", "items": {"type": "string"}},
                    },
                },
            ),
            Tool(
                name="mcp__gh__close_issue",
                description="Close an issue.",
                is_mcp=True,
                server="gh",
            ),
        ]
    )


def names(rows: list[ToolRow]) -> list[str]:
    return [row.name for row in rows]


def test_rows_give_source_state_one_line_description_and_flags() -> None:
    rows = RegistryBrowser(registry()).rows()
    assert rows[0] == ToolRow(
        "Read", "python", "loaded", "Read a file.", ("read_only",), tool=rows[0].tool
    )
    assert (rows[1].source, rows[1].state, rows[1].flags) == ("mcp:gh", "deferred", ())
    page = RegistryBrowser(registry()).table.value
    assert '<span class="nbagent-flag" title="read_only=True">read-only</span>' in page


def test_tools_the_model_loaded_with_tool_search_are_shown_so_at_each_refresh() -> None:
    loaded: list[str] = []
    browser = RegistryBrowser(registry(), loaded_by_search=lambda: loaded)
    assert [row.state for row in browser.rows()] == ["loaded", "deferred", "deferred"]
    loaded.append("mcp__gh__create_issue")
    assert [row.state for row in browser.rows()] == ["loaded", "loaded by ToolSearch", "deferred"]
    assert "loaded by ToolSearch" not in browser.table.value  # the table shows the last refresh
    browser.reload.click()
    assert "1 loaded, 1 deferred, 1 loaded by ToolSearch" in browser.table.value
    loaded.append("Read")  # a name the model loaded that the registry sends anyway
    assert browser.rows()[0].state == "loaded"


def test_filters_by_text_and_by_every_state() -> None:
    browser = RegistryBrowser(registry(), loaded_by_search=lambda: ["mcp__gh__close_issue"])
    assert list(browser.state.options) == ["all", *STATES]
    browser.state.value = "deferred"
    assert names(browser.rows()) == ["mcp__gh__create_issue"]
    assert "1 tool of 3" in browser.table.value
    browser.state.value = "loaded by ToolSearch"
    assert names(browser.rows()) == ["mcp__gh__close_issue"]
    browser.state.value = "all"
    browser.filter.value = "line numbers"  # past the first line of the description
    assert names(browser.rows()) == ["Read"]
    browser.filter.value = "ISSUE"
    assert names(browser.rows()) == ["mcp__gh__create_issue", "mcp__gh__close_issue"]


def test_an_opened_row_shows_the_whole_description_and_a_parameter_table() -> None:
    page = RegistryBrowser(registry()).table.value
    row = page[page.index('<details class="nbagent-tool"><summary><span class="nbagent-row">') :]
    assert "<code>mcp__gh__create_issue</code>" in page
    assert "Text comes back\nwith line numbers.\n\nArgs: none." in row
    assert "<td" in page and ">labels</td>" in page and ">array of string</td>" in page
    assert "&quot;title&quot;" not in page  # no raw JSON Schema
    assert "var(--jp-ui-font-color2)" in page


class Tags(HTMLParser):
    """Collects the tags and the text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text = ""

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text += data


def test_text_from_an_mcp_server_is_escaped_everywhere() -> None:
    hostile = '<img src=x onerror="alert(1)"> <b>bold</b>'
    reg = ToolRegistry(
        [
            Tool(
                name="mcp__evil__x",
                description=hostile,
                is_mcp=True,
                server="<i>evil</i>",
                input_schema={
                    "type": "object",
                    "properties": {"<b>p</b>": {"description": hostile, "enum": [hostile]}},
                },
            )
        ]
    )
    for page in (RegistryBrowser(reg).table.value, reg._repr_html_()):
        parsed = Tags()
        parsed.feed(page)
        assert not parsed.tags & {"img", "i", "script"}
        assert hostile in parsed.text


def test_bundle_has_the_widget_and_static_fallbacks_with_the_same_states() -> None:
    bundle = registry_mimebundle(registry(), loaded_by_search=lambda: ["mcp__gh__close_issue"])
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    assert "<table>" in page and "<td>loaded by ToolSearch</td>" in page
    assert ">Read a file.</td>" in page
    text = bundle["text/plain"]
    assert text.startswith("ToolRegistry: 3 tools, 1 deferred, 1 loaded by ToolSearch")
    assert re.search(r"\nmcp__gh__close_issue +mcp:gh +loaded by ToolSearch +Close", text)
    plain = registry_mimebundle(registry())
    assert "loaded by ToolSearch" not in plain["text/html"] + plain["text/plain"]
