"""The registry browser: what a cell evaluating ``nbagent.registry`` shows in a notebook.

The kernel is idle then, so the browser's filters (ipywidgets) work.
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets

from nbagent.registry import ToolRegistry
from nbagent.transcript import plural


class RegistryBrowser:
    """A filterable table of a registry's tools; each row opens to show its schema.

    Args:
        registry: The registry to show.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.filter = widgets.Text(
            placeholder="filter by name or description", description="Filter"
        )
        self.state = widgets.ToggleButtons(options=["all", "loaded", "deferred"], value="all")
        self.table = widgets.HTML()
        self.filter.observe(self._refresh, names="value")
        self.state.observe(self._refresh, names="value")
        self.box = widgets.VBox([widgets.HBox([self.filter, self.state]), self.table])
        self._refresh()

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The tools shown under the current filters: name, source, state, flags."""
        needle = self.filter.value.strip().lower()
        rows = []
        for tool in self.registry.tools():
            state = "deferred" if self.registry.is_deferred(tool) else "loaded"
            if self.state.value != "all" and state != self.state.value:
                continue
            if (
                needle
                and needle not in tool.name.lower()
                and needle not in tool.description.lower()
            ):
                continue
            flags = ", ".join(
                f
                for f in ("read_only", "concurrency_safe", "should_defer", "always_load")
                if getattr(tool, f)
            )
            rows.append(
                (tool.name, f"mcp:{tool.server}" if tool.is_mcp else "python", state, flags)
            )
        return rows

    def _refresh(self, _change: Any = None) -> None:
        rows = self.rows()
        body = "".join(
            f'<details class="nbagent-tool"><summary><code>{html.escape(name)}</code> · '
            f"{html.escape(source)} · {state}{' · ' + html.escape(flags) if flags else ''}"
            f"</summary>{_schema_html(self.registry, name)}</details>"
            for name, source, state, flags in rows
        )
        total = len(self.registry)
        self.table.value = f"<div>{plural(len(rows), 'tool')} of {total}</div>{body}"


def _schema_html(registry: ToolRegistry, name: str) -> str:
    """A tool's description and input schema, as HTML."""
    tool = registry.get(name)
    schema = json.dumps(tool.input_schema, indent=2, ensure_ascii=False)
    return (
        f'<div style="white-space: pre-wrap">{html.escape(tool.description)}</div>'
        f"<pre>{html.escape(schema)}</pre>"
    )


def registry_mimebundle(registry: ToolRegistry) -> dict[str, Any]:
    """The output of ``nbagent.registry`` in a notebook: the browser, with static fallbacks.

    Args:
        registry: The registry.

    Returns:
        A mimebundle with the widget view, HTML and plain text.
    """
    browser = RegistryBrowser(registry)
    bundle = browser.box._repr_mimebundle_() or {}
    bundle["text/html"] = registry._repr_html_()
    bundle["text/plain"] = repr(registry)
    return bundle
