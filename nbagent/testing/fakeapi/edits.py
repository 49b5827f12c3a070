"""Context editing for the fake Messages API: the ``context_management`` edits checked, and
``clear_tool_uses_20250919`` played.

Two edits are simulated, each under its beta (``anthropic-beta`` header):

- ``compact_20260112`` (``compact-2026-01-12``): see ``fakeapi.compaction``;
- ``clear_tool_uses_20250919`` (``context-management-2025-06-27``): past its trigger
  (``input_tokens``, 100,000 by default, or ``tool_uses``), the oldest tool uses the model
  reads are cleared, all but the last ``keep`` (3 by default) and those of the
  ``exclude_tools``: each one's ``tool_result`` content becomes :data:`CLEARED_RESULT` (and,
  with ``clear_tool_inputs``, its ``tool_use`` input ``{}``), unless that frees fewer than
  ``clear_at_least`` input tokens. The client keeps sending its whole history; the model reads
  the cleared one, which is what the token counts, the cached prefix and the tools in context
  (a cleared ``tool_reference`` no longer loads its tool) are worked out from. The answer's
  ``context_management.applied_edits`` says what was cleared
  (``BetaClearToolUses20250919EditResponse``: ``cleared_tool_uses``,
  ``cleared_input_tokens``).

``clear_thinking_20251015`` is a real edit the fake does not play: it is refused, saying so.
The checks return the API's message (a 400 ``invalid_request_error``), or None.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.testing.fakeapi.api_tools import extra_field_error

COMPACT_BETA = "compact-2026-01-12"
"""The beta of server-side compaction."""
COMPACT_EDIT = "compact_20260112"
"""The edit type of server-side compaction."""
CONTEXT_BETA = "context-management-2025-06-27"
"""The beta of context editing (and of the memory tool)."""
CLEAR_EDIT = "clear_tool_uses_20250919"
"""The edit type that clears old tool uses."""
NOT_SIMULATED_EDITS = ("clear_thinking_20251015",)
"""Real edits the fake API does not simulate (refused, saying so)."""
EDIT_BETAS = {COMPACT_EDIT: COMPACT_BETA, CLEAR_EDIT: CONTEXT_BETA}
"""The beta each simulated edit needs."""
DEFAULT_TRIGGER = 150_000
"""The input tokens above which a compact edit without ``trigger`` compacts."""
MIN_TRIGGER = 50_000
"""The smallest compact ``trigger.value`` the API accepts."""
CLEAR_TRIGGER = 100_000
"""The input tokens above which a clear edit without ``trigger`` clears."""
CLEAR_KEEP = 3
"""The tool uses a clear edit without ``keep`` keeps."""
CLEARED_RESULT = "[This tool result was cleared to save context.]"
"""What a cleared tool result's content becomes."""

MEMORY_TYPE = "memory_20250818"
"""The memory tool's type: a tool the client runs, under the context-management beta."""
CLIENT_TOOL_TYPES = {MEMORY_TYPE: "memory"}
"""Typed tools the client runs, with the name each must carry."""
_MEMORY_KEYS = {
    "type",
    "name",
    "allowed_callers",
    "cache_control",
    "defer_loading",
    "input_examples",
    "strict",
}

_COMPACT_KEYS = {"type", "trigger", "instructions", "pause_after_compaction"}
_CLEAR_KEYS = {"type", "trigger", "keep", "clear_at_least", "clear_tool_inputs", "exclude_tools"}


def context_management_error(
    body: Mapping[str, Any], betas: Collection[str], min_trigger: int
) -> str | None:
    """Check ``context_management``: only with a beta of its edits, each edit with its own
    beta, at most one of each type, every field typed.

    Args:
        body: The request.
        betas: The request's betas.
        min_trigger: The smallest compact ``trigger.value`` accepted.

    Returns:
        The API's message, or None.
    """
    if "context_management" not in body:
        return None
    if not set(EDIT_BETAS.values()) & set(betas):
        return "context_management: Extra inputs are not permitted"
    config = body["context_management"]
    if config is None:
        return None
    if not isinstance(config, dict):
        return "context_management: Input should be a valid dictionary"
    if error := extra_field_error("context_management", config, ("edits",)):
        return error
    edits = config.get("edits", [])
    if not isinstance(edits, list):
        return "context_management.edits: Input should be a valid list"
    seen: set[str] = set()
    for k, edit in enumerate(edits):
        where = f"context_management.edits.{k}"
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind in NOT_SIMULATED_EDITS:
            return (
                f"{where}.type: {kind} is a real edit that FakeAnthropicServer does not "
                f"simulate; it simulates {', '.join(EDIT_BETAS)}"
            )
        if kind not in EDIT_BETAS:
            tags = ", ".join(f"'{t}'" for t in sorted([*EDIT_BETAS, *NOT_SIMULATED_EDITS]))
            return (
                f"{where}: Input tag {kind!r} found using 'type' does not match any of the "
                f"expected tags: {tags}"
            )
        assert isinstance(edit, dict)
        if EDIT_BETAS[kind] not in betas:
            return f"{where}.type: {kind} needs the anthropic-beta {EDIT_BETAS[kind]}"
        if kind in seen:
            return f"{where}: only one {kind} edit may be given"
        seen.add(kind)
        check = _compact_error if kind == COMPACT_EDIT else _clear_error
        if error := check(f"{where}.{kind}", edit, min_trigger):
            return error
    return None


def _compact_error(where: str, edit: dict[str, Any], min_trigger: int) -> str | None:
    """Check the fields of one compact_20260112 edit."""
    if error := extra_field_error(where, edit, _COMPACT_KEYS):
        return error
    if not isinstance(edit.get("instructions"), str | None):
        return f"{where}.instructions: Input should be a valid string"
    if not isinstance(edit.get("pause_after_compaction", False), bool):
        return f"{where}.pause_after_compaction: Input should be a valid boolean"
    trigger = edit.get("trigger")
    if trigger is None:
        return None
    return _count_error(f"{where}.trigger", trigger, ("input_tokens",), max(1, min_trigger))


def _clear_error(where: str, edit: dict[str, Any], _min_trigger: int) -> str | None:
    """Check the fields of one clear_tool_uses_20250919 edit
    (``BetaClearToolUses20250919EditParam``)."""
    if error := extra_field_error(where, edit, _CLEAR_KEYS):
        return error
    checks: list[tuple[str, tuple[str, ...], int]] = [
        ("trigger", ("input_tokens", "tool_uses"), 1),
        ("keep", ("tool_uses",), 0),
        ("clear_at_least", ("input_tokens",), 0),
    ]
    for key, kinds, least in checks:
        if key not in edit or (key == "clear_at_least" and edit[key] is None):
            continue  # trigger and keep may be left out, not null (their types are not Optional)
        if error := _count_error(f"{where}.{key}", edit[key], kinds, least):
            return error
    inputs = edit.get("clear_tool_inputs")
    if not (inputs is None or isinstance(inputs, bool) or _strings(inputs)):
        return f"{where}.clear_tool_inputs: Input should be a valid boolean or a list of strings"
    excluded = edit.get("exclude_tools")
    if not (excluded is None or _strings(excluded)):
        return f"{where}.exclude_tools: Input should be a valid list of strings"
    return None


def _strings(value: Any) -> bool:
    """Whether a value is a list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _count_error(where: str, value: Any, kinds: tuple[str, ...], least: int) -> str | None:
    """Check a ``{"type": ..., "value": N}`` object (a trigger, a keep, a clear_at_least)."""
    if not isinstance(value, dict):
        return f"{where}: Input should be a valid dictionary"
    if error := extra_field_error(where, value, ("type", "value")):
        return error
    if value.get("type") not in kinds:
        return f"{where}.type: Input should be {' or '.join(repr(k) for k in kinds)}"
    if "value" not in value:
        return f"{where}.value: Field required"
    number = value["value"]
    if not isinstance(number, int) or isinstance(number, bool):
        return f"{where}.value: Input should be a valid integer"
    if number < least:
        return f"{where}.value: Input should be greater than or equal to {least}"
    return None


@dataclass(frozen=True)
class Cleared:
    """What a clear edit did to a request.

    Attributes:
        body: The request as the model reads it (cleared tool uses replaced).
        applied: The answer's ``applied_edits`` entry
            (``BetaClearToolUses20250919EditResponse``).
    """

    body: dict[str, Any]
    applied: dict[str, Any]


def clear_edit(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The clear_tool_uses_20250919 edit of a (valid) request, if it has one."""
    config = body.get("context_management") or {}
    return next((e for e in config.get("edits") or () if e.get("type") == CLEAR_EDIT), None)


def clear_tool_uses(
    body: dict[str, Any],
    edit: Mapping[str, Any],
    count: Callable[[Mapping[str, Any]], int],
    reads: Callable[[Mapping[str, Any]], list[dict[str, Any]]],
) -> Cleared | None:
    """Play a clear edit on a request.

    Args:
        body: The request.
        edit: Its clear edit.
        count: Counts a request's input tokens (what the model reads).
        reads: The messages the model reads (from the last compaction block on).

    Returns:
        The cleared request and what was cleared; None when the trigger is not reached, no
        tool use is old enough, or less than ``clear_at_least`` would be freed.
    """
    uses = [
        block
        for message in reads(body)
        if message.get("role") == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": CLEAR_TRIGGER}
    before = count(body)
    reached = len(uses) if trigger["type"] == "tool_uses" else before
    if reached <= trigger["value"]:
        return None
    keep = (edit.get("keep") or {"value": CLEAR_KEEP})["value"]
    excluded = set(edit.get("exclude_tools") or ())
    old = uses[: max(0, len(uses) - keep)]
    cleared = {b["id"]: b for b in old if b.get("name") not in excluded}
    if not cleared:
        return None
    inputs = edit.get("clear_tool_inputs")
    blank = {
        i
        for i, b in cleared.items()
        if inputs is True or (isinstance(inputs, list) and b["name"] in inputs)
    }
    messages = [_cleared(m, set(cleared), blank) for m in body["messages"]]
    edited = {**body, "messages": messages}
    freed = before - count(edited)
    least = (edit.get("clear_at_least") or {"value": 0})["value"]
    if freed < least:
        return None
    applied = {"type": CLEAR_EDIT, "cleared_tool_uses": len(cleared), "cleared_input_tokens": freed}
    return Cleared(edited, applied)


def _cleared(message: dict[str, Any], ids: set[str], blank: set[str]) -> dict[str, Any]:
    """A message with the results of the cleared uses replaced (and the inputs blanked)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = []
    for block in content:
        if block.get("type") == "tool_result" and block.get("tool_use_id") in ids:
            block = {**block, "content": CLEARED_RESULT}
        elif block.get("type") == "tool_use" and block.get("id") in blank:
            block = {**block, "input": {}}
        blocks.append(block)
    return {**message, "content": blocks}


def client_tool_error(i: int, tool: Mapping[str, Any]) -> str | None:
    """Check a typed client tool's definition (``BetaMemoryTool20250818Param``)."""
    kind = str(tool["type"])
    where = f"tools.{i}.{kind}"
    if tool.get("name") != CLIENT_TOOL_TYPES[kind]:
        return f"{where}.name: Input should be '{CLIENT_TOOL_TYPES[kind]}'"
    return extra_field_error(where, tool, _MEMORY_KEYS)


def memory_beta_error(body: Mapping[str, Any], betas: Collection[str]) -> str | None:
    """The memory tool is only taken under the context-management beta."""
    for i, tool in enumerate(body.get("tools") or ()):
        if isinstance(tool, dict) and tool.get("type") == MEMORY_TYPE and CONTEXT_BETA not in betas:
            return (
                f"tools.{i}: Input tag '{MEMORY_TYPE}' found using 'type' does not match any of "
                f"the expected tags (it needs the anthropic-beta {CONTEXT_BETA})"
            )
    return None
