"""The names a cell's code binds at the top level, read from its syntax tree.

The execution record compares only these names' values before and after a run (a comparison
of the whole namespace would cost time in proportion to it, every cell). What the tree cannot
show (a magic, ``from m import *``, ``exec``, ``globals()``) makes the cell *opaque*: then the
names new to the namespace are found by comparing its names.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

OPAQUE_CALLS = frozenset({"exec", "eval", "globals", "vars", "get_ipython", "setattr", "locals"})
"""Names whose use lets code bind names its tree does not show."""


@dataclass(frozen=True)
class Bindings:
    """What a cell's tree says of the names it binds."""

    names: frozenset[str]
    """Names it binds, rebinds or deletes at the top level (``global`` ones included)."""
    opaque: bool
    """Whether it may bind others the tree does not show."""


class _Collector(ast.NodeVisitor):
    """Collects top-level bindings; function and class bodies are other scopes."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.opaque = False

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.add(node.id)
        elif node.id in OPAQUE_CALLS:
            self.opaque = True

    def _scope(self, node: ast.AST) -> None:
        """A new scope: only its ``global`` statements (and opaque calls) matter here."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Global):
                self.names.update(inner.names)
            elif isinstance(inner, ast.Name) and inner.id in OPAQUE_CALLS:
                self.opaque = True

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self._scope(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.add(node.name)
        for expression in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expression)
        self._scope(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scope(node)

    def _comprehension(self, node: ast.AST) -> None:
        for inner in ast.walk(node):  # only a walrus binds out of a comprehension
            if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                self.names.add(inner.target.id)
            elif isinstance(inner, ast.Name) and inner.id in OPAQUE_CALLS:
                self.opaque = True

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.names.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.opaque = True
            else:
                self.names.add(alias.asname or alias.name)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.names.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.names.add(node.rest)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)


@functools.lru_cache(maxsize=256)
def bindings(source: str) -> Bindings:
    """The names a cell's (transformed) code binds at the top level.

    Args:
        source: Python code, as IPython runs it (magics already turned into calls).

    Returns:
        The names, and whether the code may bind others; code that does not parse binds
        nothing.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Bindings(frozenset(), False)
    collector = _Collector()
    collector.visit(tree)
    return Bindings(frozenset(collector.names), collector.opaque)
