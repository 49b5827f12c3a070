"""Tool schemas written for older JSON Schema drafts, made into the dialect the API reads.

The Messages API takes a tool's ``input_schema`` as JSON Schema draft 2020-12 with an
``"object"`` root, and refuses the whole request otherwise ("JSON schema is invalid. It
must match JSON Schema draft 2020-12"). Servers publish schemas from every era;
:func:`prepare` rewrites the common older forms to their 2020-12 equivalent, so that the
tool keeps its meaning, and says what it changed:

=============================================  ==============================================
draft-04 and older                             2020-12
=============================================  ==============================================
``"minimum": 0, "exclusiveMinimum": true``     ``"exclusiveMinimum": 0`` (also ``Maximum``)
``"id": "http://x/s"``, ``"id": "#a"``         ``"$id": "http://x/s"``, ``"$anchor": "a"``
``"definitions"``, ``"#/definitions/X"``       ``"$defs"``, ``"#/$defs/X"``
``"items": [A, B], "additionalItems": C``      ``"prefixItems": [A, B], "items": C``
``"dependencies"``                             ``"dependentRequired"``, ``"dependentSchemas"``
a property's ``"required": true`` (draft-03)   its name in the parent's ``"required"``
``"$schema"`` of another draft                 left out (the API reads 2020-12)
a root ``{}`` or with no ``type``              ``"type": "object"``
=============================================  ==============================================

What is still invalid after that is left out keyword by keyword (each named with its path),
and only a schema whose root is not an object cannot be used at all.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from nbagent.core import schema as checks

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The ``$schema`` of draft 2020-12."""

MAX_REMOVALS = 50
"""Invalid keywords left out of one schema at most before it is given up."""

_ANCHOR = re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$")

OBJECT_OR_NULL = {"object", "null"}
"""The root types that still mean an object input (a tool is never called with null)."""


Renames = dict[int, dict[str, str]]
"""Keywords renamed in place, by the ``id()`` of their schema: ``{old: new}``."""


class UnusableSchema(ValueError):
    """A schema that cannot be made into an object schema of draft 2020-12."""


@dataclass(frozen=True)
class Prepared:
    """A schema ready for the API, and what was changed to make it so."""

    schema: dict[str, Any]
    """The draft 2020-12 schema (a copy: the input is never changed)."""
    changes: tuple[str, ...]
    """One line per change, starting with its path, e.g. ``properties/page: exclusiveMinimum
    true became exclusiveMinimum 0 (draft-04 form)``."""


def object_root(schema: Any) -> dict[str, Any] | None:
    """Give a root schema its ``"type": "object"`` where that is what it means.

    Args:
        schema: A tool's input schema as published.

    Returns:
        The schema itself when it is an object schema; a copy with ``"type": "object"``
        when it had no ``type`` (``{}`` means "any input", and a tool's input is an object)
        or ``["object", "null"]``; ``None`` when its root is something else (an array, a
        string, not a dict at all).
    """
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind == "object":
        return schema
    if kind is None or (
        isinstance(kind, list)
        and "object" in kind
        and all(isinstance(k, str) and k in OBJECT_OR_NULL for k in kind)
    ):
        return {**schema, "type": "object"}
    return None


def prepare(schema: Any) -> Prepared:
    """Make a published input schema into an object schema of draft 2020-12.

    Args:
        schema: The schema as the server (or author) gave it.

    Returns:
        The schema to send, and the changes made.

    Raises:
        UnusableSchema: Its root is not an object schema, or it stays invalid.
    """
    root = object_root(schema)
    if root is None:
        kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        raise UnusableSchema(f'its root must be an object schema ("type": "object"), not {kind!r}')
    changes = [] if root is schema else ['(root): "type": "object" added']
    upgraded = copy.deepcopy(root)
    changes += _upgrade(upgraded)
    changes += _drop_invalid(upgraded)
    return Prepared(schema=upgraded, changes=tuple(changes))


def _upgrade(schema: dict[str, Any]) -> list[str]:
    """Rewrite older forms in place, in every subschema; return the changes."""
    changes: list[str] = []
    dialect = schema.get("$schema")
    if dialect is not None and not (isinstance(dialect, str) and dialect.rstrip("#") == DIALECT):
        del schema["$schema"]
        changes.append(f"(root): $schema {dialect!r} left out (the API reads 2020-12)")
    renames: Renames = {}
    for path, node in checks.subschemas(schema):
        done, renamed = _upgrade_node(node)
        changes += [f"{path or '(root)'}: {change}" for change in done]
        if renamed:
            renames[id(node)] = renamed
    if renames:
        for _, node in checks.subschemas(schema):
            if isinstance(node.get("$ref"), str):
                node["$ref"] = _moved(node["$ref"], schema, renames)
    return changes


def _upgrade_node(node: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Rewrite one schema's own older keywords in place.

    Returns:
        The changes, and the keywords renamed (for the ``$ref`` pointers into them).
    """
    changes: list[str] = []
    renamed: dict[str, str] = {}
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = node.get(bound)
        if not isinstance(flag, bool):
            continue
        del node[bound]
        if flag and isinstance(node.get(plain), int | float):
            node[bound] = node.pop(plain)
            changes.append(f"{bound} true became {bound} {node[bound]!r} (draft-04 form)")
        else:
            changes.append(f"{bound} {str(flag).lower()} left out (draft-04 form)")
    if isinstance(node.get("id"), str) and "$id" not in node and "$anchor" not in node:
        changes.append(_move_id(node))
    if isinstance(node.get("definitions"), dict):
        node["$defs"] = {**node.pop("definitions"), **node.get("$defs", {})}
        renamed["definitions"] = "$defs"
        changes.append("definitions became $defs")
    if isinstance(node.get("items"), list):
        node["prefixItems"] = node.pop("items")
        renamed["items"] = "prefixItems"
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
            renamed["additionalItems"] = "items"
        changes.append("items [...] became prefixItems (tuple form)")
    if isinstance(node.get("dependencies"), dict):
        for name, value in node.pop("dependencies").items():
            target = "dependentRequired" if isinstance(value, list) else "dependentSchemas"
            node.setdefault(target, {})[name] = value
        changes.append("dependencies became dependentRequired / dependentSchemas")
    if isinstance(node.get("properties"), dict):
        changes += _lift_required(node)
    return changes, renamed


def _move_id(node: dict[str, Any]) -> str:
    """Turn a draft-04 ``id`` into ``$id`` or ``$anchor``, or leave it out."""
    value = node.pop("id")
    base, _, fragment = value.partition("#")
    if not base and _ANCHOR.match(fragment):
        node["$anchor"] = fragment
        return f"id {value!r} became $anchor {fragment!r}"
    if base and not fragment:
        node["$id"] = base
        return f"id {value!r} became $id {base!r}"
    return f"id {value!r} left out (not a 2020-12 identifier)"


def _lift_required(node: dict[str, Any]) -> list[str]:
    """Move draft-03 ``"required": true`` from properties into the parent's list."""
    flagged = [
        name
        for name, prop in node["properties"].items()
        if isinstance(prop, dict) and isinstance(prop.get("required"), bool)
    ]
    if not flagged:
        return []
    required = node["required"] if isinstance(node.get("required"), list) else []
    for name in flagged:
        if node["properties"][name].pop("required") and name not in required:
            required.append(name)
    if required:
        node["required"] = required
    return [f"required true on {', '.join(flagged)} moved to required (draft-03 form)"]


def _moved(ref: str, root: dict[str, Any], renames: Renames) -> str:
    """Follow a local ``$ref`` pointer through the schema, renaming the keywords that moved."""
    if not ref.startswith("#/"):
        return ref
    node: Any = root
    parts: list[str] = []
    for raw in ref[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            key = renames.get(id(node), {}).get(key, key)
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            node = None
        parts.append(key.replace("~", "~0").replace("/", "~1"))
    return "#/" + "/".join(parts)


def _drop_invalid(schema: dict[str, Any]) -> list[str]:
    """Leave out keywords that are not valid 2020-12, one at a time; return what went."""
    if checks.schema_error(schema) is None:
        return []
    changes: list[str] = []
    for _ in range(MAX_REMOVALS):
        fault = checks.schema_fault(schema)
        if fault is None:
            return changes
        path, message = fault
        keys = [i for i, part in enumerate(path) if isinstance(part, str)]
        if not keys or path[:1] == ["type"]:
            where = "/".join(map(str, path)) or "(root)"
            raise UnusableSchema(f"it is not valid JSON Schema 2020-12 at {where}: {message}")
        cut = keys[-1]
        parent: Any = schema
        for part in path[:cut]:
            parent = parent[part]
        del parent[path[cut]]
        where = "/".join(str(part) for part in path[: cut + 1])
        changes.append(f"{where}: left out, not valid JSON Schema 2020-12 ({message})")
    raise UnusableSchema(f"it has more than {MAX_REMOVALS} invalid keywords")
