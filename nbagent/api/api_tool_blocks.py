"""The blocks of the API's tools (:mod:`nbagent.api.api_tools`) in an answer, read as events
for the display.

The API runs a web search inside its answer: a ``server_tool_use`` block (the query), then a
``web_search_tool_result`` block (the pages, or an error object), and text blocks whose
``citations`` point at those pages. The history keeps the blocks as they came; this module
only reads them, block by block as they complete, into :class:`~nbagent.core.events.WebSearched`
and :class:`~nbagent.core.events.TextCited`.

>>> reader = ServerBlockReader()
>>> use = {"type": "server_tool_use", "id": "srv_1", "name": "web_search",
...        "input": {"query": "python"}}
>>> reader.read(use) is None
True
>>> found = {"type": "web_search_tool_result", "tool_use_id": "srv_1",
...          "content": [{"type": "web_search_result", "title": "Python",
...                       "url": "https://python.org", "encrypted_content": "..."}]}
>>> reader.read(found).pages[0].url
'https://python.org'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagent.core.events import Citation, TextCited, WebPage, WebSearched


class ServerBlockReader:
    """Reads the blocks of one answer, in order, remembering the queries of its searches."""

    def __init__(self) -> None:
        self._queries: dict[str, str] = {}

    def read(self, block: Mapping[str, Any]) -> WebSearched | TextCited | None:
        """Read one complete block.

        Args:
            block: A content block, as a param dict.

        Returns:
            A search when the block is a web search's result, the citations when it is a
            text that cites web pages, else None.
        """
        kind = block.get("type")
        if kind == "server_tool_use":
            tool_input = block.get("input")
            query = tool_input.get("query") if isinstance(tool_input, Mapping) else None
            self._queries[str(block.get("id"))] = query if isinstance(query, str) else ""
        elif kind == "web_search_tool_result":
            return self._searched(block)
        elif kind == "text":
            return cited(block)
        return None

    def _searched(self, block: Mapping[str, Any]) -> WebSearched:
        """A web search from its result block (and the query of its use)."""
        use_id = str(block.get("tool_use_id"))
        content = block.get("content")
        query = self._queries.get(use_id, "")
        if isinstance(content, Mapping):
            return WebSearched(use_id, query, (), str(content.get("error_code") or "unavailable"))
        pages = tuple(
            WebPage(
                title=str(result.get("title") or ""),
                url=str(result.get("url") or ""),
                page_age=str(result.get("page_age") or ""),
            )
            for result in content or ()
            if isinstance(result, Mapping) and result.get("type") == "web_search_result"
        )
        return WebSearched(use_id, query, pages)


def cited(block: Mapping[str, Any]) -> TextCited | None:
    """The web pages a text block cites, if it cites any.

    Args:
        block: A text block.

    Returns:
        Its web search citations, or None.
    """
    citations = tuple(
        Citation(
            url=str(c.get("url") or ""),
            title=str(c.get("title") or ""),
            cited_text=str(c.get("cited_text") or ""),
        )
        for c in block.get("citations") or ()
        if isinstance(c, Mapping) and c.get("type") == "web_search_result_location"
    )
    return TextCited(citations) if citations else None
