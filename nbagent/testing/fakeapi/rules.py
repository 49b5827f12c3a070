"""Request validation as the Anthropic Messages API does it, and the tools the model can see.

``check_request`` answers a request body with the ``ApiError`` the real API would answer
(a 400 ``invalid_request_error``), or with the set of tool names in the model's context:
the loaded tools plus every deferred tool that a ``tool_reference`` in the history loaded.
Messages quote the API's own wording where it is known.

The rules, in the order they are checked::

    fields       model, max_tokens (Messages only), messages: present and well typed
    context      context_management only with a beta of its edits: compact_20260112
                 (compact-2026-01-12) with an input_tokens trigger of at least the minimum,
                 clear_tool_uses_20250919 (context-management-2025-06-27); see fakeapi.edits
    tools        names match ^[a-zA-Z0-9_-]{1,64}$ and are unique; custom tools have a schema;
                 server tools (web search) have the fields of their type
                 (``fakeapi.api_tools``); a type the fake API does not know is refused
    deferral     at least one tool loaded; ToolSearch and tool search tools never deferred;
                 no cache_control on a deferred tool; at most 10,000 deferred tools
    roles        first message is user; roles alternate; no empty content
    compaction   compaction blocks only with the beta and only in assistant messages; their
                 fields typed; content null (a no-op) or a non-empty summary whose signature
                 is the one the server issued for it
    tool pairs   each tool_use answered in the next user message by a tool_result,
                 tool_results first, each matching a tool_use of the previous message;
                 a tool_result's content is a string or text (non-blank), image,
                 document, search_result and tool_reference blocks
    server tools each web_search_tool_result follows its server_tool_use, of a server tool
                 the request defines; results, errors and citations have their fields
    references   every tool_reference, and every tool_changes entry, names a tool in ``tools``
    caching      at most 4 cache_control breakpoints in the whole request

What the model reads starts at the last compaction block (``model_messages``): everything
before it (earlier messages, and earlier blocks of its message) is dropped, for the tools in
context as for the token counts and the cached prefix (``fakeapi.cache``). The tools the model
has then are the loaded ones, those the block's ``tool_changes`` add (less those it removes),
and those the ``tool_reference`` blocks after it load.

With ``supports_tool_reference=False`` (an endpoint without tool search) any
``defer_loading``, tool search tool or ``tool_reference`` block is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.catalogue.registry import TOOL_SEARCH_NAME
from nbagent.core.schema import schema_error
from nbagent.core.tool import NAME_PATTERN
from nbagent.testing.fakeapi.api_tools import (
    SERVER_TOOL_TYPES,
    block_error,
    definition_error,
    extra_field_error,
)
from nbagent.testing.fakeapi.edits import (
    CLIENT_TOOL_TYPES,
    COMPACT_BETA,
    MIN_TRIGGER,
    client_tool_error,
    context_management_error,
)

MAX_DEFERRED_TOOLS = 10_000
"""The most deferred tools one request may carry."""
MODEL_PREFIX = "claude-"
"""Model names the fake API knows start with this; others are answered 404 as unknown."""
MAX_CACHE_BREAKPOINTS = 4
"""The most ``cache_control`` breakpoints one request may carry."""
TOOL_SEARCH_TYPES = {
    "tool_search_tool_bm25_20251119": "tool_search_tool_bm25",
    "tool_search_tool_bm25": "tool_search_tool_bm25",
    "tool_search_tool_regex_20251119": "tool_search_tool_regex",
    "tool_search_tool_regex": "tool_search_tool_regex",
}
"""Server-side tool search tool types, with the name each one must carry."""
_COMPACTION_KEYS = {
    "type",
    "content",
    "encrypted_content",
    "signature",
    "tool_changes",
    "cache_control",
}
_TOOL_CHANGES = ("tool_addition", "tool_removal")

_USER_ONLY = {"tool_result"}
_RESULT_CONTENT_TYPES = ("text", "image", "search_result", "document", "tool_reference")
_ASSISTANT_ONLY = {
    "tool_use",
    "server_tool_use",
    "tool_search_tool_result",
    "web_search_tool_result",
    "compaction",
}


@dataclass(frozen=True)
class ApiError:
    """An error answer of the API.

    Attributes:
        status: The HTTP status.
        type: The error type (``invalid_request_error``, ``api_error``, ...).
        message: The human-readable message.
    """

    status: int
    type: str
    message: str

    def body(self, request_id: str) -> dict[str, Any]:
        """Return the JSON body the API sends with this error.

        Args:
            request_id: The id also sent in the ``request-id`` header.
        """
        error = {"type": self.type, "message": self.message}
        return {"type": "error", "error": error, "request_id": request_id}


def invalid(message: str) -> ApiError:
    """Build a 400 ``invalid_request_error``.

    Args:
        message: What is wrong with the request.
    """
    return ApiError(400, "invalid_request_error", message)


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Return a message's (or system prompt's) content as a list of blocks.

    Args:
        content: A string (one text block) or a list of blocks.
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or () if isinstance(block, dict)]


def tool_references(block: Mapping[str, Any]) -> Iterator[str]:
    """Yield the tool names of the ``tool_reference`` blocks in a block, at any depth.

    Args:
        block: A content block (a ``tool_result``, a ``tool_search_tool_result``, ...).
    """
    if block.get("type") == "tool_reference":
        yield str(block.get("tool_name"))
        return
    if block.get("type") == "compaction":  # its tool_changes are read by tool_changes()
        return
    for value in block.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                yield from tool_references(child)


def is_deferred(tool: Mapping[str, Any]) -> bool:
    """Tell whether a tool definition is deferred (``defer_loading: true``)."""
    return bool(tool.get("defer_loading"))


def is_compaction(block: Mapping[str, Any]) -> bool:
    """Tell whether a block is a compaction block that compacts (its content is not null).

    A compaction block with null content records a failed compaction: the API treats it as
    a no-op, so it neither starts what the model reads nor changes its tools.
    """
    return block.get("type") == "compaction" and block.get("content") is not None


def tool_changes(block: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Yield the ``(kind, tool name)`` entries of a compaction block's ``tool_changes``.

    Args:
        block: A compaction block; ``kind`` is ``tool_addition`` or ``tool_removal``.
    """
    for change in block.get("tool_changes") or ():
        if isinstance(change, dict) and isinstance(change.get("tool"), dict):
            yield str(change.get("type")), str(change["tool"].get("name"))


def last_compaction(messages: Iterable[Any]) -> tuple[int, int] | None:
    """Return ``(message, block)`` of the last compaction block that compacts, or None.

    Args:
        messages: A request's messages.
    """
    found = None
    for i, message in enumerate(messages):
        if isinstance(message, dict):
            for j, block in enumerate(content_blocks(message.get("content"))):
                if is_compaction(block):
                    found = (i, j)
    return found


def model_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return the messages the model reads for a request.

    That is everything from the last compaction block on: the messages before it, and the
    blocks before it in its own message, are dropped. No-op compaction blocks (null content)
    are left out too. Content is returned as lists of blocks.

    Args:
        body: A request body.
    """
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    start = last_compaction(messages)
    kept: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        (m, content_blocks(m.get("content"))) for m in messages
    ]
    if start is not None:
        i, j = start
        kept = [(kept[i][0], kept[i][1][j:]), *kept[i + 1 :]]
    return [
        {
            **message,
            "content": [
                b for b in blocks if b.get("type") != "compaction" or b.get("content") is not None
            ],
        }
        for message, blocks in kept
    ]


def dropped_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return what the last compaction block dropped, as messages of blocks (see
    ``model_messages``): the earlier messages, and the earlier blocks of its own message.

    Args:
        body: A request body.
    """
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    start = last_compaction(messages)
    if start is None:
        return []
    i, j = start
    dropped = [{**m, "content": content_blocks(m.get("content"))} for m in messages[:i]]
    return [*dropped, {**messages[i], "content": content_blocks(messages[i].get("content"))[:j]}]


def context_tools(body: Mapping[str, Any]) -> set[str]:
    """Return the names of the tools in the model's context for a request.

    These are the loaded (non-deferred) tools, plus every deferred tool loaded in what the
    model reads (``model_messages``): by the ``tool_changes`` of the compaction block it
    starts with (a ``tool_removal`` takes a tool away), then by each ``tool_reference``, in
    a user's ``tool_result`` or in an assistant's ``tool_search_tool_result`` (server-side
    search).

    Args:
        body: A request body.
    """
    tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
    names = {t.get("name") for t in tools}
    loaded = {str(t.get("name")) for t in tools if not is_deferred(t)}
    for message in model_messages(body):
        for block in message["content"]:
            for kind, name in tool_changes(block) if is_compaction(block) else ():
                if kind == "tool_addition" and name in names:
                    loaded.add(name)
                elif kind == "tool_removal":
                    loaded.discard(name)
            loaded.update(name for name in tool_references(block) if name in names)
    return loaded


def call_error(name: str, body: Mapping[str, Any], visible: set[str]) -> str | None:
    """Explain why the model cannot call a tool, or return None if it can.

    Args:
        name: The tool a scripted reply calls.
        body: The request the reply answers.
        visible: The tools in the model's context (see ``context_tools``).
    """
    if name in visible:
        return None
    tools = {t.get("name"): t for t in body.get("tools") or () if isinstance(t, dict)}
    if name not in tools:
        return f"script error: the model cannot call {name}: it is not in the request's tools"
    dropped = (b for m in dropped_messages(body) for b in m["content"])
    if any(_loads(b, name) for b in dropped):
        return (
            f"script error: the model cannot call {name}: it is deferred and was loaded only "
            "before the last compaction block, whose tool_changes do not add it"
        )
    return (
        f"script error: the model cannot call {name}: it is deferred and was never loaded "
        "by a tool_reference"
    )


def _loads(block: Mapping[str, Any], name: str) -> bool:
    """Tell whether a block loads a tool: a tool_reference, or a compaction's tool_addition."""
    if is_compaction(block):
        return ("tool_addition", name) in set(tool_changes(block))
    return name in tool_references(block)


def check_request(
    body: Any,
    *,
    count_tokens: bool = False,
    supports_tool_reference: bool = True,
    betas: Collection[str] = (),
    verify_compaction: Callable[[Mapping[str, Any]], bool] | None = None,
    min_trigger: int = MIN_TRIGGER,
) -> ApiError | set[str]:
    """Validate a request as the Messages API does.

    Args:
        body: The parsed JSON body.
        count_tokens: True for ``/v1/messages/count_tokens`` (no ``max_tokens``).
        supports_tool_reference: False for an endpoint without tool search.
        betas: The betas of the ``anthropic-beta`` header.
        verify_compaction: Tells whether a compaction block's signature is the one the server
            issued for it; without it every compaction block that compacts is refused.
        min_trigger: The smallest compact ``trigger.value`` accepted.

    Returns:
        The error the API would answer, or the names of the tools in the model's context.
    """
    if not isinstance(body, dict):
        return invalid("Request body must be a JSON object")
    error = (
        _check_fields(body, count_tokens)
        or _check_context_management(body, betas, min_trigger)
        or _check_tools(body.get("tools") or [], supports_tool_reference)
        or _check_roles(body["messages"])
        or _check_compaction_blocks(body["messages"], betas, verify_compaction)
        or _check_tool_pairs(body)
        or _check_server_blocks(body)
        or _check_references(body, supports_tool_reference)
        or _check_breakpoints(body)
    )
    return error or context_tools(body)


def _check_context_management(
    body: dict[str, Any], betas: Collection[str], min_trigger: int
) -> ApiError | None:
    """Check ``context_management`` (``fakeapi.edits``)."""
    message = context_management_error(body, betas, min_trigger)
    return invalid(message) if message else None


def _check_compaction_blocks(
    messages: list[Any],
    betas: Collection[str],
    verify: Callable[[Mapping[str, Any]], bool] | None,
) -> ApiError | None:
    """Check the compaction blocks: the beta, their fields, their signatures."""
    for i, message in enumerate(messages):
        for j, block in enumerate(content_blocks(message["content"])):
            if block["type"] != "compaction":
                continue
            where = f"messages.{i}.content.{j}"
            if COMPACT_BETA not in betas:
                return invalid(
                    f"{where}.type: Input tag 'compaction' found using 'type' does not match "
                    "any of the expected tags"
                )
            if error := _check_compaction_fields(f"{where}.compaction", block):
                return error
            if block.get("content") is not None and not (verify and verify(block)):
                return invalid(f"{where}: Invalid `signature` in `compaction` block")
    return None


def _check_compaction_fields(where: str, block: dict[str, Any]) -> ApiError | None:
    """Check the fields of one compaction block (not its signature)."""
    if error := extra_field_error(where, block, _COMPACTION_KEYS):
        return invalid(error)
    for key in ("content", "encrypted_content", "signature"):
        if not isinstance(block.get(key), str | None):
            return invalid(f"{where}.{key}: Input should be a valid string")
    if block.get("content") == "":
        return invalid(f"{where}.content: String should have at least 1 character")
    changes = block.get("tool_changes")
    if changes is None:
        return None
    if not isinstance(changes, list):
        return invalid(f"{where}.tool_changes: Input should be a valid list")
    for k, change in enumerate(changes):
        kind = change.get("type") if isinstance(change, dict) else None
        if kind not in _TOOL_CHANGES:
            return invalid(
                f"{where}.tool_changes.{k}: Input tag {kind!r} found using 'type' does not "
                "match any of the expected tags: 'tool_addition', 'tool_removal'"
            )
        assert isinstance(change, dict)
        tool = change.get("tool")
        if not isinstance(tool, dict):
            return invalid(f"{where}.tool_changes.{k}.{kind}.tool: Field required")
        if tool.get("type") != "tool_reference":
            return invalid(
                f"{where}.tool_changes.{k}.{kind}.tool: Input tag {tool.get('type')!r} found "
                "using 'type' does not match any of the expected tags: 'tool_reference'"
            )
        if not isinstance(tool.get("name"), str):
            return invalid(
                f"{where}.tool_changes.{k}.{kind}.tool.tool_reference.name: Field required"
            )
    return None


def _check_fields(body: dict[str, Any], count_tokens: bool) -> ApiError | None:
    """Check the required fields and their types."""
    required = ("model", "messages") if count_tokens else ("model", "max_tokens", "messages")
    for field in required:
        if field not in body:
            return invalid(f"{field}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        return invalid("model: Input should be a valid string")
    if not body["model"].startswith(MODEL_PREFIX):
        return ApiError(404, "not_found_error", f"model: {body['model']}")
    if not count_tokens:
        max_tokens = body["max_tokens"]
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            return invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 1:
            return invalid("max_tokens: Input should be greater than or equal to 1")
    if not isinstance(body["messages"], list):
        return invalid("messages: Input should be a valid list")
    if not isinstance(body.get("tools", []), list):
        return invalid("tools: Input should be a valid list")
    if not isinstance(body.get("system", ""), str | list):
        return invalid("system: Input should be a valid string or a list of text blocks")
    return None


def _check_tools(tools: list[Any], supports_tool_reference: bool) -> ApiError | None:
    """Check tool names, schemas and the deferral rules."""
    seen: set[str] = set()
    deferred = 0
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return invalid(f"tools.{i}: Input should be a valid dictionary")
        kind = tool.get("type", "custom")
        if kind in TOOL_SEARCH_TYPES and not supports_tool_reference:
            return invalid(
                f"tools.{i}.type: Input tag '{kind}' found using 'type' does not match any "
                "of the expected tags"
            )
        if "defer_loading" in tool and not supports_tool_reference:
            return invalid(f"tools.{i}.defer_loading: Extra inputs are not permitted")
        name = tool.get("name")
        if kind == "custom":
            if not isinstance(name, str) or not NAME_PATTERN.match(name):
                return invalid(
                    f"tools.{i}.custom.name: String should match pattern '{NAME_PATTERN.pattern}'"
                )
            if not isinstance(tool.get("input_schema"), dict):
                return invalid(f"tools.{i}.custom.input_schema: Field required")
            if error := _check_input_schema(i, tool["input_schema"]):
                return error
        elif kind in TOOL_SEARCH_TYPES and name != TOOL_SEARCH_TYPES[kind]:
            return invalid(f"tools.{i}.{kind}.name: Input should be '{TOOL_SEARCH_TYPES[kind]}'")
        elif kind in SERVER_TOOL_TYPES and (message := definition_error(i, tool)):
            return invalid(message)
        elif kind in CLIENT_TOOL_TYPES and (message := client_tool_error(i, tool)):
            return invalid(message)
        elif kind not in (*TOOL_SEARCH_TYPES, *SERVER_TOOL_TYPES, *CLIENT_TOOL_TYPES):
            known = ("custom", *TOOL_SEARCH_TYPES, *SERVER_TOOL_TYPES, *CLIENT_TOOL_TYPES)
            expected = ", ".join(f"'{t}'" for t in known)
            return invalid(
                f"tools.{i}: Input tag {kind!r} found using 'type' does not match any of the "
                f"expected tags: {expected}"
            )
        if name in seen:
            return invalid("tools: Tool names must be unique.")
        seen.add(str(name))
        if is_deferred(tool):
            deferred += 1
            if error := _check_deferred_tool(i, tool, kind):
                return error
    if deferred and deferred == len(tools):
        return invalid("All tools have defer_loading set. At least one tool must be non-deferred.")
    if deferred > MAX_DEFERRED_TOOLS:
        return invalid(
            f"tools: A maximum of {MAX_DEFERRED_TOOLS} tools with defer_loading may be "
            f"provided. Found {deferred}."
        )
    return None


def _check_input_schema(i: int, schema: dict[str, Any]) -> ApiError | None:
    """Refuse an input schema the API refuses: not draft 2020-12, or not an object root."""
    if schema.get("type") != "object":
        return invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
    if schema_error(schema) is not None:
        return invalid(
            f"tools.{i}.custom.input_schema: JSON schema is invalid. It must match JSON Schema "
            "draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use "
            "at https://docs.claude.com/en/docs/tool-use."
        )
    return None


def _check_deferred_tool(i: int, tool: dict[str, Any], kind: str) -> ApiError | None:
    """Check one deferred tool: not a search tool, no cache_control."""
    if kind in TOOL_SEARCH_TYPES:
        return invalid(f"tools.{i}: the tool search tool cannot have defer_loading set")
    if tool.get("name") == TOOL_SEARCH_NAME:
        return invalid(
            f"tools.{i}: the {TOOL_SEARCH_NAME} tool cannot be deferred: it is how "
            "the model loads deferred tools"
        )
    if tool.get("cache_control"):
        return invalid(
            f"tools.{i}: cache_control cannot be set on a tool with defer_loading: put the "
            "breakpoint on a loaded tool"
        )
    return None


def _check_roles(messages: list[Any]) -> ApiError | None:
    """Check roles, their alternation, and that content is not empty."""
    if not messages:
        return invalid("messages: at least one message is required")
    previous = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        role, content = message["role"], message.get("content")
        if not isinstance(content, str | list):
            return invalid(f"messages.{i}.content: Input should be a valid string or list")
        if i == 0 and role != "user":
            return invalid('messages: first message must use the "user" role')
        if role == previous:
            return invalid(
                'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row'
            )
        previous = role
        if not content and not (role == "assistant" and i == len(messages) - 1):
            return invalid(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if error := _check_blocks(i, role, content):
            return error
    return None


def _check_blocks(i: int, role: str, content: str | list[Any]) -> ApiError | None:
    """Check the blocks of one message: types allowed for the role, no empty text."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return invalid(f"messages.{i}.content.{j}: Input should be a valid content block")
        kind = block["type"]
        wrong = _ASSISTANT_ONLY if role == "user" else _USER_ONLY
        if kind in wrong:
            return invalid(
                f"messages.{i}.content.{j}: {kind} blocks cannot appear in {role} messages"
            )
        if kind == "tool_reference":
            return invalid(
                f"messages.{i}.content.{j}: tool_reference blocks are only allowed inside "
                "tool_result content"
            )
        if kind == "text" and not str(block.get("text", "")).strip():
            return invalid(
                f"messages.{i}.content.{j}: text content blocks must contain non-whitespace text"
            )
    return None


def _check_server_blocks(body: dict[str, Any]) -> ApiError | None:
    """Check server tool blocks (web search) and the citations of assistant texts."""
    message = block_error(body["messages"], body.get("tools") or [])
    return invalid(message) if message else None


def _check_tool_pairs(body: dict[str, Any]) -> ApiError | None:
    """Check that every tool_use is answered, and every tool_result answers one."""
    messages = body["messages"]
    seen_ids: set[str] = set()
    has_tool_blocks = False
    for i, message in enumerate(messages):
        blocks = content_blocks(message["content"])
        if message["role"] == "assistant":
            uses = [b for b in blocks if b["type"] == "tool_use"]
            for j, use in enumerate(uses):
                if use.get("id") in seen_ids:
                    return invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen_ids.add(str(use.get("id")))
            has_tool_blocks = has_tool_blocks or bool(uses)
            following = content_blocks(messages[i + 1]["content"]) if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following if b["type"] == "tool_result"}
            missing = [str(u.get("id")) for u in uses if u.get("id") not in answered]
            if missing:
                return invalid(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
        else:
            if error := _check_results(i, blocks, messages):
                return error
            has_tool_blocks = has_tool_blocks or any(b["type"] == "tool_result" for b in blocks)
    if has_tool_blocks and not body.get("tools"):
        return invalid(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )
    return None


def _check_results(i: int, blocks: list[dict[str, Any]], messages: list[Any]) -> ApiError | None:
    """Check the tool_result blocks of user message ``i``."""
    previous = content_blocks(messages[i - 1]["content"]) if i else []
    use_ids = {b.get("id") for b in previous if b["type"] == "tool_use"}
    answered: set[str] = set()
    other_seen = False
    for j, block in enumerate(blocks):
        if block["type"] != "tool_result":
            other_seen = True
            continue
        use_id = block.get("tool_use_id")
        if other_seen:
            return invalid(
                f"messages.{i}.content.{j}: tool_result blocks must come first in the user "
                "message content, before any other block"
            )
        if use_id not in use_ids:
            return invalid(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {use_id}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
        if use_id in answered:
            return invalid(
                f"messages.{i}.content.{j}: each tool_use must have a single result. Found "
                f"multiple `tool_result` blocks with id: {use_id}"
            )
        answered.add(str(use_id))
        if error := _check_result_content(f"messages.{i}.content.{j}", block.get("content")):
            return error
    return None


def _check_result_content(where: str, content: Any) -> ApiError | None:
    """Check a tool_result's content: absent, a string, or blocks of the allowed types."""
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return invalid(f"{where}.content: Input should be a valid string or list")
    for k, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in _RESULT_CONTENT_TYPES:
            expected = ", ".join(f"'{t}'" for t in _RESULT_CONTENT_TYPES)
            return invalid(
                f"{where}.content.{k}: Input tag {kind!r} found using 'type' does not match any "
                f"of the expected tags: {expected}"
            )
        if kind == "text" and not isinstance(block.get("text"), str):
            return invalid(f"{where}.content.{k}.text: Input should be a valid string")
        if kind == "text" and not block["text"].strip():
            return invalid(
                f"{where}.content.{k}: text content blocks must contain non-whitespace text"
            )
    return None


def _check_references(body: dict[str, Any], supports_tool_reference: bool) -> ApiError | None:
    """Check that tool_reference blocks are supported and name tools in ``tools``, as the
    tool_changes of compaction blocks must."""
    names = {t.get("name") for t in body.get("tools") or ()}
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(content_blocks(message["content"])):
            for name in tool_references(block):
                if not supports_tool_reference:
                    return invalid(
                        f"messages.{i}.content.{j}.content: Input tag 'tool_reference' found "
                        "using 'type' does not match any of the expected tags: 'text', "
                        "'image', 'search_result', 'document'"
                    )
                if name not in names:
                    return invalid(f"Tool reference '{name}' has no corresponding tool definition")
            for _, name in tool_changes(block) if is_compaction(block) else ():
                if name not in names:
                    return invalid(f"Tool reference '{name}' has no corresponding tool definition")
    return None


def count_breakpoints(value: Any) -> int:
    """Count the ``cache_control`` markers in any JSON value, at any depth.

    Args:
        value: A request body or any part of it.
    """
    if isinstance(value, list):
        return sum(count_breakpoints(item) for item in value)
    if not isinstance(value, dict):
        return 0
    own = 1 if value.get("cache_control") else 0
    return own + sum(count_breakpoints(v) for k, v in value.items() if k != "cache_control")


def _check_breakpoints(body: dict[str, Any]) -> ApiError | None:
    """Check the limit of cache_control breakpoints over tools, system and messages."""
    found = sum(count_breakpoints(body.get(key)) for key in ("tools", "system", "messages"))
    if found > MAX_CACHE_BREAKPOINTS:
        return invalid(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    return None
