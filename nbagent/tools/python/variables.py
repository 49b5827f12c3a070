"""The variable tools ListVariables and InspectVariable, over the IPython user namespace.

Neither runs code of the user's, so both are read-only and allowed in plan mode: values are
described by :mod:`nbagent.tools.python.summary`, which reads types, built-in containers and the
real classes of numpy and pandas, and shows any other object in its safe form
(``object.__repr__`` and its instance ``__dict__``) rather than calling its ``__repr__``,
properties or ``__len__``. InspectVariable takes a name with ``.attribute`` and
``[literal]`` steps, and follows them the same way. To see what an object's own code says of
it, the model runs that code with RunCode, which the permission policy governs.
"""

from __future__ import annotations

import ast
import itertools
import types
from collections import Counter
from typing import Any

from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.context import Limits, ToolContext
from nbagent.tools.output import cap_text
from nbagent.tools.python.arrays import array_view, pandas_kind, pandas_view
from nbagent.tools.python.reprs import cell_text, inert_repr, routine_text
from nbagent.tools.python.routines import class_doc, is_routine, python_function, routine_doc
from nbagent.tools.python.safe_access import (
    class_attribute,
    class_bases,
    class_dict,
    class_name,
    instance_dict,
    is_a,
    is_data_descriptor,
    is_descriptor,
    is_exactly,
    is_trusted,
    library_of,
    type_label,
)
from nbagent.tools.python.sizes import dtype_name, shape_of
from nbagent.tools.python.summary import (
    PANDAS_UNKNOWN,
    array_text,
    pandas_values_text,
    preview,
    summarize,
)
from nbagent.tools.python.timelimit import ReprTimeout, bounded

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in the user namespace."""

_LIST_PREVIEW = 60
_ITEMS = 10
_HEAD_ROWS = 5
_HEAD_COLUMNS = 20


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
        said = plural(len(variables), "variable")
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
    """Follow ``name(.attr|[literal])*`` in a namespace without running the user's code.

    Attributes come from the instance ``__dict__`` or, for functions and plain class
    attributes, the class; properties and other computed attributes are refused, except on
    objects whose class is really a trusted data library's. Indexing works on built-in
    dicts (comparing the literal with keys of built-in types only), lists and tuples and
    on the libraries' own objects.

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


_ABSENT: Any = object()
_LITERALS = (str, bytes, int, float, complex, bool, type(None), type(...))


def _attribute(value: Any, attr: str, path: str) -> Any:
    if is_trusted(value):  # the library's own class: its attributes run the library's code
        try:
            return getattr(value, attr)
        except AttributeError:
            raise ToolError(f"{path} has no attribute {attr!r}.") from None
    if is_a(value, type):
        stored = class_attribute(value, attr, _ABSENT)
        if is_exactly(stored, (staticmethod, classmethod)):
            return stored.__func__
    else:
        stored = class_attribute(type(value), attr, _ABSENT)
        own = instance_dict(value)
        if attr in own and (stored is _ABSENT or not is_data_descriptor(stored)):
            return own[attr]
    if stored is _ABSENT:
        raise ToolError(f"{path} has no attribute {attr!r}.")
    if is_exactly(stored, (types.FunctionType,)) or not is_descriptor(stored):
        return stored
    raise ToolError(
        f"{path}.{attr} is a property or other computed attribute of {type_label(value)}: "
        "reading it would run its code, so InspectVariable does not. Use RunCode to "
        "evaluate it."
    )


def _item(value: Any, key: Any, path: str) -> Any:
    if type(value) is dict:
        for stored, item in dict.items(value):
            if is_exactly(stored, _LITERALS) and stored == key:  # built-ins compared: no code
                return item
        raise ToolError(f"{path}[{key!r}] does not exist (KeyError).")
    if not is_exactly(value, (list, tuple)) and not is_trusted(value):
        raise ToolError(
            f"{path} is a {type_label(value)}; InspectVariable indexes only dicts, lists, "
            "tuples and numpy/pandas objects (other [] would run their code)."
        )
    try:
        return value[key]
    except (KeyError, IndexError, TypeError) as exc:
        raise ToolError(f"{path}[{key!r}] does not exist ({type(exc).__name__}).") from None


def describe(name: str, value: Any, limits: Limits) -> str:
    """Describe a value in a few lines to a few dozen, running none of the user's code.

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
        shallow = pandas_kind(value) in ("DataFrame", "Series")
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
    kind = pandas_kind(value)
    if kind:
        view = pandas_view(value)
        if view is None:
            return [PANDAS_UNKNOWN]
        if kind == "DataFrame":
            return _frame_details(view, seconds)
        if kind == "Series":
            head = _bounded_text(lambda: _series_head(view), seconds)
            return [f"name: {inert_repr(view.name, 80)}", f"first {_ITEMS} values:", head]
        return ["labels:", _bounded_text(lambda: pandas_values_text(view, 20), seconds)]
    if (array := array_view(value)) is not None:
        return ["values:", _bounded_text(lambda: array_text(array, threshold=200), seconds)]
    if type(value) is dict:
        keys = Counter(type_label(k) for k in itertools.islice(value, 1000))
        items = [
            f"  {inert_repr(k, 60)}: {preview(v, 100, seconds)}"
            for k, v in itertools.islice(dict.items(value), _ITEMS)
        ]
        return [f"key types: {_counts(keys)}", "items:", *items, *_more(len(value))]
    if is_exactly(value, (list, tuple, set, frozenset)):
        kinds = Counter(type_label(x) for x in itertools.islice(value, 1000))
        items = [
            f"  [{i}] {preview(x, 100, seconds)}"
            for i, x in enumerate(itertools.islice(value, _ITEMS))
        ]
        return [f"element types: {_counts(kinds)}", "items:", *items, *_more(len(value))]
    if is_routine(value) or is_a(value, type):
        return _code_details(value)
    lines = [f"value: {inert_repr(value, chars)}"]
    attributes = instance_dict(value)
    if attributes and library_of(value) != "builtins":
        lines.append("attributes:")
        lines += [
            f"  {k}: {type_label(v)} = {preview(v, 80, seconds)}"
            for k, v in itertools.islice(attributes.items(), 20)
        ]
        lines += _more(len(attributes), 20)
    return lines


def _frame_details(frame: Any, seconds: float) -> list[str]:
    """A plain DataFrame's columns with their dtypes, and its first rows."""
    names = frame.columns[:50].tolist()
    dtypes = frame.dtypes.tolist()[:50]
    columns = [f"  {cell_text(c, 60)}: {dtype_name(t)}" for c, t in zip(names, dtypes, strict=True)]
    if len(frame.columns) > 50:
        columns.append(f"  … ({len(frame.columns) - 50} more columns)")
    head = _bounded_text(lambda: _frame_head(frame), seconds)
    return ["columns:", *columns, f"first {_HEAD_ROWS} rows:", head]


def _frame_head(frame: Any) -> str:
    """The first rows and columns of a plain DataFrame, every cell formatted here."""
    head = frame.iloc[:_HEAD_ROWS, :_HEAD_COLUMNS]
    width = head.shape[1]
    rows = [["", *(cell_text(c) for c in head.columns.tolist())]]
    for r, label in enumerate(head.index.tolist()):
        rows.append([cell_text(label), *(cell_text(head.iat[r, c]) for c in range(width))])
    more = frame.shape[1] - width
    text = _layout(rows)
    return text + (f"\n(… {more} more columns)" if more > 0 else "")


def _series_head(series: Any) -> str:
    """The first values of a plain Series with their labels, formatted here."""
    head = series.iloc[:_ITEMS]
    rows = [
        [cell_text(label), cell_text(item)]
        for label, item in zip(head.index.tolist(), head.tolist(), strict=True)
    ]
    more = len(series) - len(rows)
    return _layout(rows) + (f"\n… ({more} more)" if more > 0 else "")


def _layout(rows: list[list[str]]) -> str:
    """Rows of cells as aligned text: the labels to the left, the values to the right."""
    if not rows:
        return "(empty)"
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


def _code_details(value: Any) -> list[str]:
    """Signature, docstring and origin of a function; bases and members of a class."""
    lines = []
    if is_a(value, type):
        bases = ", ".join(class_name(b) for b in class_bases(value))
        members = sorted(k for k in class_dict(value) if type(k) is str and not k.startswith("_"))
        lines += [f"bases: {bases}", f"members: {', '.join(members) or '(none)'}"]
        doc = class_doc(value)
    else:
        lines.append(f"signature: {routine_text(value)}")
        doc = routine_doc(value)
    if doc:
        lines += ["doc:", *("  " + line for line in doc.splitlines()[:12])]
    func = python_function(value)
    if func is not None:
        code = func.__code__
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
