"""Web search as FakeAnthropicServer plays it, through the real SDK: definitions, blocks, play."""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest
from anthropic.types import (
    CitationsWebSearchResultLocation,
    Message,
    ServerToolUseBlock,
    WebSearchResultBlock,
    WebSearchToolResultBlock,
    WebSearchToolResultError,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.testing import Cite, FakeAnthropicServer, Reply, Text, WebResult
from nbagent.testing.fakeapi.api_tools import in_domains

MODEL = "claude-test"
WEB = {"type": "web_search_20260318", "name": "web_search"}
SEARCH = {
    "name": "ToolSearch",
    "description": "Find deferred tools.",
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
}
PAGES = (
    WebResult(
        "https://docs.python.org/3/whatsnew/3.14.html", "What's New In Python 3.14", "3 days"
    ),
    WebResult("https://example.com/python-news", "Python news"),
)
ANSWER = Text(
    "Python 3.14 is out.",
    citations=(Cite(PAGES[0].url, "Python 3.14 was released"),),
)


def loaded(web: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request whose history loaded web search with a ToolSearch tool_reference."""
    return {
        "tools": [SEARCH, {**(web or WEB), "defer_loading": True}],
        "messages": [
            {"role": "user", "content": "What is new in Python?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "tool_reference", "tool_name": "web_search"}],
                    }
                ],
            },
        ],
    }


def send(client: anthropic.Anthropic, request: dict[str, Any], streamed: bool) -> Message:
    """Send a request, streamed or not, and return the message."""
    if not streamed:
        return client.messages.create(model=MODEL, max_tokens=256, **request)
    with client.messages.stream(model=MODEL, max_tokens=256, **request) as stream:
        return stream.get_final_message()


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "sse"])
def test_a_scripted_web_search_parses_into_the_sdks_types(
    fake_api: FakeAnthropicServer, streamed: bool
) -> None:
    fake_api.enqueue(Reply.web_search("python 3.14 news", PAGES, then=[ANSWER]))
    message = send(fake_api.client(), loaded(), streamed)
    use, found, text = message.content
    assert isinstance(use, ServerToolUseBlock) and use.name == "web_search"
    assert use.input == {"query": "python 3.14 news"} and use.id.startswith("srvtoolu_")
    assert isinstance(found, WebSearchToolResultBlock) and found.tool_use_id == use.id
    assert all(isinstance(r, WebSearchResultBlock) for r in found.content)
    assert [(r.url, r.title, r.page_age) for r in found.content] == [
        (p.url, p.title, p.page_age) for p in PAGES
    ]
    assert text.text == ANSWER.text and text.citations is not None
    (cited,) = text.citations
    assert isinstance(cited, CitationsWebSearchResultLocation)
    assert (cited.url, cited.title, cited.cited_text) == (
        PAGES[0].url,
        PAGES[0].title,
        "Python 3.14 was released",
    )
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1
    answer = fake_api.requests[-1].answer
    assert answer is not None
    assert Message.model_validate(answer).model_dump(exclude_unset=True) == answer
    assert message.model_dump(mode="json", exclude_unset=True)["content"] == answer["content"]


def test_the_blocks_sent_back_as_they_came_are_accepted(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Reply.web_search("python news", PAGES, then=[ANSWER]),
        Reply.of(Text("Still true.", citations=(Cite(PAGES[1].url, "news"),))),
    )
    client = fake_api.client()
    request = loaded()
    first = send(client, request, streamed=True)
    history = [*request["messages"], {"role": "assistant", "content": first.to_param()["content"]}]
    again = [*history, {"role": "user", "content": "Sure?"}]
    second = send(client, {**request, "messages": again}, streamed=True)
    assert second.content[0].citations[0].url == PAGES[1].url
    sent = fake_api.requests[-1].body["messages"][3]["content"]
    assert sent == fake_api.requests[0].answer["content"]


@pytest.mark.parametrize(
    ("web", "says"),
    [
        (
            {**WEB, "name": "search"},
            "tools.1.web_search_20260318.name: Input should be 'web_search'",
        ),
        ({**WEB, "max_results": 3}, "max_results: Extra inputs are not permitted"),
        ({**WEB, "max_uses": 0}, "max_uses: Input should be greater than or equal to 1"),
        ({**WEB, "max_uses": "2"}, "max_uses: Input should be a valid integer"),
        ({**WEB, "allowed_domains": "a.org"}, "allowed_domains: Input should be a valid list"),
        (
            {**WEB, "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]},
            "allowed_domains and blocked_domains cannot be used together",
        ),
        ({**WEB, "user_location": {"city": "Oslo"}}, "user_location.type: Input should be"),
        (
            {**WEB, "user_location": {"type": "approximate", "town": "Oslo"}},
            "user_location.town: Extra inputs are not permitted",
        ),
        ({**WEB, "type": "web_search_20990101"}, "Input tag 'web_search_20990101' found"),
    ],
)
def test_a_bad_definition_is_refused(
    fake_api: FakeAnthropicServer, web: dict[str, Any], says: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        send(fake_api.client(), loaded(web), streamed=False)
    assert says in str(refused.value)


def test_a_reference_to_a_server_tool_the_request_does_not_define_is_refused(
    fake_api: FakeAnthropicServer,
) -> None:
    request = loaded()
    request["tools"] = [SEARCH]
    with pytest.raises(anthropic.BadRequestError, match="'web_search' has no corresponding tool"):
        send(fake_api.client(), request, streamed=False)


def test_the_model_searches_only_with_web_search_in_its_context(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.web_search("q", PAGES), Reply.web_search("q", PAGES))
    client = fake_api.client()
    never_loaded = {**loaded(), "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(anthropic.InternalServerError, match="deferred and was never loaded"):
        send(client, never_loaded, streamed=False)
    custom = {**SEARCH, "name": "web_search"}
    with pytest.raises(anthropic.InternalServerError, match="not the API's web search tool"):
        send(client, {**loaded(), "tools": [SEARCH, custom]}, streamed=False)
    assert len(fake_api.take_errors()) == 2


def test_the_model_cites_only_what_a_search_found(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.of(Text("Made up.", citations=(Cite("https://nowhere.test/", "x"),))))
    with pytest.raises(anthropic.InternalServerError, match="cannot cite https://nowhere.test/"):
        send(fake_api.client(), loaded(), streamed=False)
    assert len(fake_api.take_errors()) == 1


def test_max_uses_and_domains_apply_as_the_api_applies_them(
    fake_api: FakeAnthropicServer,
) -> None:
    web = {**WEB, "max_uses": 1, "allowed_domains": ["docs.python.org"]}
    fake_api.enqueue(
        Reply.of(
            *Reply.web_search("first", PAGES).parts,
            *Reply.web_search("second", PAGES).parts,
            Text("Done."),
        )
    )
    message = send(fake_api.client(), loaded(web), streamed=True)
    first, second = message.content[1], message.content[3]
    assert [r.url for r in first.content] == [PAGES[0].url]
    assert isinstance(second.content, WebSearchToolResultError)
    assert second.content.error_code == "max_uses_exceeded"
    assert message.usage.server_tool_use.web_search_requests == 1


def test_a_scripted_error_is_the_apis_error_object(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(
        Reply.web_search("q", error="too_many_requests"), Reply.web_search("q", error="x")
    )
    client = fake_api.client()
    message = send(client, loaded(), streamed=True)
    assert message.content[1].content.error_code == "too_many_requests"
    assert message.usage.server_tool_use is None
    with pytest.raises(anthropic.InternalServerError, match="'x' is no web search error code"):
        send(client, loaded(), streamed=True)
    assert len(fake_api.take_errors()) == 1


def answered(fake_api: FakeAnthropicServer) -> dict[str, Any]:
    """A request whose history holds a scripted search and its cited answer."""
    fake_api.enqueue(Reply.web_search("python news", PAGES, then=[ANSWER]))
    request = loaded()
    send(fake_api.client(), request, streamed=False)
    content = copy.deepcopy(fake_api.requests[-1].answer["content"])
    messages = [*request["messages"], {"role": "assistant", "content": content}]
    return {**request, "messages": [*messages, {"role": "user", "content": "And?"}]}


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (lambda c: c.pop(0), "does not follow a web_search server_tool_use block of that id"),
        (lambda c: c[1].update(extra=1), "web_search_tool_result.extra: Extra inputs"),
        (lambda c: c[1]["content"][0].update(snippet="x"), "content.0.snippet: Extra inputs"),
        (lambda c: c[1]["content"][0].pop("url"), "content.0.url: Field required"),
        (
            lambda c: c[1].update(
                content={"type": "web_search_tool_result_error", "error_code": "x"}
            ),
            "error_code: Input should be",
        ),
        (lambda c: c[2]["citations"][0].pop("encrypted_index"), "encrypted_index: Field required"),
        (lambda c: c[2]["citations"][0].pop("title"), "title: Field required"),
        (lambda c: c[0].update(name="web_fetch"), "do not define the web_fetch server tool"),
    ],
)
def test_history_blocks_are_checked_as_the_api_checks_them(
    fake_api: FakeAnthropicServer, tamper: Any, says: str
) -> None:
    request = answered(fake_api)
    tamper(request["messages"][3]["content"])
    with pytest.raises(anthropic.BadRequestError) as refused:
        send(fake_api.client(), request, streamed=False)
    assert says in str(refused.value)


def test_a_search_result_in_a_user_turn_is_refused(fake_api: FakeAnthropicServer) -> None:
    request = answered(fake_api)
    result = request["messages"][3]["content"][1]
    request["messages"][-1]["content"] = [result]
    with pytest.raises(anthropic.BadRequestError, match="cannot appear in user messages"):
        send(fake_api.client(), request, streamed=False)


HOSTS = st.from_regex(r"[a-z]{1,8}(\.[a-z]{1,8}){0,2}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(HOSTS, HOSTS)
def test_a_domain_covers_its_subdomains_and_nothing_else(domain: str, host: str) -> None:
    url = f"https://{host}/page"
    expected = host == domain or host.endswith("." + domain)
    assert in_domains(url, [domain]) is expected
    assert in_domains(f"https://{domain}/blog/post", [f"{domain}/blog"])
    assert not in_domains(f"https://{domain}/shop", [f"{domain}/blog"])
