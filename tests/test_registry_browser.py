"""Tests of nbagent.registry_browser: the filterable table of tools."""

from __future__ import annotations

import ipywidgets as widgets

from nbagent.registry import ToolRegistry
from nbagent.registry_browser import RegistryBrowser, registry_mimebundle
from nbagent.tool import Tool


def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool(name="Read", description="Read a file.", read_only=True),
            Tool(
                name="mcp__gh__create_issue",
                description="Create an issue.",
                is_mcp=True,
                server="gh",
                input_schema={"type": "object", "properties": {"title": {"type": "string"}}},
            ),
        ]
    )


def test_registry_browser_filters_by_text_and_state() -> None:
    browser = RegistryBrowser(registry())
    assert [r[0] for r in browser.rows()] == ["Read", "mcp__gh__create_issue"]
    browser.state.value = "deferred"
    assert [r[0] for r in browser.rows()] == ["mcp__gh__create_issue"]
    assert "1 tool of 2" in browser.table.value
    browser.state.value = "all"
    browser.filter.value = "file"
    assert [r[0] for r in browser.rows()] == ["Read"]


def test_registry_browser_rows_open_on_the_schema() -> None:
    browser = RegistryBrowser(registry())
    row = '<details class="nbagent-tool"><summary><code>mcp__gh__create_issue</code>'
    assert row + " · mcp:gh · deferred" in browser.table.value
    assert "&quot;title&quot;" in browser.table.value


def test_registry_bundle_has_the_widget_and_static_fallbacks() -> None:
    bundle = registry_mimebundle(registry())
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<table>" in bundle["text/html"] and bundle["text/plain"].startswith(
        "ToolRegistry: 2 tools"
    )
    assert isinstance(widgets.Widget, type)
