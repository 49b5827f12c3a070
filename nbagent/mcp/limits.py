"""Limits on what one listed tool may be, so that one hostile tool costs only itself.

A tool whose input schema is nested too deep, has too many properties or is too large is
refused (:func:`schema_fault`): the API would refuse it, or every request would carry it at
great cost. A description longer than :data:`MAX_DESCRIPTION` characters is cut
(:func:`cut_description`). Both are checked once, when the server lists its tools.
"""

from __future__ import annotations

import json
from typing import Any

MAX_SCHEMA_DEPTH = 64
"""Levels of JSON nesting (objects and arrays) a schema may have: about 30 levels of nested
``properties``, far more than any real tool needs."""

MAX_PROPERTIES = 1_000
"""Properties a schema may declare, counted over all its levels."""

MAX_SCHEMA_BYTES = 64 * 1024
"""Bytes of (compact) JSON a schema may take."""

MAX_DESCRIPTION = 10_000
"""Characters of a tool's description kept; the rest is cut."""


def schema_fault(schema: Any) -> str | None:
    """Say why a schema is beyond the limits, if it is.

    The walk stops as soon as a limit is passed, so a hostile schema costs no more than a
    schema at the limits.

    Args:
        schema: A listed tool's ``inputSchema`` (or ``outputSchema``), any JSON value.

    Returns:
        E.g. ``it is nested more than 64 levels deep``, or ``None`` within the limits.
    """
    nodes = 0
    properties = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_BYTES // 2:  # each value takes two bytes at least
            return f"it is more than {MAX_SCHEMA_BYTES // 1024} kB of JSON"
        if isinstance(node, dict):
            children: Any = node.values()
            if isinstance(node.get("properties"), dict):
                properties += len(node["properties"])
                if properties > MAX_PROPERTIES:
                    return f"it has more than {MAX_PROPERTIES:,} properties"
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_SCHEMA_DEPTH:
            return f"it is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        stack.extend((child, depth + 1) for child in children)
    size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_SCHEMA_BYTES:
        return f"it is {size / 1024:,.0f} kB of JSON, more than {MAX_SCHEMA_BYTES // 1024} kB"
    return None


def cut_description(text: str) -> tuple[str, int]:
    """Cut a description to :data:`MAX_DESCRIPTION` characters, saying so at its end.

    Args:
        text: The description as listed.

    Returns:
        The description to keep (ending in ``… (cut: N characters)`` when cut) and the number
        of characters cut (0 when it is kept whole).
    """
    if len(text) <= MAX_DESCRIPTION:
        return text, 0
    cut = len(text) - MAX_DESCRIPTION
    return f"{text[:MAX_DESCRIPTION]}… (cut: {cut:,} characters)", cut
