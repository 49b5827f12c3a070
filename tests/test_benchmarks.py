"""Smoke tests of the benchmark scripts: each runs with ``--quick`` and prints its table."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.components import needs

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("NBAGENT_BENCHMARK_DATA") or REPO.parent / "shared" / "benchmarks")

pytestmark = needs(
    (DATA / "livemcpbench" / "tools.json").is_file(),
    f"the benchmark data (LiveMCPBench, github-mcp-server definitions) in {DATA}",
    "set NBAGENT_BENCHMARK_DATA to its folder; CI has it beside the clone",
)


@pytest.mark.parametrize(
    ("script", "header"),
    [
        ("search_latency.py", "| deferred tools | build Tools (ms) |"),
        ("token_cost.py", "| setup | tools | MCP tools | deferred tools |"),
        ("retrieval_quality.py", "| retriever | queries | failed queries |"),
        ("agent_loop.py", "| deferred definitions in the cached prefix |"),
        ("keyword_quality.py", "| ranker | test Recall@1"),
        ("preload_savings.py", "| ranker | round trips saved |"),
        ("execution_record.py", "| case | names in user_ns |"),
        ("long_session.py", "| outputs | input tokens per turn (mean) |"),
        pytest.param("load_time.py", "| statement | kernels |", marks=pytest.mark.slow),
        pytest.param("display_throughput.py", "| tool calls | events |", marks=pytest.mark.slow),
        pytest.param("live_document.py", "| notebook | first call |", marks=pytest.mark.slow),
        pytest.param("notebook_run.py", "| cell | run directly |", marks=pytest.mark.slow),
        pytest.param("turn_cost.py", "| history (turns) |", marks=pytest.mark.slow),
    ],
)
def test_quick_run_prints_a_table(script: str, header: str) -> None:
    """The script exits 0 and prints its run line and a Markdown table with a header row."""
    completed = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert any(
        line.startswith("Command: `python benchmarks/") and "nproc" in line for line in lines
    )
    header_at = next(i for i, line in enumerate(lines) if line.startswith(header))
    assert re.fullmatch(r"\|( -{3}:? \|)+", lines[header_at + 1])
    assert lines[header_at + 2].startswith("| ")


@pytest.mark.slow
def test_kernel_responsiveness_quick_run_prints_a_table() -> None:
    """The responsiveness benchmark (two real kernels, MCP servers starting) prints its table."""
    test_quick_run_prints_a_table("kernel_responsiveness.py", "| phase | cells |")
