"""A typed function's tool input: its JSON Schema, and the pydantic model that checks a call.

``@tool`` describes a function's parameters with a pydantic model. Importing pydantic and
making the models of the built-in tools takes about a tenth of a second, which
``%load_ext nbagent`` then ``%tools`` would wait for; yet only a call needs the model. So
:func:`tool_input` makes the model at the first call, and takes the schema from the disk cache
(:mod:`nbagent.core.diskcache`) when every parameter is of a plain type (``str``, ``int``,
``float``, ``bool``, ``None``, ``Literal`` of those, and unions, lists, tuples and dicts of
them) with a plain default: then the key (the function's name, each parameter's name, type,
default and description, pydantic's version, the sources that turn a model into a schema)
says all the schema depends on. Any other function's schema is made from its model at once.
What a docstring says (the tool's description, each parameter's) is kept the same way, keyed
by the docstring and docstring-parser's source (:func:`docstring_parts`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import json
import threading
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nbagent.core.diskcache import cached

_PLAIN_TYPES = (str, int, float, bool, type(None))
"""The types whose ``repr`` says all their schema depends on."""

_PLAIN_ORIGINS = (
    typing.Union,
    types.UnionType,
    list,
    tuple,
    dict,
    set,
    frozenset,
    Sequence,
    Mapping,
)
"""The generic types whose schema depends only on their arguments'."""


class LazyModel:
    """A function's input model, made on first use (at most once, on any thread).

    Args:
        make: Makes the model.
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._model: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The model, made now if it was not yet."""
        if self._model is None:
            import nbagent.core.pydantic_whole  # noqa: F401 - one thread at a time (see there)

            with self._lock:
                if self._model is None:
                    self._model = self._make()
        return self._model


def tool_input(
    function: Callable[..., Any],
    hints: Mapping[str, Any],
    params: Mapping[str, str | None],
    make_model: Callable[[], Any],
    schema_of: Callable[[Any], dict[str, Any]],
    sources: Sequence[str],
) -> tuple[dict[str, Any], LazyModel]:
    """A function's input schema, and its model to be made at the first call.

    Args:
        function: The tool's function (its parameters already checked).
        hints: Its parameters' resolved types.
        params: Each parameter's description, from the docstring.
        make_model: Makes the pydantic model of its parameters.
        schema_of: Turns that model into the schema the tool sends.
        sources: The files whose code ``make_model`` and ``schema_of`` run (part of the key).

    Returns:
        The schema, and the model (made on first use).
    """
    model = LazyModel(make_model)
    key = _key(function, hints, params)
    if key is None:
        return schema_of(model.get()), model
    text = cached(
        "tool-schemas",
        (*key, _pydantic_version(), *(_digest(path) for path in sources)),
        lambda: json.dumps(schema_of(model.get())),
        lambda found: isinstance(found, str),
    )
    return json.loads(text), model


def docstring_parts(doc: str) -> tuple[str, dict[str, str | None]]:
    """What a docstring (Google, NumPy or reST) says: the description, and each parameter's.

    Args:
        doc: The docstring, cleaned (``inspect.getdoc``).

    Returns:
        The description (its short and long parts), and each parameter's description by name.
    """
    if not doc:
        return "", {}
    text, params = cached(
        "docstrings",
        (doc, _package_digest("docstring_parser")),
        lambda: _parsed(doc),
        lambda found: (
            isinstance(found, tuple)
            and len(found) == 2
            and isinstance(found[0], str)
            and isinstance(found[1], tuple)
        ),
    )
    return text, dict(params)


def _parsed(doc: str) -> tuple[str, tuple[tuple[str, str | None], ...]]:
    """A docstring parsed by docstring-parser: the description, the parameters'."""
    import docstring_parser

    docstring = docstring_parser.parse(doc)
    text = (" " if not docstring.blank_after_short_description else "\n\n").join(
        part for part in (docstring.short_description, docstring.long_description) if part
    )  # a first sentence that wraps goes on in long_description, after no blank line
    return text, tuple((p.arg_name, p.description) for p in docstring.params)


def _key(
    function: Callable[..., Any], hints: Mapping[str, Any], params: Mapping[str, str | None]
) -> tuple[str, ...] | None:
    """What the schema of a function with plain parameters depends on; None for any other."""
    parts = [function.__module__ or "", function.__qualname__]  # no module: made by exec
    for parameter in inspect.signature(function).parameters.values():
        hint = hints[parameter.name]
        default = parameter.default
        if not _plain(hint) or not (default is parameter.empty or _plain_value(default)):
            return None
        parts += [parameter.name, repr(hint), repr(default), params.get(parameter.name) or ""]
    return tuple(parts)


def _plain(hint: Any) -> bool:
    """Whether a type is one whose ``repr`` says all its schema depends on."""
    if hint in _PLAIN_TYPES:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return all(type(arg) in _PLAIN_TYPES for arg in args)
    return origin in _PLAIN_ORIGINS and all(arg is Ellipsis or _plain(arg) for arg in args)


def _plain_value(value: Any) -> bool:
    """Whether a default's ``repr`` says all of it."""
    if isinstance(value, tuple | list):
        return all(_plain_value(item) for item in value)
    return type(value) in _PLAIN_TYPES


@functools.cache
def _pydantic_version() -> str:
    """A digest of pydantic's version file (its version and pydantic-core's), read without
    importing it."""
    spec = importlib.util.find_spec("pydantic")
    assert spec is not None and spec.submodule_search_locations, "pydantic is installed"
    return _digest(str(Path(next(iter(spec.submodule_search_locations))) / "version.py"))


@functools.cache
def _package_digest(name: str) -> str:
    """A digest of the modules of an installed package, read without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is installed"
    folder = Path(next(iter(spec.submodule_search_locations)))
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(_digest(str(path)).encode())
    return digest.hexdigest()


@functools.cache
def _digest(path: str) -> str:
    """A digest of a file's bytes, read once per process (a key part, short to hash again)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
