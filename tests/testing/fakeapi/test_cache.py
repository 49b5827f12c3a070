"""The prompt cache simulation: segments, weights, and figures over a conversation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.tokens import compact_json, count_tokens
from nbagent.testing.fakeapi.cache import CacheUsage, PromptCache, segments

CACHE = {"type": "ephemeral"}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    """A custom tool definition."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    return {"name": name, "description": f"Does {name} things.", "input_schema": schema, **extra}


def tokens_of(block: dict[str, Any]) -> int:
    """The tokens of a block's compact JSON."""
    return count_tokens(compact_json(block))


def body(
    *texts: str, tools: list[dict[str, Any]] | None = None, mark: int | None = None
) -> dict[str, Any]:
    """A request with one user text block per text, the breakpoint on block ``mark``."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if mark is not None:
        blocks[mark]["cache_control"] = CACHE
    return {
        "model": "claude-test",
        "system": "You are terse.",
        "tools": tools if tools is not None else [tool("Read")],
        "messages": [{"role": "user", "content": blocks}],
    }


def test_segments_in_order_with_weights() -> None:
    """Tools, then system, then message blocks; a deferred tool weighs nothing."""
    request = body("hello", tools=[tool("Read"), tool("Weather", defer_loading=True)])
    parts = segments(request)
    assert [s.key.split(":", 1)[0] for s in parts] == ["tool", "tool", "system", "user"]
    assert parts[0].tokens == tokens_of(tool("Read")) and parts[1].tokens == 0
    assert parts[2].tokens == tokens_of({"type": "text", "text": "You are terse."})
    assert [s.key.split(":", 1)[0] for s in segments(request, deferred_in_prefix=False)] == [
        "tool",
        "system",
        "user",
    ]


def test_tool_reference_expands_the_definition() -> None:
    """A tool_reference weighs its block plus the deferred definition it loads."""
    weather = tool("Weather", defer_loading=True)
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "tool_reference", "tool_name": "Weather"}],
    }
    request = body("x", tools=[tool("ToolSearch"), weather])
    request["messages"] += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}],
        },
        {"role": "user", "content": [result]},
    ]
    assert segments(request)[-1].tokens == tokens_of(result) + tokens_of(weather)


def test_breakpoint_position_is_not_content() -> None:
    """Moving cache_control keeps the keys: it marks, it does not change the prefix."""
    assert [s.key for s in segments(body("a", "b", mark=0))] == [
        s.key for s in segments(body("a", "b", mark=1))
    ]


def test_no_breakpoint_caches_nothing() -> None:
    """Without cache_control, nothing is read or written, even on a repeat."""
    cache = PromptCache()
    first, second = cache.account(body("hi")), cache.account(body("hi"))
    assert first == second == CacheUsage(first.total, 0, 0)


def test_write_then_read_up_to_last_breakpoint() -> None:
    """A first request writes up to its breakpoint; a longer one reads that and writes on."""
    cache = PromptCache()
    first = cache.account(body("one", "two", mark=0))
    prefix = sum(s.tokens for s in segments(body("one")))
    assert first == CacheUsage(first.total - prefix, 0, prefix)
    second = cache.account(body("one", "two", "three", mark=1))
    assert second.cache_read_input_tokens == prefix
    assert second.cache_creation_input_tokens == count_tokens(
        compact_json({"type": "text", "text": "two"})
    )
    assert cache.account(body("one", "two", "three", mark=1)).cache_creation_input_tokens == 0


def test_cache_is_per_model_and_clearable() -> None:
    """Another model does not read this model's prefixes; clear() empties the cache."""
    cache = PromptCache()
    cache.account(body("one", mark=0))
    other = {**body("one", mark=0), "model": "claude-other"}
    assert cache.account(other).cache_read_input_tokens == 0
    cache.clear()
    assert cache.account(body("one", mark=0)).cache_read_input_tokens == 0


@pytest.mark.parametrize("deferred_in_prefix", [True, False])
def test_adding_a_deferred_tool(deferred_in_prefix: bool) -> None:
    """A new deferred definition breaks the prefix only when deferred tools are part of it."""
    cache = PromptCache(deferred_in_prefix=deferred_in_prefix)
    before = cache.account(body("one", mark=0, tools=[tool("Read")]))
    after = cache.account(
        body("one", mark=0, tools=[tool("Read"), tool("Weather", defer_loading=True)])
    )
    assert after.total == before.total
    if deferred_in_prefix:
        assert after.cache_read_input_tokens == tokens_of(tool("Read"))
    else:
        assert after.cache_read_input_tokens == before.cache_creation_input_tokens


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a", "b", "c d"]), min_size=1, max_size=4), st.integers(0, 3)
        ),
        min_size=1,
        max_size=5,
    )
)
def test_figures_always_add_up(requests: list[tuple[list[str], int]]) -> None:
    """For any request sequence: the three figures add up to the total, and reads never exceed
    the last breakpoint's prefix."""
    cache = PromptCache()
    for texts, mark in requests:
        request = body(*texts, mark=min(mark, len(texts) - 1))
        usage = cache.account(request)
        parts = segments(request)
        last = max(i for i, s in enumerate(parts) if s.breakpoint)
        assert usage.total == sum(s.tokens for s in parts) == cache.count(request)
        assert usage.cache_read_input_tokens + usage.cache_creation_input_tokens == sum(
            s.tokens for s in parts[: last + 1]
        )
