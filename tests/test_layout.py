"""The package's shape holds: few modules at the root, none over 800 lines, no import cycle
between its top-level parts, and the layers contract of pyproject.toml kept
(benchmarks/layout.py prints the same)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from layout import contracts, cycles, module_lines, modules_per_folder, part_graph  # noqa: E402


def test_the_root_holds_at_most_8_modules() -> None:
    assert modules_per_folder(module_lines())["nbagent"][0] <= 8


def test_no_module_is_over_800_lines() -> None:
    assert {path: n for path, n in module_lines().items() if n > 800} == {}


def test_no_cycle_between_the_top_level_parts() -> None:
    assert cycles(part_graph()) == []


def test_a_cycle_is_found_when_there_is_one() -> None:
    edges = {"loop": {"core"}, "core": {"render"}, "render": {"loop"}, "jupyter": {"loop"}}
    assert cycles(edges) == [["core", "loop", "render"]]


def test_the_import_contracts_are_kept() -> None:
    kept, summary = contracts()
    assert kept, summary
    assert summary == "Contracts: 2 kept, 0 broken."
