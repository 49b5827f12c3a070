"""Tests of the benchmarks' own dev data: the MCP-Bench set and how its relevance is derived."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MCPBENCH = REPO / "benchmarks" / "data" / "mcpbench"

_spec = importlib.util.spec_from_file_location(
    "fetch_mcpbench", REPO / "benchmarks" / "fetch_mcpbench.py"
)
_fetch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fetch)
mentioned = _fetch.mentioned

NAMES = ["search", "mean", "median", "max", "get_sections", "getPoolOHLCV", "think"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Step 1: call Math MCP:mean on the list", ["mean"]),
        ("Use Math MCP: mean, median and max", ["mean", "median", "max"]),
        ("then `search` the archive", ["search"]),
        ("invoke search(query) first", ["search"]),
        ("get_sections of each page, then getPoolOHLCV", ["get_sections", "getPoolOHLCV"]),
        ("a literature search to find the mean value; think hard", []),
        ("get_sections_v2 is not a tool here", []),
    ],
)
def test_a_tool_counts_when_the_plan_names_it_as_a_tool(text: str, expected: list[str]) -> None:
    assert mentioned(text, "Math MCP", NAMES) == [n for n in NAMES if n in expected]


def test_every_relevant_tool_of_the_tasks_is_a_listed_tool_of_the_tasks_servers() -> None:
    tools = {(t["server"], t["name"]) for t in json.loads((MCPBENCH / "tools.json").read_text())}
    tasks = json.loads((MCPBENCH / "tasks.json").read_text())["tasks"]
    assert len(tasks) == 103 and len({t["id"] for t in tasks}) == 103
    for task in tasks:
        assert task["relevant"] and task["query"].strip()
        for entry in task["relevant"]:
            assert (entry["server"], entry["name"]) in tools
            assert entry["server"] in task["servers"]
