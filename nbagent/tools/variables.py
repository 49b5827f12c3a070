"""The variable tools ListVariables and InspectVariable, over the IPython user namespace.

Neither evaluates code: InspectVariable takes a name with ``.attribute`` and ``[literal]``
steps, and follows them without running properties or ``__getitem__`` of unknown classes.
Values are described by :mod:`nbagent.tools.summary` (bounded previews, no whole prints).
"""

from __future__ import annotations

import ast
import inspect
import types
from collections import Counter
from typing import Any

from nbagent.errors import ToolError
from nbagent.tool import Tool, ToolResult, tool
from nbagent.tools.context import Limits, ToolContext
from nbagent.tools.output import cap_text, counted
from nbagent.tools.summary import (
    ReprTimeout,
    array_text,
    bounded,
    instance_dict,
    is_a,
    is_array,
    is_frame,
    is_routine,
    is_series,
    is_trusted,
    library_of,
    preview,
    safe_repr,
    shape_of,
    signature_text,
    summarize,
    type_label,
)

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in the user namespace."""

_LIST_PREVIEW = 60
_ITEMS = 10
_HEAD_ROWS = 5


def user_variables(shell: Any) -> dict[str, Any]:
    """Return the user's variables: no modules, no ``_private`` names, none of IPython's own.

    IPython's own are its fixed names and whatever it put in the namespace at start-up and
    still holds (``user_ns_hidden``, as ``%who`` uses).

    Args:
        shell: The IPython shell.
    """
    hidden = getattr(shell, "user_ns_hidden", {}) or {}
    found = {}
    for name, value in shell.user_ns.items():
        if name.startswith("_") or name in IPYTHON_NAMES or is_a(value, types.ModuleType):
            continue
        if name in hidden and hidden[name] is value:
            continue
        found[name] = value
    return dict(sorted(found.items()))


def _shell_of(context: ToolContext) -> Any:
    if context.shell is None:
        raise ToolError("No IPython kernel is running here, so there are no variables to show.")
    return context.shell


def list_variables_tool(context: ToolContext) -> Tool:
    """Build the ListVariables tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="ListVariables",
        read_only=True,
        search_hint="kernel namespace variables dataframes arrays who whos python objects",
    )
    def list_variables(name_contains: str | None = None) -> ToolResult:
        """List the variables of the notebook's Python kernel with type, shape and a preview.

        Modules, names starting with `_` and IPython's own names are left out. Use
        InspectVariable for the details of one value.

        Args:
            name_contains: Only variables whose name contains this text (case-insensitive).
        """
        variables = user_variables(_shell_of(context))
        if name_contains:
            variables = {k: v for k, v in variables.items() if name_contains.lower() in k.lower()}
        if not variables:
            return ToolResult(
                "No variables" + (f" matching {name_contains!r}." if name_contains else "."),
                metadata={"summary": "no variables"},
            )
        shown = list(variables.items())[: limits.variables]
        rows = [("name", "type", "shape", "dtype", "size", "value")]
        for name, value in shown:
            s = summarize(value, _LIST_PREVIEW, limits.repr_seconds)
            rows.append((name, s.type, s.shape, s.dtype, s.size, s.preview))
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
            + "  "
            + row[5]
            for row in rows
        ]
        more = len(variables) - len(shown)
        said = counted(len(variables), "variable")
        if more:
            lines.append(f"(… {more} more; narrow the list with name_contains.)")
            said = f"{len(shown):,} of {said}"
        return ToolResult("\n".join(line.rstrip() for line in lines), metadata={"summary": said})

    return list_variables


def inspect_variable_tool(context: ToolContext) -> Tool:
    """Build the InspectVariable tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="InspectVariable",
        read_only=True,
        should_defer=True,
        search_hint="describe variable dataframe columns dtypes head array shape value details",
    )
    def inspect_variable(name: str) -> ToolResult:
        """Describe one variable of the kernel in detail, without running any code.

        DataFrames show columns, dtypes and the first rows; arrays their shape, dtype and
        values (summarised); dicts and lists their size and first items; functions their
        signature and docstring; other objects their attributes.

        Args:
            name: A variable name, optionally followed by `.attribute` or `[key]` steps with
                literal keys, e.g. `df`, `config.paths`, `results["train"][0]`.
        """
        value = lookup(_shell_of(context).user_ns, name)
        return ToolResult(describe(name, value, limits), metadata={"summary": _kind(value)})

    return inspect_variable


def _kind(value: Any) -> str:
    """A value's type and size in words: ``pandas.DataFrame, shape 100×3``, ``dict, len 4``."""
    try:
        shape = shape_of(value)
    except Exception:  # a broken library object: its type says enough
        shape = ""
    if shape and not shape.startswith("len"):
        shape = f"shape {shape}"
    return f"{type_label(value)}, {shape}" if shape else type_label(value)


def lookup(namespace: dict[str, Any], expression: str) -> Any:
    """Follow ``name(.attr|[literal])*`` in a namespace without running unknown code.

    Attributes come from the instance ``__dict__`` or, for functions and plain class
    attributes, the class; properties and other computed attributes are refused, except on
    objects of trusted data libraries. Indexing works on built-in dicts, lists and tuples
    and on trusted library objects.

    Args:
        namespace: The user namespace.
        expression: The path to follow.

    Returns:
        The value.

    Raises:
        ToolError: The expression is not such a path, or a step does not exist or would run
            code.
    """
    try:
        node = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        node = None
    steps: list[ast.expr] = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        steps.append(node)
        node = node.value
    if not isinstance(node, ast.Name) or any(
        isinstance(s, ast.Subscript) and not isinstance(s.slice, ast.Constant) for s in steps
    ):
        raise ToolError(
            f"{expression!r} is not a variable name: InspectVariable takes a name, optionally "
            "followed by .attribute or [key] steps with literal keys; it evaluates nothing."
        )
    if node.id not in namespace:
        raise ToolError(f"No variable named {node.id!r}. ListVariables shows what exists.")
    value = namespace[node.id]
    path = node.id
    for step in reversed(steps):
        if isinstance(step, ast.Attribute):
            value = _attribute(value, step.attr, path)
            path += f".{step.attr}"
        else:
            key = step.slice.value  # type: ignore[attr-defined]
            value = _item(value, key, path)
            path += f"[{key!r}]"
    return value


def _attribute(value: Any, attr: str, path: str) -> Any:
    own = instance_dict(value)
    if attr in own:
        return own[attr]
    if is_a(value, types.ModuleType) or is_trusted(value):
        try:
            return getattr(value, attr)
        except AttributeError:
            raise ToolError(f"{path} has no attribute {attr!r}.") from None
    try:
        found = inspect.getattr_static(value, attr)
    except AttributeError:
        raise ToolError(f"{path} has no attribute {attr!r}.") from None
    if is_a(found, types.FunctionType) or not hasattr(type(found), "__get__"):
        return found
    raise ToolError(
        f"{path}.{attr} is a property or other computed attribute of {type_label(value)}: "
        "reading it would run its code, so InspectVariable does not. Use RunCode to "
        "evaluate it."
    )


def _item(value: Any, key: Any, path: str) -> Any:
    if type(value) not in (dict, list, tuple) and not is_trusted(value):
        raise ToolError(
            f"{path} is a {type_label(value)}; InspectVariable indexes only dicts, lists, "
            "tuples and numpy/pandas objects (other [] would run their code)."
        )
    try:
        return value[key]
    except (KeyError, IndexError, TypeError) as exc:
        raise ToolError(f"{path}[{key!r}] does not exist ({type(exc).__name__}).") from None


def describe(name: str, value: Any, limits: Limits) -> str:
    """Describe a value in a few lines to a few dozen.

    Args:
        name: How the value was named.
        value: The value.
        limits: ``repr_chars``, ``repr_seconds`` and ``output_chars``.

    Returns:
        The description, cut to ``output_chars``.
    """
    summary = summarize(value, limits.repr_chars, limits.repr_seconds)
    facts = []
    if summary.shape:
        facts.append(summary.shape if summary.shape.startswith("len") else f"shape {summary.shape}")
    if summary.dtype:
        facts.append(f"dtype {summary.dtype}")
    if summary.size:
        shallow = is_frame(value) or is_series(value)
        note = " (Python objects' contents not counted)" if shallow else ""
        facts.append(f"memory {summary.size}{note}")
    lines = [f"{name}: {summary.type}" + (f" ({', '.join(facts)})" if facts else "")]
    try:
        lines += _details(value, limits)
    except Exception as exc:  # a library object that fails to render: say so, keep the facts
        lines.append(f"(Could not show more: {type(exc).__name__}: {exc})")
    return cap_text("\n".join(lines), limits.output_chars, "inspect a part, e.g. name['key']")


def _details(value: Any, limits: Limits) -> list[str]:
    """The lines after the first: what is worth knowing about this kind of value."""
    seconds, chars = limits.repr_seconds, limits.repr_chars
    if is_frame(value):
        columns = [f"  {c}: {t}" for c, t in list(value.dtypes.items())[:50]]
        if len(value.columns) > 50:
            columns.append(f"  … ({len(value.columns) - 50} more columns)")
        head = _bounded_text(
            lambda: value.head(_HEAD_ROWS).to_string(max_cols=20, max_colwidth=40), seconds
        )
        return ["columns:", *columns, f"first {_HEAD_ROWS} rows:", head]
    if is_series(value):
        head = _bounded_text(lambda: value.head(_ITEMS).to_string(max_rows=_ITEMS), seconds)
        return [f"name: {value.name!r}", f"first {_ITEMS} values:", head]
    if is_array(value):
        return ["values:", _bounded_text(lambda: array_text(value, threshold=200), seconds)]
    if type(value) is dict:
        keys = Counter(type_label(k) for k in list(value)[:1000])
        items = [
            f"  {safe_repr(k, 60, seconds)}: {preview(v, 100, seconds)}"
            for k, v in list(value.items())[:_ITEMS]
        ]
        return [f"key types: {_counts(keys)}", "items:", *items, *_more(len(value))]
    if type(value) in (list, tuple, set, frozenset):
        elements = list(value)
        kinds = Counter(type_label(x) for x in elements[:1000])
        items = [f"  [{i}] {preview(x, 100, seconds)}" for i, x in enumerate(elements[:_ITEMS])]
        return [f"element types: {_counts(kinds)}", "items:", *items, *_more(len(elements))]
    if is_routine(value) or is_a(value, type):
        return _code_details(value)
    lines = [f"value: {safe_repr(value, chars, seconds)}"]
    attributes = instance_dict(value)
    if attributes and library_of(value) != "builtins":
        lines.append("attributes:")
        lines += [
            f"  {k}: {type_label(v)} = {preview(v, 80, seconds)}"
            for k, v in list(attributes.items())[:20]
        ]
        lines += _more(len(attributes), 20)
    return lines


def _code_details(value: Any) -> list[str]:
    """Signature, docstring and origin of a function; bases and members of a class."""
    lines = []
    if is_a(value, type):
        bases = ", ".join(b.__qualname__ for b in value.__bases__)
        members = sorted(k for k in vars(value) if not k.startswith("_"))
        lines += [f"bases: {bases}", f"members: {', '.join(members) or '(none)'}"]
    else:
        lines.append(f"signature: {getattr(value, '__name__', '?')}{signature_text(value)}")
    doc = inspect.getdoc(value)
    if doc:
        lines += ["doc:", *("  " + line for line in doc.splitlines()[:12])]
    code = getattr(value, "__code__", None)
    if code is not None:
        lines.append(f"defined in: {code.co_filename}, line {code.co_firstlineno}")
    return lines


def _bounded_text(render: Any, seconds: float) -> str:
    try:
        return bounded(render, seconds)
    except ReprTimeout:
        return f"(not shown: rendering took longer than {seconds:g} s)"
    except Exception as exc:
        return f"(not shown: {type(exc).__name__}: {exc})"


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{kind} ({n})" for kind, n in counter.most_common(5)) or "(empty)"


def _more(total: int, shown: int = _ITEMS) -> list[str]:
    return [f"  … ({total - shown} more)"] if total > shown else []
