"""The Bash tool: one shell command in the working folder, bounded in time and output.

The command runs in its own process group with stdin closed; on timeout, or when the user
interrupts the kernel, the whole group is killed (children included). Output (stdout and
stderr merged, in order) keeps its start and its end within the cap, with a note of what
was cut in between.

With the sandbox on (``c.NbAgent.sandbox``, :mod:`nbagent.tools.shell.sandbox`) the command runs in
bubblewrap; a sandbox that cannot run here refuses the command rather than run it without.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.tools.checkpoints.review import UNTRACKED_REVIEW
from nbagent.tools.context import ToolContext
from nbagent.tools.output import HeadTail
from nbagent.tools.shell.sandbox import Placeholder, Sandbox, current, problem

_GRACE = 2.0
"""Seconds a process group has to exit after SIGTERM before it gets SIGKILL."""

GIT_GUARD = (("safe.bareRepository", "explicit"),)
"""Git settings every command runs with: a folder the agent wrote that looks like a bare
repository (``HEAD``, ``config``, ``objects/``, ``refs/``) is not taken as one, so its
``core.fsmonitor`` or hooks never run under an allowed ``git status``."""

_DRAIN = 0.5
"""Seconds to wait for the output to close after the shell exits (a background child
may keep it open)."""


def bash_tool(context: ToolContext) -> Tool:
    """Build the Bash tool.

    Args:
        context: The tools' context.
    """
    limits = context.limits

    @tool(
        name="Bash",
        search_hint="shell command terminal run program execute pip git ls",
        touches=lambda i: [Touch("run", i.get("command") or "")],
    )
    def bash(command: str, timeout: float | None = None) -> ToolResult:
        """Run a shell command with bash in the working folder and return its output.

        stdout and stderr come back together, in order, with the exit code. stdin is closed
        (commands cannot prompt). A command that runs past its timeout is stopped, with
        every process it started. Long output keeps its start and end.

        Args:
            command: The command line, run by `bash -c`.
            timeout: Seconds before the command is stopped (default and maximum: see above).
        """
        seconds = limits.bash_timeout if timeout is None else timeout
        if not 0 < seconds <= limits.bash_max_timeout:
            raise ToolError(
                f"timeout must be more than 0 and at most {limits.bash_max_timeout:g} seconds."
            )
        if not command.strip():
            raise ToolError("The command is empty.")
        return run_command(
            command, str(context.root), seconds, limits.output_chars, sandbox=current()
        )

    more = (
        f" The timeout is {limits.bash_timeout:g} s unless given, "
        f"{limits.bash_max_timeout:g} s at most."
    )
    # On the main thread, so that Ctrl-C reaches it and kills the command's process group.
    return dataclasses.replace(bash, description=bash.description + more, main_thread=True)


def run_command(
    command: str, cwd: str, timeout: float, output_chars: int, sandbox: Sandbox | None = None
) -> ToolResult:
    """Run a command in its own process group and report its output and exit code.

    Args:
        command: The command line for ``bash -c``.
        cwd: The working folder.
        timeout: Seconds before the group is killed.
        output_chars: Characters of output kept (start and end).
        sandbox: Run the command in this sandbox when it is enabled; unsandboxed when None or
            off.

    Returns:
        The output and the exit code; an error result for a non-zero exit or a timeout.

    Raises:
        ToolError: The sandbox is on but cannot run here (the command was not run).
        KeyboardInterrupt: The user interrupted; the process group was killed first.
    """
    argv = ["bash", "-c", command]
    guard = git_guard(os.environ)
    placeholders: list[Placeholder] = []
    if sandbox is not None and sandbox.enabled:
        why = problem()
        if why is not None:
            raise ToolError(
                "Bash runs commands only in the sandbox (`c.NbAgent.sandbox` is on), and the "
                f"sandbox cannot run here, so the command was not run. {why}"
            )
        placeholders = sandbox.placeholders(Path(cwd))
        argv = sandbox.argv(command, Path(cwd), guard, placeholders)
    try:
        return _run(argv, cwd, guard, timeout, output_chars)
    finally:
        for placeholder in placeholders:
            placeholder.remove()


def _run(
    argv: list[str], cwd: str, guard: dict[str, str], timeout: float, output_chars: int
) -> ToolResult:
    """Run ``argv`` in its own process group (see :func:`run_command`)."""
    output = HeadTail(output_chars)
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **guard},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    reader = threading.Thread(
        target=_pump, args=(process.stdout, output), name="nbagent-bash-output", daemon=True
    )
    reader.start()
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        reader.join(_DRAIN)
        note = (
            f"Command timed out after {timeout:g} s and was stopped (its process group was killed)."
        )
        return ToolResult(
            content=f"{output.text().rstrip()}\n\n{note}".lstrip(),
            is_error=True,
            metadata={
                "seconds": time.monotonic() - started,
                "summary": f"timed out after {timeout:g} s",
                "review": UNTRACKED_REVIEW,
            },
        )
    except BaseException:
        _kill_group(process)
        raise
    reader.join(_DRAIN)
    text = output.text().rstrip()
    if reader.is_alive():
        text += "\n[A background process still holds the output open; it was not waited for.]"
    body = text if text.strip() else "(no output)"
    return ToolResult(
        content=f"{body}\n\nExit code: {code}",
        is_error=code != 0,
        metadata={
            "exit_code": code,
            "seconds": time.monotonic() - started,
            "summary": f"exit {code}",
            "review": UNTRACKED_REVIEW,
        },
    )


def git_guard(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that give git :data:`GIT_GUARD` after the settings already passed in
    ``GIT_CONFIG_COUNT`` (which stay).

    Args:
        environ: The environment the command would get.

    Returns:
        ``GIT_CONFIG_COUNT`` and the ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` to add.
    """
    try:
        first = max(int(environ.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        first = 0
    added = {"GIT_CONFIG_COUNT": str(first + len(GIT_GUARD))}
    for index, (key, value) in enumerate(GIT_GUARD, start=first):
        added[f"GIT_CONFIG_KEY_{index}"] = key
        added[f"GIT_CONFIG_VALUE_{index}"] = value
    return added


def _pump(stream: IO[bytes], output: HeadTail) -> None:
    """Copy a pipe into the buffer until it closes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with stream:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            output.write(decoder.decode(chunk))
    output.write(decoder.decode(b"", final=True))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the process's whole group: SIGTERM, a grace period, then SIGKILL for the rest."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
