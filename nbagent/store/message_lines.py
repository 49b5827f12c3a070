"""A message record's line parsed and checked in one pass of pydantic-core's JSON reader.

Nearly every line of a saved conversation is a message record nbagent wrote:
``{"i": 2, "message": {"role": ..., "content": [...]}}`` with every block well formed. This
module reads such lines straight from their bytes, all of a file's in one call, against one
compiled schema (the same shapes
as :mod:`nbagent.store.records`' models: the record, the message, each block of its role and
each item of a ``tool_result``'s content), so resuming costs about one JSON parse per line.
Anything else (another kind of record, a block that does not match, JSON that the standard
library reads but pydantic-core does not) is not read here:
:meth:`MessageLines.checked_message_records` answers None for it and the line goes the slow
way, which names what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from nbagent.core.tool import NAME_PATTERN

_TEXT = cs.str_schema(strict=True)
_ANY_LIST = cs.list_schema(strict=True)
_NAME = cs.str_schema(pattern=NAME_PATTERN.pattern, strict=True)
_ID = cs.str_schema(pattern=r"^[a-zA-Z0-9_-]+$", strict=True)


def _needed(schema: cs.CoreSchema) -> cs.TypedDictField:
    return cs.typed_dict_field(schema, required=True)


def _optional(schema: cs.CoreSchema) -> cs.TypedDictField:
    return cs.typed_dict_field(schema, required=False)


def _object(extra: str = "allow", **fields: cs.TypedDictField) -> cs.TypedDictSchema:
    """A JSON object with these fields (more allowed, kept as they are, unless ``extra``)."""
    return cs.typed_dict_schema(fields, extra_behavior=extra, strict=True)  # type: ignore[arg-type]


_TEXT_BLOCK = _object(
    type=_needed(_TEXT),
    text=_needed(_TEXT),
    citations=_optional(cs.nullable_schema(_ANY_LIST)),
)
_SOURCED = _object(type=_needed(_TEXT), source=_needed(_object(type=_needed(_TEXT))))
_TOOL_USE = {
    "type": _needed(_TEXT),
    "id": _needed(_ID),
    "name": _needed(_NAME),
    "input": _needed(cs.dict_schema(strict=True)),
}
_SHAPES: dict[str, cs.CoreSchema] = {
    "TextBlock": _TEXT_BLOCK,
    "SourcedBlock": _SOURCED,
    "SearchResultBlock": _object(
        type=_needed(_TEXT),
        content=_needed(cs.list_schema(_TEXT_BLOCK, strict=True)),
        source=_needed(_TEXT),
        title=_needed(_TEXT),
    ),
    "ThinkingBlock": _object(
        type=_needed(_TEXT), thinking=_needed(_TEXT), signature=_needed(_TEXT)
    ),
    "RedactedThinkingBlock": _object(type=_needed(_TEXT), data=_needed(_TEXT)),
    "ToolUseBlock": _object(**_TOOL_USE),
    "MCPToolUseBlock": _object(**_TOOL_USE, server_name=_needed(_TEXT)),
    "ServerResultBlock": _object(type=_needed(_TEXT), tool_use_id=_needed(_ID)),
    "CompactionBlock": _object(
        type=_needed(_TEXT),
        content=_optional(cs.nullable_schema(cs.str_schema(min_length=1, strict=True))),
        encrypted_content=_optional(cs.nullable_schema(_TEXT)),
        signature=_optional(cs.nullable_schema(_TEXT)),
        tool_changes=_optional(cs.nullable_schema(_ANY_LIST)),
    ),
    "ContainerUploadBlock": _object(type=_needed(_TEXT), file_id=_needed(_TEXT)),
    "ToolReferenceBlock": _object(type=_needed(_TEXT), tool_name=_needed(_NAME)),
    "Block": _object(type=_needed(_TEXT)),
}
"""The shape of each of :mod:`nbagent.store.records`' block models, by its name
(``ToolResultBlock``'s is built with the items its content may hold)."""


def _kinds(models: Mapping[str, type], shapes: dict[str, cs.CoreSchema]) -> cs.CoreSchema:
    """A block of one of these types, checked as the shape of its type's model."""
    return cs.tagged_union_schema(
        {kind: shapes[model.__name__] for kind, model in models.items()}, discriminator="type"
    )


Blocks = Mapping[str, tuple[type, tuple[str, ...]]]
"""Each block type of a message: its model in :mod:`nbagent.store.records` and the roles
whose messages hold it (:data:`nbagent.store.records.BLOCKS`)."""


def message_record_schema(blocks: Blocks, result_items: Mapping[str, type]) -> cs.CoreSchema:
    """The schema of a message record whose blocks are all well formed.

    Args:
        blocks: The block types of a message.
        result_items: Each block type of a ``tool_result``'s content, and its model
            (:data:`nbagent.store.records.RESULT_ITEMS`).

    Returns:
        The schema of ``{"i": N, "message": {"role": ..., "content": ...}}``.
    """
    items = cs.list_schema(_kinds(result_items, _SHAPES), strict=True)
    tool_result = _object(
        type=_needed(_TEXT),
        tool_use_id=_needed(_ID),
        content=_optional(cs.union_schema([_TEXT, items])),
        is_error=_optional(cs.bool_schema(strict=True)),
    )
    shapes = {**_SHAPES, "ToolResultBlock": tool_result}
    messages = {}
    for role in ("user", "assistant"):
        held = {kind: model for kind, (model, roles) in blocks.items() if role in roles}
        content = cs.union_schema([_TEXT, cs.list_schema(_kinds(held, shapes), strict=True)])
        messages[role] = _object(
            "ignore", role=_needed(cs.literal_schema([role])), content=_needed(content)
        )
    message = cs.tagged_union_schema(messages, discriminator="role")
    index = cs.int_schema(ge=0, strict=True)
    return _object("forbid", i=_needed(index), message=_needed(message))


class MessageLines:
    """Reads lines that are well-formed message records in one pass (see the module).

    Args:
        blocks: As :func:`message_record_schema` takes them.
        result_items: As :func:`message_record_schema` takes them.
    """

    def __init__(self, blocks: Blocks, result_items: Mapping[str, type]) -> None:
        record = message_record_schema(blocks, result_items)
        self._one = SchemaValidator(record)
        self._many = SchemaValidator(
            cs.list_schema(cs.with_default_schema(record, default=None, on_error="default"))
        )

    def checked_message_records(
        self, bodies: Sequence[bytes | None]
    ) -> list[dict[str, Any] | None]:
        """Lines as message records whose every block is well formed, in one call.

        Args:
            bodies: The lines' bytes (no newline, no MAC field), each known to be neither
                too long nor too deep; None for one that is (its answer is None).

        Returns:
            For each line, the record (new objects, fields in the line's order), or None when
            it is not such a record or not JSON that pydantic-core reads.
        """
        joined = b"[" + b",".join(b"null" if body is None else body for body in bodies) + b"]"
        try:
            return self._many.validate_json(joined)
        except ValidationError:  # a line pydantic-core cannot parse: each on its own
            return [None if body is None else self._checked(body) for body in bodies]

    def _checked(self, body: bytes) -> dict[str, Any] | None:
        try:
            return self._one.validate_json(body)
        except ValidationError:
            return None
