"""Server tools: the API's typed entries in the registry, their options, and the settings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.api.api_tools import (
    WEB_SEARCH_NAME,
    ServerTool,
    check_names,
    server_tool,
    web_search_options,
)
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import ConfigurationError, ToolError
from nbagent.core.tool import tool
from nbagent.testing import Cite, FakeAnthropicServer, Reply, Text, WebResult
from tests.shells import error_of, run, shown


@tool(read_only=True, should_defer=True, search_hint="http url page download")
def WebFetch(url: str) -> str:  # noqa: N802 - named as the built-in tool is
    """Fetch a web page and return its text.

    Args:
        url: The page's address.
    """
    return url


def test_a_server_tool_is_the_apis_typed_entry_deferred_with_no_handler() -> None:
    web = server_tool(WEB_SEARCH_NAME, {"max_uses": 3, "blocked_domains": ["example.com"]})
    assert web.definition() == {
        "type": "web_search_20260318",
        "name": "web_search",
        "max_uses": 3,
        "blocked_domains": ["example.com"],
    }
    registry = ToolRegistry([web])
    assert registry.deferred() == [web] and web.handler is None
    assert "api" in repr(registry)
    with pytest.raises(ToolError, match="runs on the Anthropic API"):
        web.call({"query": "x"})


def test_its_definition_is_a_copy() -> None:
    web = server_tool(WEB_SEARCH_NAME, {"allowed_domains": ["a.org"]})
    web.definition()["allowed_domains"].append("b.org")
    assert web.definition()["allowed_domains"] == ["a.org"]


@pytest.mark.parametrize("query", ["search the web", "latest docs", "news", "web search"])
def test_toolsearch_finds_web_search_by_its_local_description_and_hint(query: str) -> None:
    registry = ToolRegistry([WebFetch, server_tool(WEB_SEARCH_NAME, {})])
    hits = ToolSearch(registry).search(query)
    assert hits[0].name == WEB_SEARCH_NAME


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"max_use": 5}, "unknown option 'max_use'; its options are max_uses"),
        ({"max_uses": 0}, "a whole number of at least 1"),
        ({"max_uses": True}, "a whole number of at least 1"),
        ({"max_uses": "5"}, "a whole number of at least 1"),
        (
            {"allowed_domains": ["a.org"], "blocked_domains": ["b.org"]},
            "both allowed_domains and blocked_domains",
        ),
        ({"allowed_domains": "a.org"}, "write a list of domains"),
        ({"allowed_domains": []}, "write a list of domains"),
        ({"blocked_domains": ["https://a.org"]}, 'without its scheme: "a.org"'),
        ({"user_location": {"town": "Oslo"}}, "unknown field 'town'"),
        ({"user_location": {"country": "Norway"}}, 'two-letter ISO code, e.g. "NO"'),
        ({"user_location": {"type": "exact"}}, 'takes "approximate" only'),
        ({"user_location": "Oslo"}, "write a dict"),
    ],
)
def test_bad_web_search_options_are_refused_saying_what_to_write(
    options: dict[str, Any], says: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        web_search_options(options)
    assert says in str(raised.value)


def test_user_location_gets_its_type() -> None:
    options = web_search_options({"user_location": {"city": "Oslo", "country": "NO"}})
    assert options["user_location"] == {"type": "approximate", "city": "Oslo", "country": "NO"}


@given(st.integers())
def test_max_uses_is_a_whole_number_of_at_least_one(uses: int) -> None:
    if uses >= 1:
        assert web_search_options({"max_uses": uses}) == {"max_uses": uses}
    else:
        with pytest.raises(ConfigurationError):
            web_search_options({"max_uses": uses})


def test_an_unknown_server_tool_is_refused_with_the_names_taken() -> None:
    assert check_names(["web_search", "web_search"]) == ["web_search"]
    with pytest.raises(ConfigurationError, match="takes: web_search"):
        check_names(["code_execution"])


@pytest.fixture
def server_tools_off(ip: InteractiveShell) -> Any:
    """Turn server tools and their options back off after the test."""
    yield ip
    ip.run_line_magic("config", "NbAgent.server_tools = []")
    ip.run_line_magic("config", "NbAgent.web_search = {}")


def test_server_tools_are_off_until_configured_and_the_status_says_so(
    server_tools_off: InteractiveShell,
) -> None:
    ip = server_tools_off
    assert WEB_SEARCH_NAME not in nbagent.registry
    _, status = run(ip, "%agent status")
    assert '**server tools**: none (`c.NbAgent.server_tools = ["web_search"]`' in status
    ip.run_line_magic("config", "NbAgent.web_search = {'max_uses': 4}")
    ip.run_line_magic("config", "NbAgent.server_tools = ['web_search']")
    web = nbagent.registry.get(WEB_SEARCH_NAME)
    assert isinstance(web, ServerTool) and web.options == {"max_uses": 4}
    _, status = run(ip, "%agent status")
    assert "`web_search` (at most 4 uses a request · $10 per 1,000 searches" in shown(status)
    _, tools = run(ip, "%tools")
    assert "| `web_search` | api | deferred |" in tools
    _, found = run(ip, "%tool_search search the web")
    assert found.splitlines()[4].startswith("| `web_search` |")
    ip.run_line_magic("config", "NbAgent.server_tools = []")
    assert WEB_SEARCH_NAME not in nbagent.registry


def test_bad_server_tool_settings_are_refused_when_set(
    server_tools_off: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    ip = server_tools_off
    ip.run_cell("%config NbAgent.server_tools = ['web_serch']")
    ip.run_cell("%config NbAgent.web_search = {'max_uses': 0}")
    said = capsys.readouterr().err
    assert "c.NbAgent.server_tools not used: Unknown server tool 'web_serch'; " in said
    assert "takes: web_search" in said and "(it stays [])" in said
    assert "c.NbAgent.web_search not used: c.NbAgent.web_search max_uses is 0" in said
    assert WEB_SEARCH_NAME not in nbagent.registry


def test_changed_options_reach_the_next_request(
    server_tools_off: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip = server_tools_off
    ip.run_line_magic("config", "NbAgent.server_tools = ['web_search']")
    fake_api.enqueue(Reply.text("first"), Reply.text("second"))
    run(ip, "%%agent --new\nhello")
    ip.run_line_magic("config", "NbAgent.web_search = {'allowed_domains': ['docs.python.org']}")
    result, _ = run(ip, "%%agent\nagain")
    assert error_of(result) is None
    sent: list[dict[str, Any]] = [
        next(t for t in r.body["tools"] if t["name"] == WEB_SEARCH_NAME) for r in fake_api.requests
    ]
    assert sent == [
        {"type": "web_search_20260318", "name": "web_search", "defer_loading": True},
        {
            "type": "web_search_20260318",
            "name": "web_search",
            "allowed_domains": ["docs.python.org"],
            "defer_loading": True,
        },
    ]
    first_user = fake_api.requests[0].body["messages"][0]["content"]
    assert any("web_search" in b.get("text", "") for b in first_user)


PAGE = WebResult("https://docs.python.org/3/whatsnew/3.14.html", "What's New In Python 3.14")


def test_a_cell_finds_loads_and_runs_web_search_and_the_next_cell_carries_it_back(
    server_tools_off: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip = server_tools_off
    ip.run_line_magic("config", "NbAgent.server_tools = ['web_search']")
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "web search"}),
        Reply.web_search(
            "python 3.14",
            [PAGE],
            then=[Text("Python 3.14 is out.", citations=(Cite(PAGE.url, "3.14 is out"),))],
        ),
        Reply.text("Glad to help."),
    )
    result, shown_text = run(ip, "%%agent --new -o result\nWhat is new in Python 3.14?")
    assert error_of(result) is None
    [searched] = [line for line in shown_text.splitlines() if "ToolSearch" in line]
    assert searched.startswith('✓ ToolSearch "web search" → loaded ') and "web_search" in searched
    assert '✓ web_search "python 3.14" → 1 result: docs.python.org' in shown_text
    assert f"    1. What's New In Python 3.14 · {PAGE.url}" in shown_text
    assert "Python 3.14 is out. [1]" in shown_text
    assert f"Sources:\n[1] What's New In Python 3.14 · {PAGE.url}" in shown_text
    assert "1 web search" in shown_text
    answered = fake_api.requests[-1].answer
    assert answered is not None
    run(ip, "%%agent\nThanks.")
    sent = fake_api.requests[-1].body["messages"]
    assert sent[3] == {"role": "assistant", "content": answered["content"]}
    assert [b["type"] for b in sent[3]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]


def test_a_failed_search_shows_in_one_line(
    server_tools_off: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip = server_tools_off
    ip.run_line_magic("config", "NbAgent.server_tools = ['web_search']")
    ip.run_line_magic("config", "NbAgent.loaded_tools = ['web_search']")
    fake_api.enqueue(Reply.web_search("q", error="too_many_requests", then=[Text("Sorry.")]))
    try:
        _, shown_text = run(ip, "%%agent --new\nNews?")
    finally:
        ip.run_line_magic("config", "NbAgent.loaded_tools = []")
    [line] = [line for line in shown_text.splitlines() if "web_search" in line]
    assert line == (
        '✗ web_search "q" → failed: too many searches at once (the API\'s rate limit); '
        "try again shortly"
    )
    tools = {t["name"]: t for t in fake_api.requests[-1].body["tools"]}
    assert "defer_loading" not in tools["web_search"]
