"""Bash: output, exit codes, the working folder, timeouts and interrupts that kill the group."""

from __future__ import annotations

import _thread
import os
import threading
import time
from pathlib import Path

import pytest

from nbagent.core.tool import Tool
from nbagent.tools import Limits, ToolContext
from nbagent.tools.shell.bash import git_guard, run_command
from tests.tools.helpers import LazyTools, call, error


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped by its parent) counts as gone.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_output_and_exit_code(root: Path, tools: dict[str, Tool]) -> None:
    result = call(tools["Bash"], command="echo out; echo err >&2; pwd")
    assert not result.is_error
    assert result.content == f"out\nerr\n{root}\n\nExit code: 0"
    assert result.metadata["exit_code"] == 0 and result.metadata["summary"] == "exit 0"


def test_a_failing_command_is_an_error_with_its_code(tools: dict[str, Tool]) -> None:
    result = call(tools["Bash"], command="echo partial; exit 3")
    assert result.is_error and result.content == "partial\n\nExit code: 3"
    assert result.metadata["summary"] == "exit 3"
    assert call(tools["Bash"], command="true").content == "(no output)\n\nExit code: 0"


def test_stdin_is_closed(tools: dict[str, Tool]) -> None:
    started = time.monotonic()
    assert call(tools["Bash"], command="cat; read x; echo $?").content == "1\n\nExit code: 0"
    assert time.monotonic() - started < 5


def test_long_output_keeps_its_start_and_end(root: Path) -> None:
    bash = LazyTools(ToolContext(root=root, limits=Limits(output_chars=20)))
    result = call(bash["Bash"], command="seq 1 1000")
    assert result.content == (
        "1\n2\n3\n4\n5\n\n[... 3,873 characters cut from the middle ...]\n\n999\n1000"
        "\n\nExit code: 0"
    )


def test_a_timeout_kills_the_whole_process_group(root: Path, tools: dict[str, Tool]) -> None:
    started = time.monotonic()
    result = call(
        tools["Bash"], command="sleep 60 & echo $! > child.pid; echo started; wait", timeout=0.5
    )
    assert time.monotonic() - started < 10
    assert result.is_error
    assert result.content == (
        "started\n\nCommand timed out after 0.5 s and was stopped (its process group was killed)."
    )
    assert result.metadata["summary"] == "timed out after 0.5 s"
    assert wait_gone(int((root / "child.pid").read_text()))


def test_an_interrupt_kills_the_group_and_propagates(root: Path) -> None:
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        run_command("sleep 60 & echo $! > child.pid; wait", str(root), 30, 1000)
    timer.cancel()
    assert wait_gone(int((root / "child.pid").read_text()))


def test_a_background_child_holding_the_output_is_not_waited_for(tools: dict[str, Tool]) -> None:
    started = time.monotonic()
    result = call(tools["Bash"], command="sleep 3 & echo bg")
    assert time.monotonic() - started < 2.5
    assert result.content == (
        "bg\n[A background process still holds the output open; it was not waited for.]\n\n"
        "Exit code: 0"
    )


def test_bad_inputs(tools: dict[str, Tool]) -> None:
    assert error(tools["Bash"], command="echo", timeout=0) == (
        "timeout must be more than 0 and at most 600 seconds."
    )
    assert error(tools["Bash"], command="echo", timeout=601) == (
        "timeout must be more than 0 and at most 600 seconds."
    )
    assert error(tools["Bash"], command="  ") == "The command is empty."
    assert "The timeout is 120 s unless given, 600 s at most." in tools["Bash"].description


def test_a_planted_bare_repository_runs_nothing_under_git_status(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil"
    for folder in ("objects", "refs"):
        (evil / folder).mkdir(parents=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text(f"[core]\n\tworktree = .\n\tfsmonitor = touch {marker}\n")
    result = run_command("git status", str(evil), 30, 10_000)
    assert not marker.exists()
    assert "safe.bareRepository" in result.content


def test_the_git_guard_keeps_the_settings_already_given() -> None:
    added = git_guard({"GIT_CONFIG_COUNT": "2"})
    assert added == {
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_2": "safe.bareRepository",
        "GIT_CONFIG_VALUE_2": "explicit",
    }
    assert git_guard({"GIT_CONFIG_COUNT": "x"})["GIT_CONFIG_COUNT"] == "1"
