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
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_REPORTED_ERRORS = 3
"""How many input errors a message lists before it says "and N more"."""


@functools.cache
def _quick_meta_check() -> Callable[[Any], Any]:
    """A compiled check against the draft-07 meta-schema, read without importing jsonschema."""
    import fastjsonschema

    spec = importlib.util.find_spec("jsonschema_specifications")
    assert spec is not None and spec.submodule_search_locations, "jsonschema is installed"
    folder = Path(next(iter(spec.submodule_search_locations)))
    meta = json.loads((folder / "schemas" / "draft7" / "metaschema.json").read_text())
    return fastjsonschema.compile(meta, use_default=False)


def schema_error(schema: dict[str, Any]) -> str | None:
    """Check that a schema is valid JSON Schema.

    The compiled draft-07 check runs first; only a schema it rejects is checked against
    draft 2020-12, which decides and names the fault. (Draft 07 is a little more permissive:
    it also allows the array form of ``items``.)

    Args:
        schema: The schema.

    Returns:
        ``None`` when valid, else where and what is wrong, e.g. ``at properties/x: ...``.
    """
    import fastjsonschema

    try:
        _quick_meta_check()(schema)
        return None
    except fastjsonschema.JsonSchemaException:
        pass
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    error = best_match(meta.iter_errors(schema))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


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
