"""Older-draft tool schemas made into draft 2020-12: each form, refs, and any input at all."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.core.schema import schema_error
from nbagent.core.schema_upgrade import UnusableSchema, object_root, prepare


def test_draft_04_exclusive_bounds_become_numbers() -> None:
    prepared = prepare(
        {
            "type": "object",
            "properties": {
                "low": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                "high": {"type": "number", "maximum": 9, "exclusiveMaximum": False},
                "lone": {"type": "number", "exclusiveMinimum": True},
            },
        }
    )
    assert prepared.schema["properties"] == {
        "low": {"type": "number", "exclusiveMinimum": 0},
        "high": {"type": "number", "maximum": 9},
        "lone": {"type": "number"},
    }
    assert prepared.changes == (
        "properties/low: exclusiveMinimum true became exclusiveMinimum 0 (draft-04 form)",
        "properties/high: exclusiveMaximum false left out (draft-04 form)",
        "properties/lone: exclusiveMinimum true left out (draft-04 form)",
    )


def test_definitions_move_to_defs_and_refs_follow_them_at_any_depth() -> None:
    prepared = prepare(
        {
            "type": "object",
            "definitions": {
                "Outer": {"definitions": {"Inner": {"type": "string"}}, "type": "object"}
            },
            "properties": {
                "a": {"$ref": "#/definitions/Outer"},
                "b": {"$ref": "#/definitions/Outer/definitions/Inner"},
                "definitions": {"type": "string"},
            },
        }
    )
    schema = prepared.schema
    assert schema["$defs"]["Outer"]["$defs"] == {"Inner": {"type": "string"}}
    assert schema["properties"] == {
        "a": {"$ref": "#/$defs/Outer"},
        "b": {"$ref": "#/$defs/Outer/$defs/Inner"},
        "definitions": {"type": "string"},
    }


def test_tuple_items_become_prefix_items() -> None:
    prepared = prepare(
        {
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}], "additionalItems": False}
            },
        }
    )
    assert prepared.schema["properties"]["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "items": False,
    }


def test_ids_dependencies_and_draft_03_required() -> None:
    prepared = prepare(
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "id": "http://example.com/s.json#",
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "required": True, "id": "#bee"},
                "c": {"type": "string", "required": False},
                "id": {"type": "string"},
            },
            "dependencies": {"a": ["b"], "c": {"required": ["a"]}},
        }
    )
    assert prepared.schema == {
        "$id": "http://example.com/s.json",
        "type": "object",
        "required": ["a", "b"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "$anchor": "bee"},
            "c": {"type": "string"},
            "id": {"type": "string"},
        },
        "dependentRequired": {"a": ["b"]},
        "dependentSchemas": {"c": {"required": ["a"]}},
    }
    assert prepared.changes[0].startswith("(root): $schema 'http://json-schema.org/draft-04")


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({}, {"type": "object"}),
        ({"properties": {"n": {}}}, {"properties": {"n": {}}, "type": "object"}),
        ({"type": ["object", "null"]}, {"type": "object"}),
    ],
)
def test_a_root_without_object_type_gets_it(schema: dict[str, Any], expected: dict) -> None:
    prepared = prepare(schema)
    assert prepared.schema == expected
    assert prepared.changes == ('(root): "type": "object" added',)


@pytest.mark.parametrize("schema", [{"type": "array"}, {"type": "string"}, [], "x", None])
def test_a_root_that_is_not_an_object_cannot_be_used(schema: Any) -> None:
    assert object_root(schema) is None
    with pytest.raises(UnusableSchema, match="its root must be an object schema"):
        prepare(schema)


def test_invalid_keywords_are_left_out_one_by_one_with_their_path() -> None:
    prepared = prepare(
        {
            "type": "object",
            "required": "name",
            "properties": {"name": {"type": "strin", "minLength": -1}, "n": 5},
        }
    )
    assert prepared.schema == {"type": "object", "properties": {"name": {}}}
    assert sorted(change.split(":")[0] for change in prepared.changes) == [
        "properties/n",
        "properties/name/minLength",
        "properties/name/type",
        "required",
    ]


def test_a_valid_2020_12_schema_is_sent_as_it_is() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "k": {"$ref": "#/$defs/K"}},
        "$defs": {"K": {"type": "integer", "exclusiveMinimum": 0}},
        "required": ["q"],
    }
    prepared = prepare(schema)
    assert prepared.schema == schema and prepared.changes == ()


KEYWORDS = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "required",
        "minimum",
        "exclusiveMinimum",
        "definitions",
        "$ref",
        "id",
        "anyOf",
        "additionalItems",
        "dependencies",
        "enum",
        "$schema",
        "pattern",
    ]
)
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["object", "string", "#/definitions/a", "#x", "http://x#", "a"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(KEYWORDS | st.sampled_from(["a", "b"]), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYWORDS, VALUES, max_size=6))
def test_any_schema_becomes_valid_2020_12_or_is_refused(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    try:
        prepared = prepare(schema)
    except UnusableSchema:
        return
    finally:
        assert schema == before
    assert prepared.schema["type"] == "object"
    assert schema_error(prepared.schema) is None
