"""A tool's input schema as a person reads it: a parameter table.

The table flattens an input schema into one row per parameter: nested objects give dotted
rows (``filters.since``, ``items[].name`` for objects inside arrays), types read as words
(``array of string``, ``string or null``, ``one of "a", "b"``), and ``$ref`` pointers inside
the schema are followed, each at most once along a path (a recursive model stops at its
name). Any JSON value is accepted: what is not a schema shows as ``any``, never an error.

>>> rows = parameter_rows({
...     "type": "object",
...     "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
...     "required": ["tags"],
... })
>>> rows[0].name, rows[0].type, rows[0].required
('tags', 'array of string', True)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import unquote

from nbagent.core.markup import code_markdown, escape_html, plain_markdown
from nbagent.core.text import collapse_whitespace, cut

MAX_ROWS = 200
"""The most parameter rows shown; a longer table says how many were left out."""

_MAX_DEPTH = 4
"""How deep nested properties and nested types are spelled out."""
_MAX_CHOICES = 8
"""Enum values and alternatives named before the rest are counted."""
_MAX_HOPS = 32
"""``$ref`` and ``allOf`` wrappers followed at most to reach one schema."""
_TYPE_CHARS = 160
_TYPE_STEPS = 200
"""Schema nodes looked at to say one parameter's type (a huge ``anyOf`` tree stops there)."""
_COUNTED_ROWS = 10 * MAX_ROWS
"""Rows counted past the shown ones before a long table just says there are more."""
_DEFAULT_CHARS = 60


@dataclass(frozen=True)
class ParameterRow:
    """One parameter of a tool's input, nested ones included."""

    name: str
    """The parameter's path: ``query``, ``filters.since``, ``items[].name``."""
    type: str
    """Its type in words: ``string``, ``array of string``, ``string or null``."""
    required: bool
    """Whether the object that holds it requires it."""
    default: str
    """Its default as JSON text (``"utf-8"``, ``10``, ``null``); empty when it has none."""
    description: str
    """Its description, whole; empty when it has none."""
    depth: int
    """How deep it is nested: 0 for the tool's own parameters."""


def parameter_rows(schema: Any, limit: int = MAX_ROWS) -> list[ParameterRow]:
    """Flatten an input schema into parameter rows, parents before their properties.

    Args:
        schema: A JSON Schema of type object (anything else gives no rows or ``any`` types).
        limit: The most rows returned.

    Returns:
        The rows, in the order of the schema's properties.
    """
    return list(islice(_all_rows(schema), max(limit, 0)))


def parameters_html(schema: Any) -> str:
    """The parameter table of an input schema as HTML, styled with JupyterLab's variables.

    Args:
        schema: A JSON Schema of type object.

    Returns:
        A ``<table>``, or a line saying the tool takes no parameters; all text escaped.
    """
    rows, more = _rows_and_more(schema)
    if not rows:
        return f'<div style="{_MUTED}">No parameters.</div>'
    head = "".join(
        f'<th style="{_CELL}; text-align: left">{label}</th>'
        for label in ("parameter", "type", "required", "default", "description")
    )
    body = "".join(_html_row(row) for row in rows)
    note = f'<div style="{_MUTED}">… and {more} more parameters.</div>' if more else ""
    return (
        '<table class="nbagent-parameters" style="border-collapse: collapse; '
        'font-size: var(--jp-ui-font-size1); margin: 4px 0">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}"
    )


def parameters_markdown(schema: Any) -> str:
    """The parameter table of an input schema as a Markdown table.

    Args:
        schema: A JSON Schema of type object.

    Returns:
        The table, or a line saying the tool takes no parameters; all text escaped.
    """
    rows, more = _rows_and_more(schema)
    if not rows:
        return "No parameters."
    lines = [
        "| parameter | type | required | default | description |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        cells = (
            code_markdown(row.name),
            _md_text(row.type),
            "yes" if row.required else "",
            code_markdown(row.default) if row.default else "",
            _md_text(row.description),
        )
        lines.append("| " + " | ".join(cells) + " |")
    if more:
        lines.append(f"\n… and {more} more parameters.")
    return "\n".join(lines)


_CELL = "padding: 2px 8px; border-bottom: 1px solid var(--jp-border-color2); vertical-align: top"
_MUTED = "color: var(--jp-ui-font-color2)"
_CODE = "font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size)"


def _html_row(row: ParameterRow) -> str:
    parent, dot, leaf = row.name.rpartition(".")
    name = escape_html(leaf if dot else row.name)
    prefix = f'<span style="{_MUTED}">{escape_html(parent + dot)}</span>' if dot else ""
    indent = f"padding-left: {8 + 16 * row.depth}px"
    default = escape_html(row.default) if row.default else ""
    return (
        "<tr>"
        f'<td style="{_CELL}; {indent}; {_CODE}; white-space: nowrap">{prefix}{name}</td>'
        f'<td style="{_CELL}">{escape_html(row.type)}</td>'
        f'<td style="{_CELL}">{"yes" if row.required else ""}</td>'
        f'<td style="{_CELL}; {_CODE}">{default}</td>'
        f'<td style="{_CELL}; white-space: pre-wrap">{escape_html(row.description)}</td>'
        "</tr>"
    )


def _md_text(text: str) -> str:
    """Text for a Markdown table cell: one line, shown as written."""
    return plain_markdown(collapse_whitespace(text))


def _rows_and_more(schema: Any) -> tuple[list[ParameterRow], str]:
    """The rows shown, and how many more there are in words (empty when none)."""
    rows = parameter_rows(schema, limit=MAX_ROWS)
    if len(rows) < MAX_ROWS:
        return rows, ""
    more = sum(1 for _ in islice(_all_rows(schema), _COUNTED_ROWS + 1)) - len(rows)
    if more > _COUNTED_ROWS - MAX_ROWS:
        return rows, f"over {_COUNTED_ROWS - MAX_ROWS:,}"
    return rows, f"{more:,}" if more else ""


def _all_rows(schema: Any) -> Iterator[ParameterRow]:
    """Every row of an input schema, lazily."""
    node, refs = _resolve(schema, schema, ())
    return _object_rows(node, schema, "", 0, refs)


def _object_rows(
    node: Any, root: Any, prefix: str, depth: int, refs: tuple[str, ...]
) -> Iterator[ParameterRow]:
    """The rows of an object schema's properties, each followed by its own nested rows."""
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return
    required = node.get("required")
    needed = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    for name, sub in properties.items():
        path = f"{prefix}{name}"
        target, sub_refs = _unwrap(sub, root, refs)
        yield ParameterRow(
            name=path,
            type=cut(_TypeWords(root).of(sub, refs), _TYPE_CHARS),
            required=name in needed,
            default=_default_text(sub, target),
            description=_description(sub, target),
            depth=depth,
        )
        inner, inner_refs, joiner = _nested(target, root, sub_refs)
        yield from _object_rows(inner, root, f"{path}{joiner}", depth + 1, inner_refs)


def _nested(node: Any, root: Any, refs: tuple[str, ...]) -> tuple[Any, tuple[str, ...], str]:
    """The object schema whose properties nest under a parameter, with the path joiner.

    An object gives its own properties (``.``), an array of objects its items' (``[].``);
    anything else gives None.
    """
    if not isinstance(node, dict):
        return None, refs, ""
    if node.get("type") == "array":
        item, item_refs = _unwrap(node.get("items"), root, refs)
        if _has_properties(item):
            return item, item_refs, "[]."
        return None, refs, ""
    return (node, refs, ".") if _has_properties(node) else (None, refs, "")


def _has_properties(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and isinstance(node.get("properties"), dict)
        and bool(node["properties"])
    )


def _unwrap(node: Any, root: Any, refs: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """Follow a ``$ref`` and a nullable ``anyOf`` to the schema that says what a value is."""
    node, refs = _resolve(node, root, refs)
    inner = _non_null(node)
    return (node, refs) if inner is node else _resolve(inner, root, refs)


def _non_null(node: Any) -> Any:
    """The one alternative of a nullable ``anyOf``/``oneOf`` that is not null, else the node."""
    if not isinstance(node, dict):
        return node
    for key in ("anyOf", "oneOf"):
        choices = node.get(key)
        if isinstance(choices, list):
            real = [c for c in choices if not (isinstance(c, dict) and c.get("type") == "null")]
            if len(real) == 1 and len(choices) > 1:
                return real[0]
    return node


def _resolve(node: Any, root: Any, refs: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """Follow ``$ref`` pointers inside the schema (and lone ``allOf`` wrappers), each once.

    Returns:
        The schema it leads to (the node itself when there is nothing to follow, when a
        pointer leads nowhere, or when this path already followed it) and the refs followed.
    """
    for _ in range(_MAX_HOPS):
        if not isinstance(node, dict):
            break
        ref = node.get("$ref")
        target = _pointer(root, ref) if isinstance(ref, str) and ref not in refs else None
        all_of = node.get("allOf")
        if target is not None:
            node, refs = target, (*refs, ref)
        elif isinstance(all_of, list) and len(all_of) == 1 and "$ref" not in node:
            node = all_of[0]
        else:
            break
    return node, refs


def _pointer(root: Any, ref: str) -> Any:
    """The value a ``#/...`` JSON pointer names inside the schema, or None."""
    if not ref.startswith("#"):
        return None
    node = root
    for raw in unquote(ref[1:]).split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


class _TypeWords:
    """Says schemas' types in words, within a budget of schema nodes looked at.

    Args:
        root: The whole schema (``$ref`` pointers lead into it).
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.steps = _TYPE_STEPS

    def of(self, node: Any, refs: tuple[str, ...], depth: int = 0) -> str:
        """Say a schema's type in words.

        Args:
            node: The schema.
            refs: The ``$ref`` pointers already followed on the way here.
            depth: How deep inside the parameter's own schema this one is.
        """
        self.steps -= 1
        if self.steps < 0 or depth > _MAX_DEPTH:
            return "…"
        if node is True or node == {}:
            return "any"
        if not isinstance(node, dict):
            return "nothing" if node is False else "any"
        ref = node.get("$ref")
        if isinstance(ref, str):
            target, followed = _resolve(node, self.root, refs)
            if target is node:
                return ref.rsplit("/", 1)[-1] or "any"
            return self.of(target, followed, depth + 1)
        if "const" in node:
            return f"exactly {_json(node['const'])}"
        if isinstance(node.get("enum"), list):
            return "one of " + _listed([_json(v) for v in node["enum"]], ", ")
        for key, joiner in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
            if isinstance(node.get(key), list) and node[key]:
                texts = [self.of(choice, refs, depth + 1) for choice in node[key]]
                return _listed(list(dict.fromkeys(texts)), joiner)
        kinds = node.get("type")
        names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
        names = [kind for kind in names if isinstance(kind, str)]
        if names:
            return _listed([self._one(kind, node, refs, depth) for kind in names], " or ")
        return "object" if isinstance(node.get("properties"), dict) else "any"

    def _one(self, kind: str, node: dict[str, Any], refs: tuple[str, ...], depth: int) -> str:
        """Say one ``type`` keyword's value in words, with what it holds."""
        if kind == "array":
            items = node.get("items")
            if isinstance(items, dict | bool) and items != {} and items is not True:
                return f"array of {_grouped(self.of(items, refs, depth + 1))}"
            tuple_items = node.get("prefixItems")
            if isinstance(tuple_items, list) and tuple_items:
                texts = [self.of(item, refs, depth + 1) for item in tuple_items]
                return f"array ({_listed(texts, ', ')})"
            return "array"
        if kind == "object":
            values = node.get("additionalProperties")
            if isinstance(values, dict) and values and not node.get("properties"):
                return f"object of {_grouped(self.of(values, refs, depth + 1))}"
            return "object"
        form = node.get("format")
        return f"{kind} ({form})" if kind != "null" and isinstance(form, str) and form else kind


def _grouped(text: str) -> str:
    """Bracket a type made of alternatives when it is part of a bigger one."""
    return f"({text})" if " or " in text or " and " in text else text


def _listed(texts: list[str], joiner: str) -> str:
    """Join the first few texts, counting the rest."""
    if not texts:
        return "(none)"
    shown = joiner.join(texts[:_MAX_CHOICES])
    rest = len(texts) - _MAX_CHOICES
    return f"{shown}{joiner}… ({rest} more)" if rest > 0 else shown


def _default_text(node: Any, resolved: Any) -> str:
    """A parameter's default as JSON text, from its own schema or the one it points to."""
    for candidate in (node, resolved):
        if isinstance(candidate, dict) and "default" in candidate:
            return cut(_json(candidate["default"]), _DEFAULT_CHARS)
    return ""


def _description(node: Any, resolved: Any) -> str:
    """A parameter's description, from its own schema or the one it points to."""
    for candidate in (node, resolved):
        if isinstance(candidate, dict) and isinstance(candidate.get("description"), str):
            return candidate["description"].strip()
    return ""


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):  # nested too deep, or a cycle in a Python value
        return "…"
