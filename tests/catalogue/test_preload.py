"""Tests of nbagent.catalogue.preload: named servers, confident hits, the token budget."""

from __future__ import annotations

import pytest

from nbagent.catalogue.preload import named_servers, preload
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.tokens import definition_tokens
from nbagent.core.tool import Tool


def mcp(server: str, name: str, description: str) -> Tool:
    return Tool(name=f"mcp__{server}__{name}", description=description, is_mcp=True, server=server)


TOOLS = [
    mcp("github", "create_issue", "Create an issue in a repository."),
    mcp("github", "list_pull_requests", "List pull requests of a repository."),
    mcp("github", "star_repository", "Star a repository."),
    mcp("github", "fork_repository", "Fork a repository."),
    mcp("Yahoo-Finance", "get_quote", "Current stock price of a ticker."),
    mcp("slack", "post_message", "Post a message about an issue to a channel."),
    Tool(name="Loaded", description="A loaded tool about issues."),
]


@pytest.fixture
def search() -> ToolSearch:
    return ToolSearch(ToolRegistry(TOOLS), ranker="bm25")


def test_a_server_is_named_by_the_words_of_its_name() -> None:
    assert named_servers("Open a GitHub issue", TOOLS) == ["github"]
    assert named_servers("quote from yahoo finance please", TOOLS) == ["Yahoo-Finance"]
    assert named_servers("finance news from yahoo", TOOLS) == []
    assert named_servers("githubber", TOOLS) == []


def test_a_named_server_gives_its_best_tools_for_the_prompt(search: ToolSearch) -> None:
    result = preload(search, "Use GitHub to open an issue about the crash", min_score=1e9)
    assert result.names[0] == "mcp__github__create_issue"
    assert len(result.names) <= 3
    assert all(name.startswith("mcp__github__") for name in result.names)
    assert all(pick.reason == "server 'github' named" for pick in result.picks)


def test_confident_hits_need_the_threshold(search: ToolSearch) -> None:
    assert preload(search, "post message channel", min_score=1e9).picks == ()
    picks = preload(search, "post message channel", min_score=0.1).picks
    assert picks[0].name == "mcp__slack__post_message"
    assert picks[0].reason.startswith("search score ")


def test_picks_fit_the_budget_and_count_their_tokens(search: ToolSearch) -> None:
    one = definition_tokens([TOOLS[0].definition()])
    result = preload(search, "GitHub issue pull requests star fork", budget=one, min_score=0.1)
    assert result.tokens <= one and result.budget == one
    assert result.tokens == sum(
        definition_tokens([t.definition()]) for t in TOOLS if t.name in result.names
    )
    assert preload(search, "GitHub issue", budget=0).picks == ()


def test_loaded_tools_and_wordless_prompts_give_nothing(search: ToolSearch) -> None:
    assert "Loaded" not in preload(search, "issues", min_score=0.0).names
    assert preload(search, "?!").picks == ()


def test_a_ranker_without_a_threshold_only_uses_named_servers() -> None:
    search = ToolSearch(ToolRegistry(TOOLS), ranker="keyword")
    assert preload(search, "post message channel").picks == ()


def test_the_server_can_come_from_the_tool_name() -> None:
    tool = Tool(name="mcp__jira__create_ticket", description="Create a ticket.", is_mcp=True)
    assert named_servers("file a Jira ticket", [tool]) == ["jira"]
    search = ToolSearch(ToolRegistry([tool, *TOOLS]), ranker="bm25")
    assert preload(search, "file a Jira ticket", min_score=1e9).names == [tool.name]
