"""Reliability suite: a summary of the hypothesis examples run and the measured figures."""

from __future__ import annotations

from typing import Any

from tests.reliability.helpers import EXAMPLES, FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how many hypothesis examples each property ran, and the figures measured."""
    if EXAMPLES:
        terminalreporter.section("hypothesis examples run")
        for name, count in sorted(EXAMPLES.items()):
            terminalreporter.write_line(f"{count:>6}  {name}")
        terminalreporter.write_line(f"{sum(EXAMPLES.values()):>6}  in all")
    if FIGURES:
        terminalreporter.section("reliability figures")
        for name, value in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {value}")
