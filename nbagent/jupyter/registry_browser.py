"""The registry browser: what a cell evaluating ``nbagent.registry`` shows in a notebook.

One row per tool (:meth:`~nbagent.catalogue.registry.ToolRegistry.rows`, the rows of every
table of tools): its name, where it comes from, its state in this session, its one-line
description and its flags; a row opens on the whole description and a parameter table
(:mod:`nbagent.render.schema_view`). The state needs the agent: the registry knows which tools are
deferred, only the agent knows which of those the model has loaded with ToolSearch. The kernel
is idle while the user looks, so the filters (ipywidgets) work.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import ipywidgets as widgets

from nbagent.catalogue.registry import (
    DEFERRED,
    LOADED,
    LOADED_BY_SEARCH,
    STATES,
    ToolRegistry,
    ToolRow,
)
from nbagent.core.markup import escape_html
from nbagent.core.text import plural
from nbagent.render.schema_view import parameters_html

_FLAG_LABELS = {
    "read_only": "read-only",
    "concurrency_safe": "concurrent",
    "should_defer": "defer",
    "always_load": "always load",
}
"""The short label of each of a row's flags (:data:`~nbagent.catalogue.registry.FLAGS`)."""
_STATE_COLORS = {
    LOADED: "var(--jp-success-color1)",
    DEFERRED: "var(--jp-ui-font-color2)",
    LOADED_BY_SEARCH: "var(--jp-brand-color1)",
}
_STYLE = """<style>
.nbagent-registry { color: var(--jp-ui-font-color1); font-size: var(--jp-ui-font-size1); }
.nbagent-registry .nbagent-count { color: var(--jp-ui-font-color2); margin: 2px 0 6px; }
.nbagent-registry details { border-bottom: 1px solid var(--jp-border-color2); }
.nbagent-registry summary { cursor: pointer; padding: 3px 4px; }
.nbagent-registry summary:hover { background: var(--jp-layout-color2); }
.nbagent-registry .nbagent-row {
  display: inline-grid; grid-template-columns: 18em 8em 11.5em minmax(0, 1fr) auto;
  gap: 8px; width: calc(100% - 2em); vertical-align: top;
}
.nbagent-registry .nbagent-row > span { overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }
.nbagent-registry code { font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size); color: var(--jp-content-font-color1); }
.nbagent-registry .nbagent-muted { color: var(--jp-ui-font-color2); }
.nbagent-registry .nbagent-flag { color: var(--jp-ui-font-color2);
  border: 1px solid var(--jp-border-color1); border-radius: 3px; padding: 0 4px;
  margin-left: 4px; font-size: var(--jp-ui-font-size0); }
.nbagent-registry .nbagent-body { padding: 4px 8px 10px 1.6em; }
.nbagent-registry .nbagent-description { white-space: pre-wrap; margin-bottom: 6px;
  color: var(--jp-content-font-color1); }
</style>"""


class RegistryBrowser:
    """A filterable list of a registry's tools; each row opens on its description and parameters.

    Args:
        registry: The registry to show.
        loaded_by_search: Returns the names of the tools the model has loaded with ToolSearch
            (the agent's ``loaded_names``); called at every refresh. None: no agent, so no
            tool is shown as loaded by ToolSearch.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        loaded_by_search: Callable[[], Collection[str]] | None = None,
    ) -> None:
        self.registry = registry
        self.loaded_by_search = loaded_by_search
        self.filter = widgets.Text(
            placeholder="filter by name or description", description="Filter"
        )
        self.state = widgets.ToggleButtons(
            options=["all", *STATES], value="all", style={"button_width": "auto"}
        )
        self.reload = widgets.Button(
            description="Refresh", icon="refresh", tooltip="Read the registry and states again"
        )
        self.table = widgets.HTML()
        self.filter.observe(self._refresh, names="value")
        self.state.observe(self._refresh, names="value")
        self.reload.on_click(self._refresh)
        self.box = widgets.VBox([widgets.HBox([self.filter, self.state, self.reload]), self.table])
        self._refresh()

    def all_rows(self) -> list[ToolRow]:
        """Every tool of the registry, in registration order, with its state now."""
        found = self.loaded_by_search() if self.loaded_by_search else ()
        return self.registry.rows(loaded_by_search=found)

    def rows(self) -> list[ToolRow]:
        """The tools shown under the current filters (name or description, and state)."""
        return self._shown(self.all_rows())

    def _shown(self, rows: list[ToolRow]) -> list[ToolRow]:
        needle = self.filter.value.strip().lower()
        return [
            row
            for row in rows
            if (self.state.value == "all" or row.state == self.state.value)
            and (not needle or needle in row.name.lower() or needle in row.tool.description.lower())
        ]

    def _refresh(self, _change: Any = None) -> None:
        every = self.all_rows()
        rows = self._shown(every)
        counts = ", ".join(
            f"{n} {state}" for state in STATES if (n := sum(r.state == state for r in every))
        )
        body = "".join(self._row_html(row) for row in rows)
        self.table.value = (
            f'{_STYLE}<div class="nbagent-registry"><div class="nbagent-count">'
            f"{plural(len(rows), 'tool')} of {len(every)}{' · ' + counts if counts else ''}"
            f"</div>{body}</div>"
        )

    @staticmethod
    def _row_html(row: ToolRow) -> str:
        """One tool: a summary line that opens on its description and parameter table."""
        name, line = escape_html(row.name), escape_html(row.description)
        flags = "".join(
            f'<span class="nbagent-flag" title="{flag}=True">{_FLAG_LABELS[flag]}</span>'
            for flag in row.flags
        )
        color = _STATE_COLORS[row.state]
        summary = (
            f'<span class="nbagent-row"><span title="{name}"><code>{name}</code></span>'
            f'<span class="nbagent-muted">{escape_html(row.source)}</span>'
            f'<span style="color: {color}">{row.state}</span>'
            f'<span title="{line}">{line}</span><span>{flags}</span></span>'
        )
        description = escape_html(row.tool.description.strip())
        return (
            f'<details class="nbagent-tool"><summary>{summary}</summary>'
            f'<div class="nbagent-body"><div class="nbagent-description">{description}</div>'
            f"{parameters_html(row.tool.input_schema)}</div></details>"
        )


def registry_mimebundle(
    registry: ToolRegistry, loaded_by_search: Callable[[], Collection[str]] | None = None
) -> dict[str, Any]:
    """The output of ``nbagent.registry`` in a notebook: the browser, with static fallbacks.

    Args:
        registry: The registry.
        loaded_by_search: Returns the names of the tools the model has loaded with ToolSearch
            (see :class:`RegistryBrowser`).

    Returns:
        A mimebundle with the widget view, HTML and plain text.
    """
    browser = RegistryBrowser(registry, loaded_by_search)
    names = loaded_by_search() if loaded_by_search else ()
    bundle = browser.box._repr_mimebundle_() or {}
    bundle["text/html"] = registry._repr_html_(loaded_by_search=names)
    bundle["text/plain"] = registry.__repr__(loaded_by_search=names)
    return bundle
