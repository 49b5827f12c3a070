"""A message record's line parsed and checked in one quick pass.

Nearly every line of a saved conversation is a message record nbagent wrote:
``{"i": 2, "message": {"role": ..., "content": [...]}}`` with every block well formed. This
module parses such a line with pydantic-core's JSON reader (:func:`pydantic_core.from_json`,
a third of the time of :func:`json.loads` per line) and checks the record in place against
the same shapes as :mod:`nbagent.store.records`' models (the record, the message, each block
of its role and each item of a ``tool_result``'s content), without building the record
again: resuming costs about one JSON parse per line. Anything else (another kind of record,
a block that does not match, JSON that the standard library reads but pydantic-core does
not) is not read here: :meth:`MessageLines.checked_message_record` answers None for it and
the line goes the slow way, which names what is wrong. A test holds the two ways to the same
answers for any record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_core import from_json

from nbagent.core.tool import NAME_PATTERN

Check = Callable[[dict[str, Any]], bool]
"""Whether a block (a dict with a ``type``) has the fields its type's model asks for."""

_is_id = re.compile(r"[a-zA-Z0-9_-]+").fullmatch
_is_name = NAME_PATTERN.fullmatch


def _tool_id(value: Any) -> bool:
    return type(value) is str and _is_id(value) is not None


def _tool_name(value: Any) -> bool:
    return type(value) is str and _is_name(value) is not None


def _null_or(kind: type, value: Any) -> bool:
    return value is None or type(value) is kind


def _text(block: dict[str, Any]) -> bool:
    return type(block.get("text")) is str and _null_or(list, block.get("citations"))


def _sourced(block: dict[str, Any]) -> bool:
    source = block.get("source")
    return type(source) is dict and type(source.get("type")) is str


def _search_result(block: dict[str, Any]) -> bool:
    content = block.get("content")
    return (
        type(content) is list
        and all(
            type(item) is dict and type(item.get("type")) is str and _text(item) for item in content
        )
        and type(block.get("source")) is str
        and type(block.get("title")) is str
    )


def _thinking(block: dict[str, Any]) -> bool:
    return type(block.get("thinking")) is str and type(block.get("signature")) is str


def _redacted_thinking(block: dict[str, Any]) -> bool:
    return type(block.get("data")) is str


def _tool_use(block: dict[str, Any]) -> bool:
    return (
        _tool_id(block.get("id"))
        and _tool_name(block.get("name"))
        and type(block.get("input")) is dict
    )


def _mcp_tool_use(block: dict[str, Any]) -> bool:
    return _tool_use(block) and type(block.get("server_name")) is str


def _server_result(block: dict[str, Any]) -> bool:
    return _tool_id(block.get("tool_use_id"))


def _compaction(block: dict[str, Any]) -> bool:
    content = block.get("content")
    return (
        (content is None or (type(content) is str and content != ""))
        and _null_or(str, block.get("encrypted_content"))
        and _null_or(str, block.get("signature"))
        and _null_or(list, block.get("tool_changes"))
    )


def _container_upload(block: dict[str, Any]) -> bool:
    return type(block.get("file_id")) is str


def _tool_reference(block: dict[str, Any]) -> bool:
    return _tool_name(block.get("tool_name"))


def _any_block(block: dict[str, Any]) -> bool:
    return True


_CHECKS: dict[str, Check] = {
    "Block": _any_block,
    "TextBlock": _text,
    "SourcedBlock": _sourced,
    "SearchResultBlock": _search_result,
    "ThinkingBlock": _thinking,
    "RedactedThinkingBlock": _redacted_thinking,
    "ToolUseBlock": _tool_use,
    "MCPToolUseBlock": _mcp_tool_use,
    "ServerResultBlock": _server_result,
    "CompactionBlock": _compaction,
    "ContainerUploadBlock": _container_upload,
    "ToolReferenceBlock": _tool_reference,
}
"""The check of each of :mod:`nbagent.store.records`' block models, by its name
(``ToolResultBlock``'s is built with the items its content may hold)."""


def _all_fit(blocks: list[Any], checks: Mapping[str, Check]) -> bool:
    """Whether every item of a list is a block of one of these types, well formed."""
    for block in blocks:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        check = checks.get(kind) if type(kind) is str else None
        if check is None or not check(block):
            return False
    return True


Blocks = Mapping[str, tuple[type, tuple[str, ...]]]
"""Each block type of a message: its model in :mod:`nbagent.store.records` and the roles
whose messages hold it (:data:`nbagent.store.records.BLOCKS`)."""


class MessageLines:
    """Reads a line that is a well-formed message record in one pass (see the module).

    Args:
        blocks: The block types of a message.
        result_items: Each block type of a ``tool_result``'s content, and its model
            (:data:`nbagent.store.records.RESULT_ITEMS`).
    """

    def __init__(self, blocks: Blocks, result_items: Mapping[str, type]) -> None:
        items = {kind: _CHECKS[model.__name__] for kind, model in result_items.items()}

        def tool_result(block: dict[str, Any]) -> bool:
            content = block.get("content", "")
            return (
                _tool_id(block.get("tool_use_id"))
                and (type(content) is str or (type(content) is list and _all_fit(content, items)))
                and type(block.get("is_error", False)) is bool
            )

        checks = {**_CHECKS, "ToolResultBlock": tool_result}
        self._roles: dict[str, dict[str, Check]] = {
            role: {
                kind: checks[model.__name__]
                for kind, (model, roles) in blocks.items()
                if role in roles
            }
            for role in ("user", "assistant")
        }

    def checked_message_record(self, body: bytes) -> dict[str, Any] | None:
        """A line as a message record whose every block is well formed.

        Args:
            body: The line's bytes (no newline, no MAC field), known to be neither too long
                nor too deep.

        Returns:
            The record (new objects, fields in the line's order), or None when it is not such
            a record or not JSON that pydantic-core reads.
        """
        try:
            record = from_json(body)
        except ValueError:
            return None
        return record if self._fits(record) else None

    def _fits(self, record: Any) -> bool:
        """Whether a parsed line is ``{"i": N, "message": {"role": ..., "content": ...}}``
        (the message may have more fields) whose every block is well formed."""
        if type(record) is not dict or len(record) != 2:
            return False
        index, message = record.get("i"), record.get("message")
        if type(index) is not int or index < 0 or type(message) is not dict:
            return False
        role = message.get("role")
        checks = self._roles.get(role) if type(role) is str else None
        content = message.get("content")
        if checks is None:
            return False
        return type(content) is str or (type(content) is list and _all_fit(content, checks))
