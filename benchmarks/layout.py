"""The package's shape: modules per folder, the longest modules, import cycles between its
top-level parts, and the layers contract.

A top-level part is a folder of ``nbagent`` (``core``, ``loop``, ...) or a module at its
root; imports inside functions and under ``TYPE_CHECKING`` count. Targets: at most 8 modules
at the root, none over 800 lines, no cycle between parts, the contracts of
``[tool.importlinter]`` in pyproject.toml kept.

Run: ``python benchmarks/layout.py`` (tests/test_layout.py checks the same figures).
"""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nbagent"


def part_of(module: str) -> str:
    """The top-level part a module belongs to: ``nbagent.loop.agent`` -> ``loop``."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "(root)"


def part_graph() -> dict[str, set[str]]:
    """Which top-level parts each part imports (its own left out)."""
    import grimp

    graph = grimp.build_graph("nbagent")
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if part_of(module) != part_of(imported):
                edges[part_of(module)].add(part_of(imported))
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one part (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(set(edges) | {n for targets in edges.values() for n in targets}):
        if node not in index:
            visit(node)
    return found


def module_lines() -> dict[str, int]:
    """Lines of each module of the package, by path from the package's parent."""
    return {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def modules_per_folder(lines: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Modules and lines in each folder (subfolders apart)."""
    folders: dict[str, tuple[int, int]] = {}
    for path, count in lines.items():
        folder = str(Path(path).parent)
        modules, total = folders.get(folder, (0, 0))
        folders[folder] = (modules + 1, total + count)
    return folders


def contracts() -> tuple[bool, str]:
    """Whether import-linter keeps every contract, and its summary line."""
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    summary = next(
        (line for line in done.stdout.splitlines() if line.startswith("Contracts:")), done.stderr
    )
    return done.returncode == 0, summary.strip()


def main() -> None:
    """Print the tables."""
    lines = module_lines()
    print("| folder | modules | lines |\n|---|---:|---:|")
    for folder, (modules, total) in sorted(modules_per_folder(lines).items()):
        print(f"| `{folder}/` | {modules} | {total:,} |")
    longest = sorted(lines.items(), key=lambda item: -item[1])[:5]
    print("\n| longest module | lines |\n|---|---:|")
    for path, count in longest:
        print(f"| `{path}` | {count:,} |")
    found = cycles(part_graph())
    kept, summary = contracts()
    print(
        f"\nroot modules: {modules_per_folder(lines)['nbagent'][0]}; "
        f"modules over 800 lines: {sum(count > 800 for count in lines.values())}; "
        f"cycles between top-level parts: {len(found)} {found if found else ''}; "
        f"import-linter: {summary}"
    )
    if not kept:
        sys.exit(1)


if __name__ == "__main__":
    main()
