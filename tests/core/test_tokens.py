"""Tests of nbagent.core.tokens: the packaged tokenizer and the counts built on it."""

from __future__ import annotations

from nbagent.core.tokens import (
    TOOL_USE_SYSTEM_PROMPT_TOKENS,
    compact_json,
    count_many,
    count_tokens,
    definition_tokens,
    request_tokens,
)

DEFINITION = {
    "name": "Read",
    "description": "Read a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def test_counts_are_those_of_the_claude_v1_bpe() -> None:
    assert count_tokens("") == 0
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("hello") < count_tokens("hello hello hello")


def test_non_latin_text_is_counted() -> None:
    assert count_tokens("发送一条消息") > 0 and count_tokens("ファイル") > 0


def test_batch_counts_match_single_counts() -> None:
    texts = ["a b c", "", "发送", "def f(x): return x"]
    assert count_many(texts) == [count_tokens(t) for t in texts]
    assert count_many([]) == []


def test_definitions_are_counted_as_compact_json() -> None:
    assert definition_tokens([DEFINITION]) == count_tokens(compact_json(DEFINITION))
    assert definition_tokens([DEFINITION, DEFINITION]) == 2 * definition_tokens([DEFINITION])


def test_request_adds_the_tool_use_prompt_and_skips_deferred_tools() -> None:
    base = {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}
    plain = request_tokens(base)
    with_tool = request_tokens({**base, "tools": [DEFINITION]})
    assert with_tool == plain + definition_tokens([DEFINITION]) + TOOL_USE_SYSTEM_PROMPT_TOKENS
    deferred = {**DEFINITION, "name": "Later", "defer_loading": True}
    assert request_tokens({**base, "tools": [DEFINITION, deferred]}) == with_tool


WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather in a given location",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {
                "type": "string",
                "description": "The city and state, e.g. San Francisco, CA",
            }
        },
        "required": ["location"],
    },
}

# Requests and the counts Anthropic's token-counting guide prints for them.
DOCUMENTED_COUNTS = [
    (
        {
            "system": "You are a scientist",
            "messages": [{"role": "user", "content": "Hello, Claude"}],
        },
        14,
    ),
    (
        {
            "tools": [WEATHER_TOOL],
            "messages": [{"role": "user", "content": "What's the weather like in San Francisco?"}],
        },
        403,
    ),
]


def test_estimates_stay_within_the_documented_error_of_the_api_counts() -> None:
    for request, documented in DOCUMENTED_COUNTS:
        estimate = request_tokens(request)
        assert documented <= estimate <= documented * 1.3, (estimate, documented)
