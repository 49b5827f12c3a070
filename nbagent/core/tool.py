"""The Tool model, the ``@tool`` decorator and ToolResult.

A :class:`Tool` is what the model can call: a name, a description and a JSON Schema for its
input (the three fields the Anthropic API sees), a Python handler, and the flags that the
registry and the agent loop read (deferral, read-only, concurrency, permission hook).

>>> @tool(read_only=True)
... def add(a: int, b: int = 1) -> int:
...     '''Add two numbers.
...
...     Args:
...         a: The first number.
...         b: The second number.
...     '''
...     return a + b
>>> add.call({"a": 2}).content
'3'
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import threading
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

from nbagent.core import schema, tool_inputs
from nbagent.core.access import Touches
from nbagent.core.errors import ToolDefinitionError, ToolError, ToolInputError

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The Anthropic API's rule for tool names."""

_MAX_INPUT_ERRORS = 3

RESULT_BLOCK_TYPES = frozenset({"text", "image", "document", "search_result", "tool_reference"})
"""The content block types a ``tool_result`` may carry (the API refuses any other)."""

_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})
"""Schema keywords whose values are data, not subschemas (a ``$ref`` key there is no ref)."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: the content sent back to the model, and display-only metadata."""

    content: str | list[dict[str, Any]]
    """Text, or a list of API content blocks (text, image, tool_reference, ...)."""
    is_error: bool = False
    """Whether the model is told the call failed."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Facts for the display and tests (search hits, durations); never sent to the model."""

    @classmethod
    def of(cls, value: Any) -> ToolResult:
        """Turn whatever a handler returned into a ToolResult.

        Args:
            value: A ToolResult (kept), a string (text), ``None`` (an empty-output note), a list of
                content blocks (dicts whose ``type`` is one of :data:`RESULT_BLOCK_TYPES`), or
                any JSON-serialisable value (sent as JSON text, as is a list of records that
                merely have a ``type`` key).

        Returns:
            The result to send to the model.

        Raises:
            ToolError: The value cannot be serialised to JSON.
        """
        if isinstance(value, ToolResult):
            return value
        if isinstance(value, str):
            return cls(content=value)
        if isinstance(value, bytes | bytearray):
            text = bytes(value).decode("utf-8", errors="replace")
            return cls(
                content=f"(binary output shown as UTF-8, undecodable bytes replaced)\n{text}"
            )
        if value is None:
            return cls(content="(no output)")
        if (
            isinstance(value, list)
            and value
            and all(
                isinstance(block, dict) and block.get("type") in RESULT_BLOCK_TYPES
                for block in value
            )
        ):
            return cls(content=value)
        try:
            return cls(content=json.dumps(value, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise ToolError(
                f"The tool returned a {type(value).__name__}, which cannot be sent to the "
                f"model: {exc}"
            ) from exc


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


TEXT_FIELDS = ("description", "search_hint")
"""Tool fields that hold text (None is taken as empty)."""

FLAG_FIELDS = (
    "read_only",
    "concurrency_safe",
    "should_defer",
    "always_load",
    "is_mcp",
    "main_thread",
)
"""Tool fields that are True or False."""


@dataclass(frozen=True, eq=False)
class Tool:
    """A tool the model can call, with the flags that decide how it is offered.

    The deferral rules that read these flags live in :meth:`ToolRegistry.is_deferred`.
    Tools compare by identity; build a changed copy with ``dataclasses.replace``.

    Raises:
        ToolDefinitionError: The name breaks the API's rule, a field has the wrong type
            (named in the message), or ``input_schema`` is not a JSON Schema of type
            ``object``.
    """

    name: str
    """The name the model calls; matches ``^[a-zA-Z0-9_-]{1,64}$``."""
    description: str = ""
    """What the tool does, for the model."""
    input_schema: dict[str, Any] = field(default_factory=_empty_object_schema)
    """JSON Schema (draft 2020-12) of the input; its type must be ``object``."""
    handler: Callable[..., Any] | None = None
    """Called with the input as keyword arguments; ``None`` for a definition only."""
    read_only: bool = False
    """The tool changes nothing."""
    concurrency_safe: bool = False
    """Calls may run at the same time as other concurrency-safe calls."""
    should_defer: bool = False
    """Offer the name only; the model loads the definition with ToolSearch."""
    always_load: bool = False
    """Always send the full definition (beats every other deferral rule)."""
    search_hint: str = ""
    """Extra words ToolSearch matches; not shown to the model."""
    is_mcp: bool = False
    """The tool comes from an MCP server."""
    server: str | None = None
    """The MCP server's name, for MCP tools."""
    check_permission: Callable[[Mapping[str, Any]], Any] | None = None
    """The canUseTool hook: given the input, returns a permission decision."""
    touches: Touches | None = None
    """What a call touches (paths read or written, a command line, a URL), given its input:
    the permission policy checks each (see :mod:`nbagent.core.access`). None: nothing declared."""
    main_thread: bool = False
    """Runs on the cell's thread (user code, IPython state, questions): no time limit of its
    own, Ctrl-C stops it; a sub-agent's call is posted there (:mod:`nbagent.loop.cellthread`).
    Other tools run on worker threads under the agent's per-call time limit."""

    def __post_init__(self) -> None:
        """Check the name, every field's type and the schema."""
        if not isinstance(self.name, str) or not NAME_PATTERN.match(self.name):
            raise ToolDefinitionError(
                f"Tool name {self.name!r} is invalid: names are 1 to 64 characters of "
                "letters, digits, '_' and '-'."
            )
        self._check_fields()
        input_schema = self.input_schema
        if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
            got = (
                input_schema.get("type")
                if isinstance(input_schema, dict)
                else type(input_schema).__name__
            )
            raise ToolDefinitionError(
                f'Tool {self.name!r}: input_schema must be a JSON Schema with "type": "object", '
                f"not {got!r}."
            )
        error = schema.schema_error(input_schema)
        if error:
            raise ToolDefinitionError(
                f"Tool {self.name!r}: input_schema is not valid JSON Schema {error}"
            )
        if remote := _remote_ref(input_schema):
            raise ToolDefinitionError(
                f"Tool {self.name!r}: input_schema refers to {remote!r}; only references "
                'inside the schema ("#/$defs/...") are supported, none is fetched.'
            )

    def _check_fields(self) -> None:
        """Refuse a field of the wrong type, naming it (a missing text becomes empty).

        A tool is built once and searched many times: a ``search_hint`` of None would
        otherwise break every ToolSearch, for every tool, long after the bad tool was made.
        """
        for name in TEXT_FIELDS:
            value = getattr(self, name)
            if value is None:
                object.__setattr__(self, name, "")
            elif not isinstance(value, str):
                raise ToolDefinitionError(
                    f"Tool {self.name!r}: {name} must be a string, not "
                    f"{type(value).__name__} ({value!r})."
                )
        for name in FLAG_FIELDS:
            if not isinstance(getattr(self, name), bool):
                raise ToolDefinitionError(
                    f"Tool {self.name!r}: {name} must be True or False, not "
                    f"{getattr(self, name)!r}."
                )
        for name in ("handler", "check_permission", "touches"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise ToolDefinitionError(
                    f"Tool {self.name!r}: {name} must be a function or None, not "
                    f"{getattr(self, name)!r}."
                )
        if self.server is not None and not isinstance(self.server, str):
            raise ToolDefinitionError(
                f"Tool {self.name!r}: server must be a string or None, not {self.server!r}."
            )

    def __repr__(self) -> str:
        """Show the name, the source and the flags that are set (not the whole schema)."""
        flags = [
            f
            for f in ("read_only", "concurrency_safe", "should_defer", "always_load", "is_mcp")
            if getattr(self, f)
        ]
        extra = "".join(f", {f}=True" for f in flags)
        server = f", server={self.server!r}" if self.server else ""
        handler = "" if self.handler else ", handler=None"
        return f"Tool(name={self.name!r}{server}{extra}{handler})"

    @property
    def source(self) -> str:
        """Where the tool comes from: ``mcp:<server>``, or ``python`` for code in this process."""
        return f"mcp:{self.server}" if self.is_mcp else "python"

    def definition(self) -> dict[str, Any]:
        """Return the definition the API takes: ``name``, ``description``, ``input_schema``.

        Returns:
            A new dict; callers may add ``defer_loading`` or ``cache_control`` to it.
        """
        definition: dict[str, Any] = {"name": self.name, "input_schema": self.input_schema}
        if self.description:
            definition["description"] = self.description
        return definition

    @cached_property
    def _parameters(self) -> tuple[str, ...] | None:
        """The keyword arguments the handler takes, or None if it takes any (``**kwargs``)."""
        if self.handler is None:
            return None
        try:
            parameters = inspect.signature(self.handler).parameters.values()
        except (TypeError, ValueError):  # a callable without a readable signature
            return None
        if any(p.kind is p.VAR_KEYWORD for p in parameters):
            return None
        return tuple(
            p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )

    @cached_property
    def _input_checker(self) -> schema.InputChecker:
        """The compiled check of ``input_schema``, built on first use."""
        return schema.InputChecker(self.input_schema)

    def validate_input(self, tool_input: Any) -> None:
        """Check an input against ``input_schema``.

        Args:
            tool_input: The input the model sent.

        Raises:
            ToolInputError: The input does not match; the message names each bad field.
            ToolDefinitionError: The schema cannot be checked (a pattern that is no Python
                regular expression, a reference to nowhere, a reference loop).
        """
        try:
            lines = self._input_checker.errors(tool_input)
        except Exception as exc:  # compiling or walking the schema failed, not the input
            raise ToolDefinitionError(
                f"Tool {self.name!r}: its input_schema cannot be checked "
                f"({type(exc).__name__}: {str(exc)[:200]})."
            ) from exc
        if lines:
            raise ToolInputError(f"Invalid input for tool {self.name}:\n" + "\n".join(lines))

    def call(self, tool_input: Mapping[str, Any]) -> ToolResult:
        """Validate the input, run the handler and wrap what it returns.

        Args:
            tool_input: The input the model sent (a JSON object).

        Returns:
            The handler's result as a ToolResult.

        Raises:
            ToolError: The tool has no handler, the input is invalid (against the schema, or a
                field the handler does not take), or the handler raised it.
            ToolDefinitionError: The input schema cannot be checked.
            Exception: Whatever else the handler raises; the agent loop reports it to the model.
        """
        if self.handler is None:
            raise ToolError(f"Tool {self.name} has no handler: it is a definition only.")
        self.validate_input(tool_input)
        if self._parameters is not None:
            _refuse_unexpected(self.name, tool_input, self._parameters)
        value = self.handler(**tool_input)
        if inspect.isawaitable(value):
            value = _run_awaitable(value)
        return ToolResult.of(value)


def _refuse_unexpected(name: str, tool_input: Mapping[str, Any], accepted: tuple[str, ...]) -> None:
    """Refuse input fields the handler does not take (a schema allows extra ones by default).

    Raises:
        ToolInputError: Naming each unexpected field and the fields the tool takes.
    """
    unexpected = [key for key in tool_input if key not in accepted]
    if unexpected:
        takes = ", ".join(accepted) or "no input"
        lines = [f"- `{key}`: unexpected field (the tool takes: {takes})" for key in unexpected]
        raise ToolInputError(f"Invalid input for tool {name}:\n" + "\n".join(lines))


def _remote_ref(node: Any) -> str | None:
    """Return the first ``$ref`` of a schema that points outside it (a URL, a file), if any.

    Such a reference would make the schema compiler fetch it over the network.
    """
    if isinstance(node, list):
        return next((ref for item in node if (ref := _remote_ref(item))), None)
    if not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        return ref
    return next(
        (
            found
            for key, value in node.items()
            if key not in _DATA_KEYWORDS and (found := _remote_ref(value))
        ),
        None,
    )


def _run_awaitable(awaitable: Any) -> Any:
    """Run a coroutine to completion from synchronous code, even inside a running loop.

    A Jupyter kernel runs cells inside an event loop, so ``asyncio.run`` cannot be used on
    its thread; the coroutine gets a private loop on a short-lived thread instead.
    """
    outcome: dict[str, Any] = {}

    async def _wrap() -> Any:
        return await awaitable

    def _target() -> None:
        try:
            outcome["value"] = asyncio.run(_wrap())
        except BaseException as exc:  # re-raised on the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=_target, name="nbagent-tool-coroutine", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
    should_defer: bool = False,
    always_load: bool = False,
    search_hint: str = "",
    check_permission: Callable[[Mapping[str, Any]], Any] | None = None,
    touches: Touches | None = None,
) -> Any:
    """Build a :class:`Tool` from a typed, documented function.

    Usable bare (``@tool``) or with options (``@tool(read_only=True)``). The input schema
    comes from the signature through pydantic; the description from the docstring's text
    and each parameter's description from its ``Args:`` section (Google, NumPy or reST).

    Args:
        func: The function; given when the decorator is used bare.
        name: The tool's name; the function's name by default.
        description: The description; the docstring (without its sections) by default.
        read_only: The tool changes nothing.
        concurrency_safe: May run beside other safe calls; defaults to ``read_only``.
        should_defer: Offer the name only, to be loaded through ToolSearch.
        always_load: Always send the full definition.
        search_hint: Extra words for ToolSearch.
        check_permission: The permission hook.
        touches: What a call touches, for the permission policy (see :mod:`nbagent.core.access`).

    Returns:
        The Tool, or a decorator that builds it when options were given.

    Raises:
        ToolDefinitionError: A parameter has no type annotation, is ``*args``/``**kwargs``,
            or the name is invalid.
    """

    def build(function: Callable[..., Any]) -> Tool:
        text, params = tool_inputs.docstring_parts(inspect.getdoc(function) or "")
        hints = _parameter_hints(function)
        input_schema, input_model = tool_inputs.tool_input(
            function,
            hints,
            params,
            partial(_input_model, function, hints, params),
            _schema_of,
            (__file__, tool_inputs.__file__),
        )
        accepted = tuple(hints)

        def handler(**kwargs: Any) -> Any:
            _refuse_unexpected(function.__name__, kwargs, accepted)
            model = input_model.get()
            import pydantic  # imported by the model's making

            try:
                parsed = model.model_validate(kwargs)
            except pydantic.ValidationError as exc:
                raise ToolInputError(_pydantic_message(function.__name__, exc)) from exc
            return function(**{key: getattr(parsed, key) for key in kwargs})

        return Tool(
            name=name or function.__name__,
            description=description if description is not None else text,
            input_schema=input_schema,
            handler=handler,
            read_only=read_only,
            concurrency_safe=read_only if concurrency_safe is None else concurrency_safe,
            should_defer=should_defer,
            always_load=always_load,
            search_hint=search_hint,
            check_permission=check_permission,
            touches=touches,
        )

    return build(func) if func is not None else build


def _parameter_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The resolved type of each of a function's parameters, in order.

    Raises:
        ToolDefinitionError: A parameter is ``*args``/``**kwargs`` or has no annotation.
    """
    hints = _type_hints(function)
    found: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"{function.__name__}: *args and **kwargs cannot be described as tool input."
            )
        if parameter.name not in hints:
            raise ToolDefinitionError(
                f"{function.__name__}: parameter {parameter.name!r} needs a type annotation."
            )
        found[parameter.name] = hints[parameter.name]
    return found


def _input_model(
    function: Callable[..., Any], hints: dict[str, Any], params: dict[str, str | None]
) -> Any:
    """Make a pydantic model of a function's parameters (``hints``), described by ``params``."""
    import pydantic

    fields: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (
            hints[parameter.name],
            pydantic.Field(default, description=params.get(parameter.name) or None),
        )
    return pydantic.create_model(f"{function.__name__}_input", **fields)


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """Resolve a function's annotations (string ones included)."""
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError) as exc:
        raise ToolDefinitionError(
            f"{function.__name__}: cannot resolve annotations: {exc}"
        ) from exc
    hints.pop("return", None)
    return hints


def _schema_of(model: Any) -> dict[str, Any]:
    """Return the model's JSON Schema without the ``title`` keys (tokens the model needs not)."""
    json_schema = model.model_json_schema()
    _strip_titles(json_schema)
    json_schema.setdefault("properties", {})
    return json_schema


def _strip_titles(schema: Any) -> None:
    """Remove ``title`` keywords from a schema in place, leaving properties named "title"."""
    if not isinstance(schema, dict):
        return
    schema.pop("title", None)
    for key in ("properties", "$defs", "patternProperties"):
        for sub in schema.get(key, {}).values():
            _strip_titles(sub)
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for sub in schema.get(key, []):
            _strip_titles(sub)
    for key in ("items", "additionalProperties", "not"):
        _strip_titles(schema.get(key))


def _pydantic_message(name: str, error: Any) -> str:
    """Render a pydantic validation error as the one-line-per-field text the model reads."""
    lines = [f"- `{'.'.join(map(str, item['loc']))}`: {item['msg']}" for item in error.errors()]
    return f"Invalid input for tool {name}:\n" + "\n".join(lines)
