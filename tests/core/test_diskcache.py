"""The disk cache of values derived from installed files, and the meta-schema check kept there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core import schema
from nbagent.core.diskcache import CACHE_ENV, cache_folder, cached, entry_path


@pytest.fixture(autouse=True)
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def is_pair(found: object) -> bool:
    """Whether a value read back is a pair, as the tests make."""
    return isinstance(found, tuple) and len(found) == 2


def test_a_value_is_made_once_then_read_back(folder: Path) -> None:
    made: list[int] = []

    def make() -> tuple[str, int]:
        made.append(1)
        return ("value", 42)

    assert cached("kind", ("a",), make, is_pair) == ("value", 42)
    assert cached("kind", ("a",), make, is_pair) == ("value", 42)
    assert made == [1]
    assert entry_path("kind", ("a",)).parent == folder / "kind"


def test_another_key_makes_another_value() -> None:
    assert cached("kind", ("1.0", "source"), lambda: ("one", 1), is_pair) == ("one", 1)
    assert cached("kind", ("1.1", "source"), lambda: ("two", 2), is_pair) == ("two", 2)
    assert cached("kind", ("1.0", "changed"), lambda: ("three", 3), is_pair) == ("three", 3)


@given(st.binary(max_size=64))
def test_a_damaged_entry_is_ignored_and_made_again(garbage: bytes) -> None:
    path = entry_path("kind", ("damaged",))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(garbage)
    assert cached("kind", ("damaged",), lambda: ("fresh", 1), is_pair) == ("fresh", 1)
    assert cached("kind", ("damaged",), lambda: ("never", 2), is_pair) == ("fresh", 1)


def test_an_entry_of_the_wrong_shape_is_made_again() -> None:
    cached("kind", ("shape",), lambda: "not a pair", lambda found: True)
    assert cached("kind", ("shape",), lambda: ("pair", 1), is_pair) == ("pair", 1)


def test_a_folder_that_cannot_be_written_only_means_making_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    assert cached("kind", ("x",), lambda: ("made", 1), is_pair) == ("made", 1)
    assert cached("kind", ("x",), lambda: ("again", 2), is_pair) == ("again", 2)


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "nbagent"


SCHEMAS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "properties", "items", "required", "minimum", "enum", "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


def verdict(check: Any, candidate: Any) -> bool:
    """Whether a meta-schema check accepts a candidate schema."""
    try:
        check(candidate)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


@given(SCHEMAS)
def test_the_cached_meta_check_judges_as_fastjsonschemas_own(candidate: Any) -> None:
    meta_path = schema._quick_meta_check.__wrapped__  # built afresh, from the cache or not
    first, second = meta_path(), meta_path()
    own = fastjsonschema.compile(_draft7_meta(), use_default=False)
    assert verdict(first, candidate) == verdict(own, candidate) == verdict(second, candidate)


def _draft7_meta() -> dict[str, Any]:
    """The draft-07 meta-schema, as the check reads it."""
    import importlib.util

    spec = importlib.util.find_spec("jsonschema_specifications")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    return json.loads((folder / "schemas" / "draft7" / "metaschema.json").read_text())


def test_the_meta_check_is_read_from_the_cache_the_second_time(folder: Path) -> None:
    schema._quick_meta_check.__wrapped__()
    entries = list((folder / "schema-checks").iterdir())
    assert len(entries) == 1
    stamp = entries[0].stat().st_mtime_ns
    check = schema._quick_meta_check.__wrapped__()
    assert entries[0].stat().st_mtime_ns == stamp
    with pytest.raises(fastjsonschema.JsonSchemaException):
        check({"type": 5})
