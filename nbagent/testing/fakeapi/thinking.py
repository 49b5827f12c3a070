"""Thinking and effort for the fake Messages API, checked and played as the API does.

- ``thinking`` (``ThinkingConfigParam``): ``{"type": "adaptive", "display"?}``,
  ``{"type": "enabled", "budget_tokens": N, "display"?}`` (N at least 1,024 and below
  ``max_tokens``) or ``{"type": "disabled"}``; ``output_config`` (``OutputConfigParam``):
  ``effort`` one of low, medium, high, xhigh, max (``format`` and ``task_budget`` pass).
- A scripted ``Thinking`` part answers only a request with thinking on; the server signs
  each thinking block it sends (an HMAC over its text, with a secret of its own), and refuses
  a request carrying a thinking block whose signature it did not issue for that text (a block
  changed, or another server's).
- With thinking on, the final assistant message of a tool-use loop must start with the
  thinking block the server sent with its tool calls: a history that dropped it is refused,
  as the API refuses it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

from nbagent.testing.fakeapi.api_tools import extra_field_error

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The effort levels ``output_config.effort`` takes."""
MIN_BUDGET = 1024
"""The least ``budget_tokens`` of enabled thinking."""

_THINKING_KEYS = {
    "adaptive": {"type", "display", "block_binding"},
    "enabled": {"type", "budget_tokens", "display"},
    "disabled": {"type"},
}
_DISPLAYS = (None, "summarized", "omitted")
_OUTPUT_KEYS = ("effort", "format", "task_budget")
_BLOCK_KEYS = ("type", "thinking", "signature")


def thinking_on(body: Mapping[str, Any]) -> bool:
    """Whether a request turns thinking on (adaptive or enabled)."""
    config = body.get("thinking")
    return isinstance(config, dict) and config.get("type") in ("adaptive", "enabled")


def config_error(body: Mapping[str, Any]) -> str | None:
    """Check ``thinking`` and ``output_config``; the API's message, or None."""
    config = body.get("thinking")
    if config is not None:
        kind = config.get("type") if isinstance(config, dict) else None
        if kind not in _THINKING_KEYS:
            return (
                f"thinking: Input tag {kind!r} found using 'type' does not match any of the "
                "expected tags: 'adaptive', 'disabled', 'enabled'"
            )
        assert isinstance(config, dict)
        if error := extra_field_error(f"thinking.{kind}", config, _THINKING_KEYS[kind]):
            return error
        if config.get("display") not in _DISPLAYS:
            return f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'"
        if kind == "enabled":
            budget = config.get("budget_tokens")
            if not isinstance(budget, int) or isinstance(budget, bool):
                return "thinking.enabled.budget_tokens: Input should be a valid integer"
            if budget < MIN_BUDGET:
                return f"thinking.enabled.budget_tokens: Input should be >= {MIN_BUDGET}"
            if budget >= body.get("max_tokens", 0):
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
    output = body.get("output_config")
    if output is None:
        return None
    if not isinstance(output, dict):
        return "output_config: Input should be a valid dictionary"
    if error := extra_field_error("output_config", output, _OUTPUT_KEYS):
        return error
    if output.get("effort") not in (None, *EFFORTS):
        return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    return None


class ThinkingSigner:
    """Signs the thinking blocks a server sends and checks those sent back.

    Args:
        secret: The HMAC key; 32 random bytes by default.
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.with_thinking: set[str] = set()
        """The ids of the tool uses sent in an answer that thought first."""

    def signature(self, text: str) -> str:
        """The signature of a thinking text."""
        mac = hmac.new(self._secret, b"thinking\x00" + text.encode(), hashlib.sha256)
        return base64.b64encode(mac.digest()).decode()

    def sign(self, content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """An answer's content with its thinking blocks signed; its tool uses noted when it
        thought first."""
        signed = [
            {**b, "signature": self.signature(b["thinking"])} if b["type"] == "thinking" else b
            for b in content
        ]
        if any(b["type"] == "thinking" for b in signed):
            self.with_thinking.update(b["id"] for b in signed if b["type"] == "tool_use")
        return signed

    def error(self, body: Mapping[str, Any]) -> str | None:
        """Check the thinking blocks of a request's history; the API's message, or None."""
        messages = body.get("messages") or []
        for i, message in enumerate(messages):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for j, block in enumerate(content):
                if block.get("type") not in ("thinking", "redacted_thinking"):
                    continue
                where = f"messages.{i}.content.{j}"
                if message.get("role") != "assistant":
                    return f"{where}: {block['type']} blocks cannot appear in user messages"
                if block["type"] == "redacted_thinking":
                    return f"{where}: Invalid `data` in `redacted_thinking` block"
                if error := extra_field_error(f"{where}.thinking", block, _BLOCK_KEYS):
                    return error
                text, signature = block.get("thinking"), block.get("signature")
                if not isinstance(text, str) or not isinstance(signature, str):
                    return f"{where}.thinking: `thinking` and `signature` must be strings"
                if not hmac.compare_digest(signature, self.signature(text)):
                    return f"{where}: Invalid `signature` in `thinking` block"
        return self._final_error(body, messages)

    def _final_error(self, body: Mapping[str, Any], messages: list[Any]) -> str | None:
        """With thinking on, a tool-use loop's last assistant message must start with the
        thinking the server sent with its calls."""
        if not thinking_on(body) or len(messages) < 2:
            return None
        i = len(messages) - 2
        last = messages[i]
        content = last.get("content")
        if last.get("role") != "assistant" or not isinstance(content, list) or not content:
            return None
        uses = {b.get("id") for b in content if b.get("type") == "tool_use"}
        if not uses & self.with_thinking or content[0].get("type") == "thinking":
            return None
        return (
            f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{content[0].get('type')}`. When `thinking` is enabled, a final `assistant` "
            "message must start with a thinking block (preceding the lastmost set of `tool_use` "
            "and `tool_result` blocks). We recommend you include thinking blocks from previous "
            "turns. To avoid this requirement, disable `thinking`."
        )
