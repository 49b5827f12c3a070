"""JSON Schema checks of tool definitions and tool inputs.

Two libraries, each where it is best. ``fastjsonschema`` compiles a schema into Python code:
checking is fast and importing it is cheap, so it answers the common question (is this
valid?) on every tool built and every call. ``jsonschema`` (draft 2020-12) has the last word
and names every fault, but importing it can take seconds (its format checkers pull in
grammar libraries), so it is imported only when the fast check finds something wrong.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from nbagent.core.diskcache import cached

MAX_REPORTED_ERRORS = 3
"""How many input errors a message lists before it says "and N more"."""


@functools.cache
def _quick_meta_check() -> Callable[[Any], Any]:
    """A compiled check against the draft-07 meta-schema, read without importing jsonschema.

    The code ``fastjsonschema`` generates for it (30 ms to generate and compile, at every
    kernel's first tool) is kept compiled in the disk cache (:mod:`nbagent.core.diskcache`),
    keyed by fastjsonschema's version, the meta-schema's text and this module's source.
    """
    import fastjsonschema

    spec = importlib.util.find_spec("jsonschema_specifications")
    assert spec is not None and spec.submodule_search_locations, "jsonschema is installed"
    folder = Path(next(iter(spec.submodule_search_locations)))
    text = (folder / "schemas" / "draft7" / "metaschema.json").read_text()
    name, code = cached(
        "schema-checks",
        ("draft7 meta-schema", fastjsonschema.VERSION, text, Path(__file__).read_text()),
        lambda: _generated_check(text),
        lambda found: (
            isinstance(found, tuple)
            and len(found) == 2
            and isinstance(found[0], str)
            and isinstance(found[1], types.CodeType)
        ),
    )
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - fastjsonschema's code for the meta-schema
    return namespace[name]  # type: ignore[no-any-return]


def _generated_check(text: str) -> tuple[str, types.CodeType]:
    """The name of the function fastjsonschema generates for a schema, and its compiled code."""
    import fastjsonschema

    # The generated code may use Decimal without importing it (fastjsonschema 2.22's draft-04
    # generator replaces its list of imports when a schema has a pattern).
    code = "from decimal import Decimal\n" + fastjsonschema.compile_to_code(
        json.loads(text), use_default=False
    )
    root = re.search(r"^def (\w+)\(", code, re.MULTILINE)
    assert root is not None, "fastjsonschema's code defines the check first"
    return root.group(1), compile(code, "<fastjsonschema draft-07 meta-schema>", "exec")


ONE_SCHEMA = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
)
"""Keywords whose value is one subschema."""

SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
"""Keywords whose value may be a list of subschemas (``items`` in drafts before 2020-12)."""

SCHEMA_MAPS = (
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "properties",
)
"""Keywords whose value maps names to subschemas."""


def subschemas(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Walk a schema's subschemas, depth first, the schema itself first.

    Only schema positions are visited: a property called ``definitions`` or ``id`` is a
    name, not a keyword. A node's children are read after it is yielded, so a caller may
    rewrite a node's keywords before the walk goes into them.

    Args:
        node: A schema (anything else yields nothing).
        path: The node's path, ``/``-separated (empty for the root).

    Yields:
        ``(path, schema)`` pairs.
    """
    if not isinstance(node, dict):
        return
    yield path, node
    for key, value in list(node.items()):
        where = f"{path}/{key}" if path else key
        if key in ONE_SCHEMA and isinstance(value, dict):
            yield from subschemas(value, where)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for index, item in enumerate(value):
                yield from subschemas(item, f"{where}/{index}")
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            for name, item in value.items():
                yield from subschemas(item, f"{where}/{name}")


def schema_error(schema: dict[str, Any]) -> str | None:
    """Check that a schema is valid JSON Schema draft 2020-12, the dialect the API reads.

    The compiled draft-07 check runs first, with a look for the one common form draft 07
    allows and 2020-12 does not (``items`` as a list); only a schema found wrong there is
    checked against draft 2020-12 (:func:`schema_fault`), which decides and names the fault.

    Args:
        schema: The schema.

    Returns:
        ``None`` when valid, else where and what is wrong, e.g. ``at properties/x: ...``.
    """
    import fastjsonschema

    try:
        _quick_meta_check()(schema)
        if not any(isinstance(node.get("items"), list) for _, node in subschemas(schema)):
            return None
    except fastjsonschema.JsonSchemaException:
        pass
    fault = schema_fault(schema)
    if fault is None:
        return None
    path, message = fault
    return f"at {'/'.join(str(part) for part in path) or '(root)'}: {message}"


def schema_fault(schema: Any) -> tuple[list[str | int], str] | None:
    """Find the fault that makes a schema invalid draft 2020-12 (imports ``jsonschema``).

    Args:
        schema: The schema.

    Returns:
        ``None`` when valid, else the path of the faulty part inside the schema and what is
        wrong with it.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    error = best_match(meta.iter_errors(schema))
    if error is None:
        return None
    return list(error.absolute_path), error.message


class InputChecker:
    """Checks instances against one schema: compiled once, full report only on failure.

    Args:
        schema: A valid schema.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        import fastjsonschema

        self.schema = schema
        try:
            self._quick: Callable[[Any], Any] | None = fastjsonschema.compile(
                schema, use_default=False
            )
        except fastjsonschema.JsonSchemaDefinitionException:
            self._quick = None

    def errors(self, instance: Any) -> list[str]:
        """List what is wrong with an instance, one line per error, naming the field.

        Args:
            instance: The value to check.

        Returns:
            ``- `field`: message`` lines (at most :data:`MAX_REPORTED_ERRORS` and a count of
            the rest); empty when the instance is valid.
        """
        import fastjsonschema

        if self._quick is not None:
            try:
                self._quick(instance)
                return []
            except fastjsonschema.JsonSchemaValueException:
                pass
        from jsonschema.validators import validator_for

        check = validator_for(self.schema)(self.schema)
        found = sorted(check.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        lines = [f"- {_field_of(error)}: {error.message}" for error in found[:MAX_REPORTED_ERRORS]]
        if len(found) > MAX_REPORTED_ERRORS:
            lines.append(f"- and {len(found) - MAX_REPORTED_ERRORS} more")
        return lines


def _field_of(error: Any) -> str:
    """Name the field a validation error is about (for ``required``, the missing one)."""
    path = [str(part) for part in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        path += missing[:1]
    return "`" + ".".join(path) + "`" if path else "input"
