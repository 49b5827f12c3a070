"""Server-side compaction and the context window, through the real SDK's beta client."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types.beta import BetaCompactionBlock, BetaMessage
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.tokens import compact_json, count_tokens
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.testing.fakeapi.cache import segments
from nbagent.testing.fakeapi.compaction import CompactionSigner, summarize
from nbagent.testing.fakeapi.rules import (
    ApiError,
    check_request,
    context_tools,
    dropped_messages,
    model_messages,
)
from nbagent.testing.fakeapi.wire import message, stream_events

BETA = "compact-2026-01-12"
CACHE = {"type": "ephemeral"}
PROMPT = "What is the weather in Paris today? Please look it up. " * 20


def tool(name: str, **extra: Any) -> dict[str, Any]:
    """A custom tool definition."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object"},
        **extra,
    }


TOOLS = [tool("ToolSearch"), tool("Weather", defer_loading=True)]


def edit(value: Any = 300, **extra: Any) -> dict[str, Any]:
    """A context_management with one compact edit (trigger ``value``; None: the default)."""
    compact: dict[str, Any] = {"type": "compact_20260112", **extra}
    if value is not None:
        compact["trigger"] = {"type": "input_tokens", "value": value}
    return {"edits": [compact]}


def searched(prompt: str = PROMPT) -> list[dict[str, Any]]:
    """A history whose ToolSearch call loaded the deferred Weather tool."""
    found = [{"type": "tool_reference", "tool_name": "Weather"}]
    return [
        {"role": "user", "content": prompt},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_s", "name": "ToolSearch", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_s", "content": found}],
        },
    ]


def body(messages: list[Any], **fields: Any) -> dict[str, Any]:
    """A request body with the default tools."""
    return {
        "model": "claude-test",
        "max_tokens": 64,
        "tools": TOOLS,
        "messages": messages,
        **fields,
    }


def ask(
    api: FakeAnthropicServer, stream: bool, request: dict[str, Any], beta: bool = True
) -> BetaMessage:
    """Send a request through the SDK's beta client, streamed or not."""
    client = api.client()
    betas: Any = [BETA] if beta else anthropic.omit
    if stream:
        with client.beta.messages.stream(**request, betas=betas) as events:
            return events.get_final_message()
    return client.beta.messages.create(**request, betas=betas)


def refused(api: FakeAnthropicServer, request: dict[str, Any], beta: bool = True) -> str:
    """Send a request that must be refused 400; return the message."""
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(api, False, request, beta)
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    return str(caught.value.body["error"]["message"])


def sent_back(final: BetaMessage) -> dict[str, Any]:
    """The assistant message of an answer, as plain JSON (as the SDK would send its blocks)."""
    blocks = [b.model_dump(mode="json", exclude_unset=True) for b in final.content]
    return {"role": "assistant", "content": blocks}


def ref(name: str) -> dict[str, Any]:
    """A tool_reference block."""
    return {"type": "tool_reference", "tool_name": name}


def result(use_id: str, content: Any = "sunny") -> dict[str, Any]:
    """A user message with one tool_result."""
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": use_id, "content": content}],
    }


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    """A server that accepts small triggers, with the default 200,000-token window."""
    with FakeAnthropicServer(min_compaction_trigger=1) as server:
        yield server
    server.assert_no_errors()


# -- request checks ---------------------------------------------------------------------


def test_context_management_needs_the_beta(api: FakeAnthropicServer) -> None:
    """Without anthropic-beta: compact-2026-01-12, the field and the blocks are refused."""
    assert refused(api, body(searched(), context_management=edit()), beta=False) == (
        "context_management: Extra inputs are not permitted"
    )
    block = api.compaction_block("Earlier: the user asked about Paris.")
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block]}]
    assert refused(api, body(history), beta=False) == (
        "messages.1.content.0.type: Input tag 'compaction' found using 'type' does not match "
        "any of the expected tags"
    )
    api.enqueue(Reply.text("ok"))
    assert ask(api, False, body(history)).content[0].text == "ok"  # type: ignore[union-attr]
    assert api.requests[-1].headers["anthropic-beta"] == BETA


EDIT_ERRORS = [
    (
        "unknown edit",
        {"edits": [{"type": "forget_all"}]},
        "context_management.edits.0: Input tag 'forget_all' found using 'type' does not "
        "match any of the expected tags: 'clear_thinking_20251015', 'clear_tool_uses_20250919', "
        "'compact_20260112'",
    ),
    (
        "not simulated",
        {"edits": [{"type": "clear_thinking_20251015"}]},
        "context_management.edits.0.type: clear_thinking_20251015 is a real edit that "
        "FakeAnthropicServer does not simulate",
    ),
    (
        "clearing without its beta",
        {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "context_management.edits.0.type: clear_tool_uses_20250919 needs the anthropic-beta "
        "context-management-2025-06-27",
    ),
    (
        "edits not a list",
        {"edits": {"type": "compact_20260112"}},
        "context_management.edits: Input should be a valid list",
    ),
    (
        "extra config key",
        {"edits": [], "keep": 1},
        "context_management.keep: Extra inputs are not permitted",
    ),
    (
        "two compact edits",
        {"edits": [{"type": "compact_20260112"}] * 2},
        "context_management.edits.1: only one compact_20260112 edit may be given",
    ),
    (
        "extra edit key",
        edit(keep=3),
        "context_management.edits.0.compact_20260112.keep: Extra inputs are not permitted",
    ),
    (
        "tool_uses trigger",
        {"edits": [{"type": "compact_20260112", "trigger": {"type": "tool_uses", "value": 3}}]},
        "context_management.edits.0.compact_20260112.trigger.type: Input should be 'input_tokens'",
    ),
    (
        "zero value",
        edit(0),
        "context_management.edits.0.compact_20260112.trigger.value: Input should be greater "
        "than or equal to 1",
    ),
    ("negative value", edit(-5), "trigger.value: Input should be greater than or equal to 1"),
    (
        "string value",
        edit("100"),
        "context_management.edits.0.compact_20260112.trigger.value: Input should be a valid "
        "integer",
    ),
    ("bool value", edit(True), "trigger.value: Input should be a valid integer"),
    (
        "no value",
        {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens"}}]},
        "trigger.value: Field required",
    ),
    (
        "instructions not text",
        edit(instructions=3),
        "compact_20260112.instructions: Input should be a valid string",
    ),
    (
        "pause not a boolean",
        edit(pause_after_compaction="yes"),
        "compact_20260112.pause_after_compaction: Input should be a valid boolean",
    ),
]


@pytest.mark.parametrize(
    ("config", "message"), [c[1:] for c in EDIT_ERRORS], ids=[c[0] for c in EDIT_ERRORS]
)
def test_invalid_edits_are_refused_with_a_path(
    api: FakeAnthropicServer, config: dict[str, Any], message: str
) -> None:
    """Each malformed edit is answered 400 with the path of what is wrong."""
    assert message in refused(api, body(searched(), context_management=config))


def test_the_api_minimum_trigger_by_default() -> None:
    """A server left at the API's minimum refuses a trigger below 50,000 tokens."""
    with FakeAnthropicServer() as server:
        assert refused(server, body(searched(), context_management=edit(49_999))) == (
            "context_management.edits.0.compact_20260112.trigger.value: Input should be "
            "greater than or equal to 50000"
        )
        server.enqueue(Reply.text("fine"))
        assert (
            ask(server, False, body(searched(), context_management=edit(50_000))).content[0].text
            == "fine"
        )  # type: ignore[union-attr]


BlockEdit = Callable[[dict[str, Any]], None]
BLOCK_ERRORS: list[tuple[str, BlockEdit, str]] = [
    (
        "content changed",
        lambda b: b.update(content=b["content"] + " And more."),
        "messages.3.content.0: Invalid `signature` in `compaction` block",
    ),
    (
        "tool_changes dropped",
        lambda b: b.update(tool_changes=[]),
        "messages.3.content.0: Invalid `signature` in `compaction` block",
    ),
    (
        "encrypted_content changed",
        lambda b: b.update(encrypted_content="cmpct_other"),
        "Invalid `signature` in `compaction` block",
    ),
    (
        "signature removed",
        lambda b: b.pop("signature"),
        "Invalid `signature` in `compaction` block",
    ),
    (
        "empty content",
        lambda b: b.update(content=""),
        "messages.3.content.0.compaction.content: String should have at least 1 character",
    ),
    (
        "content not text",
        lambda b: b.update(content=5),
        "messages.3.content.0.compaction.content: Input should be a valid string",
    ),
    (
        "extra key",
        lambda b: b.update(summary="x"),
        "messages.3.content.0.compaction.summary: Extra inputs are not permitted",
    ),
    (
        "bad tool change",
        lambda b: b.update(tool_changes=[{"type": "tool_swap"}]),
        "messages.3.content.0.compaction.tool_changes.0: Input tag 'tool_swap' found using "
        "'type' does not match any of the expected tags: 'tool_addition', 'tool_removal'",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in BLOCK_ERRORS], ids=[c[0] for c in BLOCK_ERRORS]
)
def test_a_changed_block_is_refused(
    api: FakeAnthropicServer, change: BlockEdit, message: str
) -> None:
    """A compaction block must come back as it was issued, but for cache_control."""
    block = api.compaction_block("The user asked about Paris.", ["Weather"])
    changed = copy.deepcopy(block)
    change(changed)
    history = [*searched(), {"role": "assistant", "content": [changed]}]
    assert message in refused(api, body(history))
    api.enqueue(Reply.text("ok"))
    marked = {**block, "cache_control": CACHE}
    assert ask(api, False, body([*searched(), {"role": "assistant", "content": [marked]}])).content


def test_where_a_block_may_be(api: FakeAnthropicServer) -> None:
    """Not in a user message, not another server's, naming tools of the request; a null block
    is a no-op that needs no signature."""
    block = api.compaction_block("Summary.")
    assert refused(api, body([{"role": "user", "content": [block]}])) == (
        "messages.0.content.0: compaction blocks cannot appear in user messages"
    )
    other = CompactionSigner().issue("Summary.")
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [other]}]
    assert (
        refused(api, body(history))
        == "messages.1.content.0: Invalid `signature` in `compaction` block"
    )
    ghost = api.compaction_block("Summary.", ["Ghost"])
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [ghost]}]
    assert (
        refused(api, body(history)) == "Tool reference 'Ghost' has no corresponding tool definition"
    )
    noop = {"type": "compaction", "content": None}
    history = [
        *searched(),
        {"role": "assistant", "content": [noop, {"type": "text", "text": "ok"}]},
    ]
    request = body(history)
    assert model_messages(request)[0]["content"] == [{"type": "text", "text": PROMPT}]
    assert context_tools(request) == {"ToolSearch", "Weather"}
    api.enqueue(Reply.text("fine"))
    assert ask(api, True, request).content[0].text == "fine"  # type: ignore[union-attr]


def test_check_request_without_a_verifier_refuses_blocks() -> None:
    """Called directly, check_request accepts a block only with the signer's verify."""
    signer = CompactionSigner()
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [signer.issue("S.")]},
    ]
    error = check_request(body(history), betas={BETA})
    assert isinstance(error, ApiError) and "Invalid `signature`" in error.message
    assert check_request(body(history), betas={BETA}, verify_compaction=signer.verify) == {
        "ToolSearch"
    }


# -- trigger, block, usage --------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_trigger_fires_and_the_block_comes_first(api: FakeAnthropicServer, stream: bool) -> None:
    """Above the trigger the answer starts with the compaction block, whose tool_changes add
    the deferred tools loaded in the compacted range; the model then answers from it."""
    request = body(searched(), system="Be brief.", context_management=edit(300))
    full = api.prompt_cache.count(request)
    assert full > 300
    api.enqueue(Reply.tool_use("Weather", {"city": "Paris"}))
    final = ask(api, stream, request)
    block, use = final.content
    assert isinstance(block, BetaCompactionBlock)
    assert block.content == summarize(model_messages(request))
    assert block.content.startswith(
        "Summary of the conversation so far: 3 messages; "
        'the user asked: "What is the weather in Paris today?'
    )
    assert "tools called: ToolSearch" in block.content
    assert [c.model_dump() for c in block.tool_changes or []] == [
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "Weather"}}
    ]
    assert (
        block.signature and block.encrypted_content and block.encrypted_content.startswith("cmpct_")
    )
    assert use.type == "tool_use" and use.name == "Weather" and final.stop_reason == "tool_use"
    compacted = {**request, "messages": [{"role": "assistant", "content": [block.model_dump()]}]}
    iterations = final.usage.iterations or []
    assert [i.type for i in iterations] == ["compaction", "message"]
    assert iterations[0].input_tokens == full
    assert iterations[0].output_tokens == count_tokens(block.content)
    assert (
        final.usage.input_tokens == iterations[1].input_tokens == api.prompt_cache.count(compacted)
    )
    assert final.usage.output_tokens == iterations[1].output_tokens
    assert final.context_management is not None and final.context_management.applied_edits == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_below_the_trigger_nothing_is_compacted(api: FakeAnthropicServer, stream: bool) -> None:
    """At or under the trigger (150,000 by default) the answer is the reply alone, with a
    message iteration; instructions are quoted in a summary."""
    request = body(searched(), context_management=edit(None, instructions="Keep the city."))
    api.enqueue(Reply.text("Looking."))
    final = ask(api, stream, request)
    assert [b.type for b in final.content] == ["text"]
    assert [i.type for i in final.usage.iterations or []] == ["message"]
    assert final.usage.input_tokens == api.prompt_cache.count(request)
    exact = body(searched(), context_management=edit(api.prompt_cache.count(request)))
    api.enqueue(Reply.text("Still."))
    assert [b.type for b in ask(api, stream, exact).content] == ["text"]
    focused = body(searched(), context_management=edit(1, instructions="Keep the city."))
    api.enqueue(Reply.text("Done."))
    first = ask(api, stream, focused).content[0]
    assert isinstance(first, BetaCompactionBlock) and 'focus: "Keep the city."' in str(
        first.content
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_block_sent_back_is_counted_from(api: FakeAnthropicServer, stream: bool) -> None:
    """Sent back as the SDK returned it, the block is accepted; what came before it is no longer
    counted, and the tools its tool_changes add stay callable."""
    request = body(searched(), context_management=edit(300))
    api.enqueue(
        Reply.tool_use("Weather", {"city": "Paris"}), Reply.tool_use("Weather", {"city": "Lyon"})
    )
    final = ask(api, stream, request)
    as_returned = {"role": "assistant", "content": final.content}  # the SDK's own models
    history = [*request["messages"], as_returned, result(final.content[1].id)]  # type: ignore[union-attr]
    follow = body(history, context_management=edit(300))
    again = ask(api, stream, follow)
    assert [b.type for b in again.content] == ["tool_use"]
    sent = api.requests[-1].body
    assert sent["messages"][3]["content"][0] == final.content[0].model_dump()
    from_block = {**sent, "messages": sent["messages"][3:]}
    assert (
        again.usage.input_tokens
        == api.prompt_cache.count(from_block)
        < api.prompt_cache.count(request)
    )
    assert api.context_tools(sent) == {"ToolSearch", "Weather"}
    longer = copy.deepcopy(sent)
    longer["messages"][0]["content"] = PROMPT * 5
    counted = api.client().beta.messages.count_tokens(
        **{k: v for k, v in longer.items() if k not in ("max_tokens", "stream")}, betas=[BETA]
    )
    assert counted.input_tokens == again.usage.input_tokens


def test_stream_events_of_a_compaction_block() -> None:
    """The start has null content and encrypted_content but the signature and tool_changes;
    one compaction_delta carries both texts; iterations come in message_delta only."""
    block = CompactionSigner().issue("Summary.", ["Weather"])
    usage = {"input_tokens": 5, "output_tokens": 2, "iterations": [{"type": "message"}]}
    whole = message(
        message_id="m",
        model="claude-test",
        content=[block],
        stop_reason="compaction",
        usage=usage,
        context_management={"applied_edits": []},
    )
    events = stream_events(whole)
    assert [n for n, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert "iterations" not in events[0][1]["message"]["usage"]
    assert events[2][1]["content_block"] == {**block, "content": None, "encrypted_content": None}
    assert events[3][1]["delta"] == {
        "type": "compaction_delta",
        "content": "Summary.",
        "encrypted_content": block["encrypted_content"],
    }
    assert events[5][1]["usage"]["iterations"] == [{"type": "message"}]
    assert events[5][1]["context_management"] == {"applied_edits": []}


# -- tools across a compaction ----------------------------------------------------------


def test_a_tool_loaded_before_the_block_needs_its_tool_addition(api: FakeAnthropicServer) -> None:
    """A tool_reference before the last compaction block no longer loads its tool: only the
    block's tool_changes can carry it over."""
    client = api.client(max_retries=2)
    for names, callable_ in (((), False), (("Weather",), True)):
        block = api.compaction_block("The user wants the weather.", names)
        history = [*searched(), {"role": "assistant", "content": [block]}]
        request = body(history)
        assert ("Weather" in api.context_tools(request)) is callable_
        dropped = dropped_messages(request)
        assert [m["role"] for m in dropped] == ["user", "assistant", "user", "assistant"]
        assert (
            dropped[0]["content"] == [{"type": "text", "text": PROMPT}]
            and not dropped[3]["content"]
        )
        api.enqueue(Reply.tool_use("Weather"))
        if callable_:
            assert client.beta.messages.create(**request, betas=[BETA]).content[0].name == "Weather"  # type: ignore[union-attr]
            continue
        with pytest.raises(anthropic.InternalServerError) as caught:
            client.beta.messages.create(**request, betas=[BETA])
        assert "it is deferred and was loaded only before the last compaction block" in str(
            caught.value
        )
        assert len(api.take_errors()) == 1


def test_blocks_before_the_block_in_its_message_are_dropped(api: FakeAnthropicServer) -> None:
    """In the message holding the last compaction block, the blocks before it are dropped
    too: their tokens, and the tools a server-side search among them loaded."""
    search = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    tools = [search, tool("Weather", defer_loading=True)]
    found = {"type": "tool_search_tool_search_result", "tool_references": [ref("Weather")]}
    searching = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": search["name"], "input": {}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": found},
    ]
    block = api.compaction_block("The user wants the weather.")
    after = {"type": "text", "text": "Let me answer from the summary."}
    turn = {
        "role": "assistant",
        "content": [{"type": "text", "text": PROMPT}, *searching, block, after],
    }
    request = body([{"role": "user", "content": "weather?"}, turn], tools=tools)
    assert model_messages(request) == [{**turn, "content": [block, after]}]
    assert api.context_tools(request) == {"tool_search_tool_bm25"}
    alone = body(
        [{"role": "user", "content": "x"}, {**turn, "content": [block, after]}], tools=tools
    )
    assert api.prompt_cache.count(request) == api.prompt_cache.count(alone)
    counted = api.client().beta.messages.count_tokens(
        model="claude-test", messages=request["messages"], tools=tools, betas=[BETA]
    )
    assert counted.input_tokens == api.prompt_cache.count(alone)


def test_a_tool_deferred_after_the_compaction_is_not_carried_over(api: FakeAnthropicServer) -> None:
    """tool_changes hold the deferred tools of the compacted request: a tool that was loaded
    then, and is deferred now, is not in them, so it is unloaded after the block."""
    loaded = [tool("ToolSearch"), tool("Weather")]
    request = body(searched(), tools=loaded, context_management=edit(300))
    api.enqueue(Reply.text("Noted."))
    final = ask(api, False, request)
    assert isinstance(final.content[0], BetaCompactionBlock) and final.content[0].tool_changes == []
    later = body([*request["messages"], sent_back(final), {"role": "user", "content": "weather?"}])
    assert api.context_tools(later) == {"ToolSearch"}
    api.enqueue(Reply.tool_use("Weather"))
    with pytest.raises(anthropic.InternalServerError):
        ask(api, False, later)
    assert "loaded only before the last compaction block" in api.take_errors()[0]


# -- the context window -----------------------------------------------------------------


def test_prompt_too_long(api: FakeAnthropicServer) -> None:
    """Over the model's window the request is refused with both numbers; compaction is
    applied first, and the compacted request must fit too."""
    api.context_windows["claude-small"] = 400
    prompt = "paris weather " * 300
    request = {
        "model": "claude-small",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": prompt}],
    }
    tokens = count_tokens(compact_json({"type": "text", "text": prompt}))
    assert tokens > 400
    assert refused(api, request) == f"prompt is too long: {tokens} tokens > 400 maximum"
    assert api.pending == 0 and not api.errors
    api.enqueue(Reply.text("Compacted."))
    final = ask(api, True, {**request, "context_management": edit(350)})
    assert [b.type for b in final.content] == ["compaction", "text"]
    assert final.usage.iterations and final.usage.iterations[0].input_tokens == tokens
    system = "You are terse. " * 200
    system_tokens = count_tokens(compact_json({"type": "text", "text": system}))
    big = {**request, "system": system, "context_management": edit(350)}
    summary = summarize(model_messages(big))
    expected = system_tokens + count_tokens(summary)
    assert refused(api, big) == f"prompt is too long: {expected} tokens > 400 maximum"
    api.context_window = 50
    assert refused(api, body([{"role": "user", "content": prompt}])).endswith("tokens > 50 maximum")
    assert api.window("claude-small") == 400 and api.window("claude-test") == 50


# -- pause_after_compaction -------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_pause_after_compaction(api: FakeAnthropicServer, stream: bool) -> None:
    """The answer is the block alone, stop reason compaction, no script item used; sending
    the block back continues from it."""
    request = body(searched(), context_management=edit(300, pause_after_compaction=True))
    api.enqueue(Reply.tool_use("Weather", {"city": "Paris"}))
    paused = ask(api, stream, request)
    assert paused.stop_reason == "compaction" and [b.type for b in paused.content] == ["compaction"]
    assert api.pending == 1
    assert [i.type for i in paused.usage.iterations or []] == ["compaction"]
    assert (paused.usage.input_tokens, paused.usage.output_tokens) == (0, 0)
    resumed = body(
        [*request["messages"], sent_back(paused)],
        context_management=edit(300, pause_after_compaction=True),
    )
    final = ask(api, stream, resumed)
    assert final.stop_reason == "tool_use" and final.content[0].name == "Weather"  # type: ignore[union-attr]
    assert [i.type for i in final.usage.iterations or []] == ["message"]
    assert final.usage.input_tokens == api.prompt_cache.count(
        {**resumed, "messages": resumed["messages"][3:]}
    )
    assert resumed["messages"][3]["content"][0]["type"] == "compaction"


# -- prompt cache -----------------------------------------------------------------------


def test_the_cached_prefix_starts_at_the_block(api: FakeAnthropicServer) -> None:
    """After the block, the prefix is tools, system, then the block: what came before it
    changes nothing, and a breakpoint on the block caches it."""
    system = [{"type": "text", "text": "Be brief.", "cache_control": CACHE}]
    request = body(searched(), system=system, context_management=edit(300))
    api.enqueue(Reply.text("It is sunny."), Reply.text("Still sunny."), Reply.text("Yes."))
    final = ask(api, True, request)
    block = {**final.content[0].model_dump(), "cache_control": CACHE}
    after = [
        {"role": "assistant", "content": [block, {"type": "text", "text": "It is sunny."}]},
        {"role": "user", "content": "And tomorrow?"},
    ]
    follow = body([*request["messages"], *after], system=system)
    parts = segments(follow)
    assert [p.key.split(":", 1)[0] for p in parts] == [
        "tool",
        "tool",
        "system",
        "assistant",
        "assistant",
        "user",
    ]
    head = sum(p.tokens for p in parts[:3])
    weather = count_tokens(compact_json(TOOLS[1]))
    assert parts[3].tokens == count_tokens(block["content"]) + weather
    second = ask(api, False, follow)
    assert (second.usage.cache_read_input_tokens, second.usage.cache_creation_input_tokens) == (
        head,
        parts[3].tokens,
    )
    other_past = body(
        [{"role": "user", "content": "Something else entirely."}, *after], system=system
    )
    third = ask(api, False, other_past)
    assert third.usage.cache_read_input_tokens == head + parts[3].tokens
    assert third.usage.cache_creation_input_tokens == 0


# -- property ---------------------------------------------------------------------------


WINDOW = 2_000


@pytest.fixture(scope="module")
def windowed() -> Iterator[FakeAnthropicServer]:
    """A server with a 2,000-token window, shared by the property's examples."""
    with FakeAnthropicServer(min_compaction_trigger=1, context_window=WINDOW) as server:
        yield server


@settings(max_examples=25, deadline=None)
@given(
    trigger=st.integers(min_value=300, max_value=WINDOW - 1),
    turns=st.lists(
        st.tuples(st.one_of(st.integers(1, 60), st.integers(400, 800)), st.integers(1, 100)),
        min_size=1,
        max_size=8,
    ),
    stream=st.booleans(),
)
def test_compacted_histories_fit_the_window(
    windowed: FakeAnthropicServer, trigger: int, turns: list[tuple[int, int]], stream: bool
) -> None:
    """With a trigger below the window, a conversation whose answers are sent back as they
    came is never refused, whatever its turns: the model never reads more than the window."""
    windowed.replace_script([])
    windowed.prompt_cache.clear()
    history: list[dict[str, Any]] = []
    for n, (asked, answered) in enumerate(turns):
        history.append({"role": "user", "content": f"Turn {n}: " + "tell me more " * asked})
        windowed.enqueue(Reply.text("Here is more. " * answered))
        request = body(list(history), context_management=edit(trigger))
        final = ask(windowed, stream, request)
        iterations = final.usage.iterations or []
        assert iterations[-1].type == "message" and iterations[-1].input_tokens <= WINDOW
        compacted = isinstance(final.content[0], BetaCompactionBlock)
        assert compacted == (windowed.prompt_cache.count(request) > trigger)
        if compacted:
            first = next(m for m in model_messages(request) if m["role"] == "user")
            turn = first["content"][0]["text"].split(":")[0]
            assert f'the user asked: "{turn}:' in str(final.content[0].content)
        history.append(sent_back(final))
    assert not windowed.take_errors()
