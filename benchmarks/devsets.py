"""The hand-written query sets of ``benchmarks/data/`` and the catalogues they search.

- ``keyword_queries.json``: 129 short queries as a model types them into ToolSearch (2 to 5
  words), over the github-mcp-server tools plus the MCP reference servers'
  (``reference_servers.json``, written by ``fetch_reference_tools.py``); every third query
  (43) is in the ``dev`` split used to fit weights, the other 86 in the ``test`` split that
  the benchmark reports.
- ``task_dev_queries.json``: 74 task-style requests over the LiveMCPBench tools, written by
  hand for fitting weights in the long-query setting without touching the LiveMCPBench
  evaluation queries.
- ``paraphrase_queries.json``: 118 short queries over the LiveMCPBench tools, each naming its
  target tools: 96 English ones (``kind: paraphrase``) that ask as a person or a model would
  without the words of the targets' names and descriptions (synonyms, the goal described,
  indirect phrasing: "where can I plug in my Tesla around here" for
  ``find_ev_charging_stations``), and 22 (``kind: cross-language``) in Chinese, Japanese,
  Korean, Spanish, German or French for tools described in English. Every third query of each
  kind (32 + 8) is in the ``dev`` split that ``fit_weights.py`` fits on, weighted as much as
  the keyword queries; the other 78 are the ``test`` split that ``paraphrase_quality.py``
  reports.
- ``multilingual_queries.json``: 45 short queries in Chinese, Japanese, Korean, Spanish,
  German, French and English over the LiveMCPBench tools (61 of which are described in
  Chinese), 20 of them asking in another language for a tool described in English
  (``described_in: en``); nothing is fitted on it.
- ``mcpbench/``: 103 long tasks (about 200 words each, 8.8 relevant tools on average) over the
  257 tools of MCP-Bench's 28 servers, derived from Accenture's MCP-Bench (Apache-2.0) by
  ``fetch_mcpbench.py`` (``mcpbench/NOTICE.md`` says from what); a dev set of other servers
  and of longer, several-step requests than LiveMCPBench's, used for fitting only.

The hand-written sets were written from the tool lists before any ranker was run on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalogue import Catalogue, McpDefinition, build_catalogue, github_definitions

DATA = Path(__file__).resolve().parent / "data"
"""The directory of the hand-written data."""


@dataclass(frozen=True)
class KeywordQuery:
    """One short query and the tools that answer it."""

    query: str
    """The query."""
    relevant: frozenset[str]
    """The answering tools as ``server/tool``."""
    split: str
    """``dev`` or ``test``."""


def read(name: str) -> Any:
    """Read one JSON file of ``benchmarks/data``.

    Args:
        name: The file name.

    Returns:
        The parsed JSON.
    """
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def reference_definitions() -> list[McpDefinition]:
    """Load the MCP reference servers' tools (everything, filesystem, memory, time, git).

    Returns:
        50 definitions, in server order.
    """
    return [
        McpDefinition(t["server"], t["name"], t["description"], t["input_schema"])
        for t in read("reference_servers.json")["tools"]
    ]


def keyword_catalogue() -> Catalogue:
    """Build the catalogue the keyword queries search: GitHub's tools and the reference servers'.

    Returns:
        167 deferred MCP tools.
    """
    return build_catalogue(github_definitions() + reference_definitions())


def keyword_queries(split: str | None = None) -> list[KeywordQuery]:
    """Load the keyword queries.

    Args:
        split: ``dev`` or ``test``; both when ``None``.

    Returns:
        The queries, in file order.
    """
    return [
        KeywordQuery(q["query"], frozenset(q["relevant"]), q["split"])
        for q in read("keyword_queries.json")["queries"]
        if split in (None, q["split"])
    ]


def multilingual_queries() -> list[dict[str, Any]]:
    """Load the multilingual queries.

    Returns:
        45 queries with ``language`` (``zh``, ``ja``, ``ko``, ``es``, ``de``, ``fr``, ``en``),
        ``query`` and ``relevant`` (``server/tool`` over the LiveMCPBench tools).
    """
    return read("multilingual_queries.json")["queries"]


def paraphrase_queries(split: str | None = None) -> list[dict[str, Any]]:
    """Load the paraphrased and cross-language queries.

    Args:
        split: ``dev`` or ``test``; both when ``None``.

    Returns:
        Queries with ``kind`` (``paraphrase`` or ``cross-language``), ``language``, ``query``,
        ``relevant`` (``server/tool`` over the LiveMCPBench tools, any of which answers) and
        ``split``, in file order.
    """
    return [q for q in read("paraphrase_queries.json")["queries"] if split in (None, q["split"])]


def paraphrase_holdout() -> list[dict[str, Any]]:
    """Load the second held-out set of paraphrased and cross-language queries.

    Written by hand on 2026-12-06 from the tool list, after the weights were fitted and
    before any ranker ran on them, to test again what the first ``test`` split had been looked
    at for; nothing is fitted on them.

    Returns:
        Queries shaped as :func:`paraphrase_queries` gives them, ``split`` ``holdout``.
    """
    return list(read("paraphrase_holdout.json")["queries"])


def mcpbench_catalogue() -> Catalogue:
    """Build the catalogue the MCP-Bench tasks search.

    Returns:
        257 deferred MCP tools of 28 servers.
    """
    return build_catalogue(
        [
            McpDefinition(t["server"], t["name"], t["description"], t["input_schema"])
            for t in read("mcpbench/tools.json")
        ]
    )


def mcpbench_tasks() -> list[dict[str, Any]]:
    """Load the MCP-Bench tasks.

    Returns:
        103 tasks with ``id``, ``kind`` (``single``, ``2server``, ``3server``), ``servers``,
        ``query`` and ``relevant`` (``{server, name}``).
    """
    return read("mcpbench/tasks.json")["tasks"]


def task_dev_queries() -> list[dict[str, Any]]:
    """Load the task-style dev queries (the format of LiveMCPBench's ``queries.json``).

    Returns:
        74 tasks with ``query`` and ``relevant`` (``{name, servers}``).
    """
    return read("task_dev_queries.json")["queries"]
