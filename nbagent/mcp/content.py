"""MCP content as tool_result content the Anthropic API accepts.

=====================================  =============================================
MCP                                    API block
=====================================  =============================================
text                                   text
image (png, jpeg, gif, webp)           image with a base64 source
image (another type), audio            a text note: kind, type and size
resource_link                          a text line: name, URI, type
embedded text resource                 text headed by the URI
embedded blob: image / PDF / text/*    image / document / decoded text
embedded blob: anything else           a text note
structuredContent (no text given)      its JSON as text
isError                                ``ToolResult(is_error=True)``
=====================================  =============================================

Text is capped (:data:`MAX_TEXT_CHARS` over the whole result, with a note saying how much
was cut) and so are images and documents (:data:`MAX_BINARY_BYTES` each). A result made of
text only is sent as one string.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from nbagent.core.tool import ToolResult

MAX_TEXT_CHARS = 100_000
"""Characters of text one result may send to the model."""

MAX_BINARY_BYTES = 5 * 1024 * 1024
"""Decoded bytes one image or document may send (the API's limit for an image)."""

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types the API accepts."""


def tool_result(result: Any, max_chars: int = MAX_TEXT_CHARS) -> ToolResult:
    """Turn an MCP ``CallToolResult`` into a ToolResult.

    Args:
        result: The ``mcp_types.CallToolResult``.
        max_chars: Characters of text to send at most.

    Returns:
        The result for the model; ``is_error`` follows the server's ``isError``, and
        ``metadata["structured_content"]`` keeps the structured content, if any.
    """
    blocks = content_blocks(result.content)
    structured = result.structured_content
    if structured is not None and not any(b["type"] == "text" for b in blocks):
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    metadata = {"structured_content": structured} if structured is not None else {}
    if not blocks:
        empty = "(the tool reported an error without a message)" if result.is_error else None
        return ToolResult(content=empty or "(no output)", is_error=bool(result.is_error))
    content = _finish(blocks, max_chars)
    return ToolResult(content=content, is_error=bool(result.is_error), metadata=metadata)


def resource_content(
    contents: Iterable[Any], max_chars: int = MAX_TEXT_CHARS
) -> str | list[dict[str, Any]]:
    """Turn the contents of a ``resources/read`` result into tool_result content.

    Args:
        contents: The ``TextResourceContents`` / ``BlobResourceContents`` items.
        max_chars: Characters of text to send at most.

    Returns:
        A string when it is all text, else a list of API blocks.
    """
    blocks = [_resource_block(item) for item in contents]
    return _finish(blocks, max_chars) if blocks else "(the resource is empty)"


def content_blocks(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Map MCP content items to API blocks (whitespace-only text is dropped).

    Args:
        items: ``TextContent``, ``ImageContent``, ``AudioContent``, ``ResourceLink`` and
            ``EmbeddedResource`` items.

    Returns:
        The API blocks, in order.
    """
    blocks: list[dict[str, Any]] = []
    for item in items:
        kind = item.type
        if kind == "text":
            block = _text(item.text)
        elif kind == "image":
            block = _binary("image", item.data, item.mime_type)
        elif kind == "audio":
            block = _note("audio", item.mime_type, _decoded_size(item.data))
        elif kind == "resource_link":
            block = _text(_describe_link(item))
        elif kind == "resource":
            block = _resource_block(item.resource)
        else:
            block = _text(f"[content of type {kind!r} omitted]")
        if block["type"] != "text" or block["text"].strip():
            blocks.append(block)
    return blocks


def _resource_block(resource: Any) -> dict[str, Any]:
    """Map one embedded resource (text or blob) to a block."""
    uri, mime = str(resource.uri), resource.mime_type
    text = getattr(resource, "text", None)
    if text is not None:
        return _text(f"Resource {uri}:\n{text}")
    blob = resource.blob
    if mime in IMAGE_TYPES:
        return _binary("image", blob, mime)
    if mime == "application/pdf":
        return _binary("document", blob, mime)
    if mime and mime.startswith("text/"):
        try:
            return _text(f"Resource {uri}:\n{base64.b64decode(blob).decode('utf-8')}")
        except (binascii.Error, UnicodeDecodeError):
            pass
    return _note(f"resource {uri}", mime, _decoded_size(blob))


def _binary(kind: str, data: str, mime: str | None) -> dict[str, Any]:
    """Make an image or document block, or a note when the type or size cannot be sent."""
    size = _decoded_size(data)
    if kind == "image" and mime not in IMAGE_TYPES:
        return _note(kind, mime, size)
    if size > MAX_BINARY_BYTES:
        return _note(kind, mime, size, f"larger than the {MAX_BINARY_BYTES // 2**20} MB limit")
    return {"type": kind, "source": {"type": "base64", "media_type": mime, "data": data}}


def _note(kind: str, mime: str | None, size: int, why: str = "not supported") -> dict[str, Any]:
    """Make a text block saying that some content could not be sent."""
    return _text(f"[{kind} of type {mime or 'unknown'} ({size:,} bytes) omitted: {why}]")


def _describe_link(link: Any) -> str:
    """One line for a resource link."""
    extra = ", ".join(part for part in (link.mime_type, link.description) if part)
    return f"Resource link: {link.name} <{link.uri}>" + (f" ({extra})" if extra else "")


def _decoded_size(data: str) -> int:
    """Compute the size in bytes of base64 data, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def _text(text: str) -> dict[str, Any]:
    """Make a text block."""
    return {"type": "text", "text": text}


def _finish(blocks: list[dict[str, Any]], max_chars: int) -> str | list[dict[str, Any]]:
    """Cap the text of the blocks; join them into one string when they are all text."""
    budget = max_chars
    capped: list[dict[str, Any]] = []
    cut = 0
    for block in blocks:
        if block["type"] != "text":
            capped.append(block)
            continue
        text = block["text"]
        kept = text[: max(budget, 0)]
        cut += len(text) - len(kept)
        budget -= len(kept)
        if kept.strip():
            capped.append(_text(kept))
    if cut:
        capped.append(_text(f"[output truncated: {cut:,} more characters were cut]"))
    if all(block["type"] == "text" for block in capped):
        return "\n".join(block["text"] for block in capped)
    return capped
