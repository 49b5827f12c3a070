"""Server-side compaction (beta ``compact-2026-01-12``) for the fake Messages API.

A request that carries the edit ``{"type": "compact_20260112", "trigger": {"type":
"input_tokens", "value": N}}`` (``N`` 150,000 by default) in ``context_management``, and whose
input tokens (counted from its last compaction block on, as ``fakeapi.cache`` counts them)
exceed ``N``, is compacted before the model answers. The answer's content starts with a
compaction block::

    {"type": "compaction", "content": SUMMARY, "encrypted_content": OPAQUE,
     "signature": SIGNATURE, "tool_changes": [{"type": "tool_addition",
     "tool": {"type": "tool_reference", "name": NAME}}, ...]}

- ``content`` is a deterministic summary of what the model read: how many messages, the
  first and last things the user asked, the tools called, the edit's ``instructions``;
- ``tool_changes`` adds each deferred tool that was loaded at the end of the compacted
  range (by a ``tool_reference``, or by the ``tool_changes`` of an earlier compaction): once
  the block is sent back, what came before it is dropped, and with it those references;
- ``signature`` is an HMAC, with a per-server secret, over ``content``, ``encrypted_content``
  and ``tool_changes``: a block sent back with any of them changed is refused.

The model then answers from the compacted context (the tools, the system prompt and the
block), unless ``pause_after_compaction`` is set: then the answer is the block alone, with
stop reason ``compaction``, and no script item is used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.core.text import one_line
from nbagent.core.tokens import compact_json
from nbagent.testing.fakeapi.edits import COMPACT_EDIT, DEFAULT_TRIGGER
from nbagent.testing.fakeapi.rules import is_compaction, is_deferred, model_messages

DEFAULT_CONTEXT_WINDOW = 200_000
"""The context window of a model FakeAnthropicServer is not told about, in input tokens."""
QUOTE_CHARS = 80
"""The most characters of a prompt (or of an earlier summary) a summary quotes."""
NAMED_TOOLS = 10
"""The most tool names a summary lists."""


@dataclass(frozen=True)
class CompactEdit:
    """A request's compact_20260112 edit, with its defaults filled in.

    Attributes:
        trigger: Compact when the input tokens exceed this.
        instructions: Additional instructions for the summary, if any.
        pause: Whether to answer with the compaction block alone.
    """

    trigger: int
    instructions: str | None
    pause: bool


def compact_edit(body: Mapping[str, Any]) -> CompactEdit | None:
    """Return the compact edit of a (valid) request, or None if it has none.

    Args:
        body: A request body that passed ``rules.check_request``.
    """
    config = body.get("context_management") or {}
    for edit in config.get("edits") or ():
        if edit.get("type") == COMPACT_EDIT:
            trigger = edit.get("trigger") or {}
            return CompactEdit(
                int(trigger.get("value", DEFAULT_TRIGGER)),
                edit.get("instructions") or None,
                bool(edit.get("pause_after_compaction", False)),
            )
    return None


class CompactionSigner:
    """Issues and verifies compaction blocks with a secret of its own.

    Args:
        secret: The HMAC key; by default 32 random bytes, so that another server does not
            accept this one's blocks.
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)

    def _mac(self, purpose: str, value: Any) -> bytes:
        """HMAC-SHA256 of a purpose and a JSON value (keys sorted: the SDK reorders them)."""
        canonical = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        message = purpose.encode() + b"\x00" + canonical.encode()
        return hmac.new(self._secret, message, hashlib.sha256).digest()

    def signature(self, block: Mapping[str, Any]) -> str:
        """Return the signature a block must carry: over its content, encrypted_content and
        tool_changes (without ``cache_control``, which marks and does not change them)."""
        changes = [
            {k: v for k, v in change.items() if k != "cache_control"}
            if isinstance(change, dict)
            else change
            for change in block.get("tool_changes") or []
        ]
        signed = [block.get("content"), block.get("encrypted_content"), changes]
        return base64.b64encode(self._mac("signature", signed)).decode()

    def verify(self, block: Mapping[str, Any]) -> bool:
        """Tell whether a block's signature is the one this signer issued for it."""
        signature = block.get("signature")
        return isinstance(signature, str) and hmac.compare_digest(signature, self.signature(block))

    def issue(
        self,
        content: str,
        tool_names: tuple[str, ...] | list[str] = (),
        *,
        sealed: Any = None,
    ) -> dict[str, Any]:
        """Return a signed compaction block.

        Args:
            content: The summary (not empty).
            tool_names: The tools its ``tool_changes`` add, in order.
            sealed: What ``encrypted_content`` stands for (any JSON value); it is sealed
                into an opaque string.
        """
        opaque = base64.urlsafe_b64encode(self._mac("sealed", [content, sealed])).decode()
        block: dict[str, Any] = {
            "type": "compaction",
            "content": content,
            "encrypted_content": "cmpct_" + opaque.rstrip("="),
            "tool_changes": [
                {"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}
                for name in tool_names
            ],
        }
        block["signature"] = self.signature(block)
        return block


def _prompts(messages: list[dict[str, Any]]) -> list[str]:
    """The text the user typed in each user message (tool results left out)."""
    prompts = []
    for message in messages:
        if message.get("role") == "user":
            texts = [b.get("text", "") for b in message["content"] if b.get("type") == "text"]
            if text := " ".join(str(t) for t in texts).strip():
                prompts.append(text)
    return prompts


def summarize(messages: list[dict[str, Any]], instructions: str | None = None) -> str:
    """Summarise what the model read, deterministically and briefly (a few hundred tokens
    at most, whatever the length of the conversation).

    Args:
        messages: The messages the model read (``rules.model_messages``).
        instructions: The edit's ``instructions``, quoted as the summary's focus.

    Returns:
        e.g. ``Summary of the conversation so far: 3 messages; the user asked: "Add a
        column"; tools called: Read.``
    """
    parts = [f"Summary of the conversation so far: {len(messages)} messages"]
    first = messages[0]["content"][:1] if messages else []
    if first and is_compaction(first[0]):
        parts.append(
            f"it continues an earlier summary: {one_line(str(first[0]['content']), QUOTE_CHARS)}"
        )
    prompts = _prompts(messages)
    if prompts:
        parts.append(f'the user asked: "{one_line(prompts[0], QUOTE_CHARS)}"')
    if len(prompts) > 1:
        parts.append(f'and last: "{one_line(prompts[-1], QUOTE_CHARS)}"')
    called: list[str] = []
    for message in messages:
        for block in message["content"]:
            name = block.get("name")
            if block.get("type") in ("tool_use", "server_tool_use") and name not in called:
                called.append(str(name))
    if called:
        more = f" and {len(called) - NAMED_TOOLS} more" if len(called) > NAMED_TOOLS else ""
        parts.append("tools called: " + ", ".join(called[:NAMED_TOOLS]) + more)
    if instructions:
        parts.append(f'focus: "{one_line(instructions, QUOTE_CHARS)}"')
    return "; ".join(parts) + "."


def added_tools(body: Mapping[str, Any], visible: set[str]) -> list[str]:
    """The deferred tools the model has at the end of a request, in ``tools`` order: the
    ``tool_addition`` entries that take the request's ``tools`` there.

    Args:
        body: The request.
        visible: The tools in the model's context (``rules.context_tools``).
    """
    tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
    return [str(t["name"]) for t in tools if is_deferred(t) and t.get("name") in visible]


def compact(
    body: Mapping[str, Any], visible: set[str], edit: CompactEdit, signer: CompactionSigner
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Compact a request.

    Args:
        body: The request.
        visible: The tools in the model's context.
        edit: The request's compact edit.
        signer: Signs the block.

    Returns:
        The compaction block, and the compacted request the model answers: the same request
        whose messages are one assistant message holding the block.
    """
    messages = model_messages(body)
    sealed = {
        "messages": len(messages),
        "digest": hashlib.sha256(compact_json(messages).encode()).hexdigest(),
    }
    block = signer.issue(
        summarize(messages, edit.instructions), added_tools(body, visible), sealed=sealed
    )
    compacted = {**body, "messages": [{"role": "assistant", "content": [block]}]}
    return block, compacted
