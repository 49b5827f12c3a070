"""The agent loop with web search, the API's server tool: the real SDK against the fake API."""

from __future__ import annotations

import json
from typing import Any

from nbagent.api.api_tools import server_tool
from nbagent.api.pricing import estimate
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.events import TextCited, TextDelta, ToolSearchResults, WebSearched
from nbagent.core.tool import tool
from nbagent.loop.agent import Agent
from nbagent.testing import Cite, FakeAnthropicServer, Reply, Text, WebResult

PAGES = (
    WebResult("https://docs.python.org/3/whatsnew/3.14.html", "What's New In Python 3.14"),
    WebResult("https://peps.python.org/pep-0750/", "PEP 750 – Template Strings", "1 year"),
)
ANSWER = (
    Text("Python 3.14 is out", citations=(Cite(PAGES[0].url, "Python 3.14 was released"),)),
    Text(" with template strings.", citations=(Cite(PAGES[1].url, "t-strings"),)),
)
SEARCH_THEN_ANSWER = [
    Reply.tool_use("ToolSearch", {"query": "search the web"}),
    Reply.web_search("python 3.14", PAGES, then=[Text("Found it. "), *ANSWER]),
]


@tool(read_only=True)
def echo(text: str) -> str:
    """Say a text back.

    Args:
        text: The text.
    """
    return text


def registry(**options: Any) -> ToolRegistry:
    reg = ToolRegistry([echo, server_tool("web_search", options)])
    reg.register(ToolSearch(reg).tool)
    return reg


def bodies(api: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [r.body for r in api.requests if r.path == "/v1/messages"]


def test_toolsearch_loads_web_search_the_api_runs_it_and_the_blocks_come_back_unchanged(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(*SEARCH_THEN_ANSWER, Reply.text("You are welcome."))
    agent = Agent(registry=registry(max_uses=3), client=fake_api.client())
    events = list(agent.events("What is new in Python 3.14?"))
    [found] = [e for e in events if isinstance(e, ToolSearchResults)]
    assert found.loaded == ("web_search",) and agent.loaded_names == ["web_search"]
    order = [type(e).__name__ for e in events if isinstance(e, TextDelta | WebSearched | TextCited)]
    searched = order.index("WebSearched")
    assert "TextDelta" not in order[:searched] and order[searched + 1] == "TextDelta"
    assert order.count("TextCited") == 2 and order[-1] == "TextCited"
    [search] = [e for e in events if isinstance(e, WebSearched)]
    assert search.query == "python 3.14" and [p.url for p in search.pages] == [p.url for p in PAGES]
    assert search.pages[1].page_age == "1 year" and search.error == ""
    cited = [c.url for e in events if isinstance(e, TextCited) for c in e.citations]
    assert cited == [PAGES[0].url, PAGES[1].url]
    assert agent.usage.web_search_requests == 1
    cost = estimate(agent.usage, agent.model)
    assert cost is not None and cost > 0.01

    first, second = bodies(fake_api)
    sent = {t["name"]: t for t in first["tools"]}["web_search"]
    assert sent == {
        "type": "web_search_20260318",
        "name": "web_search",
        "max_uses": 3,
        "defer_loading": True,
    }
    assert second["messages"][-1]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "web_search"}
    ]
    answered = fake_api.requests[-1].answer
    assert answered is not None and agent.messages[-1]["content"] == answered["content"]
    agent.run("Thanks.")
    third = bodies(fake_api)[2]
    assert third["messages"][3]["content"] == answered["content"]


def test_a_paused_turn_goes_on_in_the_same_message(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        SEARCH_THEN_ANSWER[0],
        Reply.web_search("python 3.14", PAGES, stop_reason="pause_turn"),
        Reply.of(*ANSWER),
    )
    agent = Agent(registry=registry(), client=fake_api.client())
    result = agent.run("What is new in Python 3.14?")
    assert result.text == "Python 3.14 is out with template strings."
    kinds = [b["type"] for b in agent.messages[-1]["content"]]
    assert kinds == ["server_tool_use", "web_search_tool_result", "text", "text"]
    continued = bodies(fake_api)[2]["messages"][-1]
    assert continued["role"] == "assistant"
    assert [b["type"] for b in continued["content"]] == kinds[:2]


def test_a_failed_search_is_an_event_with_the_apis_error_code(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(
        SEARCH_THEN_ANSWER[0],
        Reply.web_search("python", error="too_many_requests", then=[Text("I could not search.")]),
    )
    agent = Agent(registry=registry(), client=fake_api.client())
    events = list(agent.events("News?"))
    [search] = [e for e in events if isinstance(e, WebSearched)]
    assert search.error == "too_many_requests" and search.pages == ()
    assert agent.usage.web_search_requests == 0


def test_client_mode_adds_the_typed_definition_after_toolsearch() -> None:
    with FakeAnthropicServer(SEARCH_THEN_ANSWER, supports_tool_reference=False) as api:
        agent = Agent(registry=registry(), client=api.client(), mode="client")
        result = agent.run("What is new in Python 3.14?")
        api.assert_no_errors()
    assert result.text.endswith("with template strings.")
    first, second = bodies(api)
    assert "web_search" not in [t["name"] for t in first["tools"]]
    assert second["tools"][-1] == {"type": "web_search_20260318", "name": "web_search"}
    assert "defer_loading" not in json.dumps(second["tools"])
