"""``%load_ext nbagent``: the start-up work after the load, and what the load leaves alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

START_UP = textwrap.dedent(
    """
    import sys, threading
    from IPython.core.interactiveshell import InteractiveShell

    # The agent loop's modules: the load cell does not import them (the agent is built after
    # it, or at its first use; the session's tools, which %tools lists, reach it when they run).
    AGENT_LOOP = (
        "nbagent.loop.agent",
        "nbagent.loop.history",
        "nbagent.loop.compaction",
        "nbagent.loop.request",
        "nbagent.loop.state",
        "nbagent.loop.context_editing",
        "nbagent.api.anthropic",
        "nbagent.catalogue.delta",
        "nbagent.store.recorder",
    )
    sys.setswitchinterval(0.004)
    shell = InteractiveShell.instance()
    shell.run_cell(
        "%load_ext nbagent\\n"
        "%tools\\n"
        "import sys\\n"
        "during = ('anthropic' in sys.modules, 'detect_secrets' in sys.modules)\\n"
        "imported = set(sys.modules)"
    )
    assert shell.user_ns["during"] == (False, False), shell.user_ns["during"]
    loop = [name for name in AGENT_LOOP if name in shell.user_ns["imported"]]
    assert loop == [], loop
    from nbagent.jupyter.session import Session
    session = Session.of(shell)
    assert {"Read", "Agent", "EnterPlanMode", "TaskCreate"} <= set(session.registry.names())
    start_up = next(t for t in threading.enumerate() if t.name == "nbagent-start-up")
    start_up.join(120)
    assert not start_up.is_alive()
    assert "anthropic" in sys.modules
    assert session.agent_built
    assert abs(sys.getswitchinterval() - 0.004) < 1e-4, sys.getswitchinterval()
    from nbagent.core import pacing
    assert pacing._pacer not in sys.meta_path
    """
)


def test_start_up_work_waits_for_the_load_cell_and_restores_the_switch_interval() -> None:
    """In a fresh process: a ``%tools`` in the load cell runs before the SDK is imported (and
    without detect-secrets), before the agent loop is imported or the agent built, and lists
    the session's tools; once the start-up thread is done, the agent is built, the SDK is
    imported, the person's switch interval is back and imports are no longer paced."""
    completed = subprocess.run(
        [sys.executable, "-c", START_UP], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr


UNLOADED_FIRST = textwrap.dedent(
    """
    import sys, threading
    from IPython.core.interactiveshell import InteractiveShell

    sys.setswitchinterval(0.004)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "nbagent")  # no cell: no post_run_cell yet
    start_up = next(t for t in threading.enumerate() if t.name == "nbagent-start-up")
    shell.run_line_magic("unload_ext", "nbagent")
    start_up.join(60)
    assert not start_up.is_alive()
    assert abs(sys.getswitchinterval() - 0.004) < 1e-4, sys.getswitchinterval()
    from nbagent.core import pacing
    assert pacing._pacer not in sys.meta_path
    from nbagent.jupyter import extension
    assert extension._load_cells == {}
    shell.run_cell("1 + 1")  # the load's hook was removed with it
    """
)


def test_unloading_before_the_load_cell_ends_ends_the_start_up_thread() -> None:
    """A load with no cell around it (from a script), then an unload: the start-up thread,
    which waited for the load cell, ends, and the person's switch interval is back."""
    completed = subprocess.run(
        [sys.executable, "-c", UNLOADED_FIRST], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr


REFUSED_SETTING = textwrap.dedent(
    """
    import sys, threading
    from IPython.core.interactiveshell import InteractiveShell
    from nbagent.catalogue.toolsearch import RANKERS
    from nbagent.core.errors import ConfigurationError

    def broken():
        raise ConfigurationError("The broken ranker cannot be built here.")

    RANKERS["broken"] = broken
    shell = InteractiveShell.instance()
    shell.run_cell("%config NbAgent.ranker = 'broken'")
    shell.run_cell("%load_ext nbagent")
    start_up = next(t for t in threading.enumerate() if t.name == "nbagent-start-up")
    start_up.join(120)
    assert not start_up.is_alive()
    from nbagent.jupyter.session import Session
    session = Session.of(shell)
    assert not session.agent_built
    assert session.mcp_manager is not None
    result = shell.run_cell("%%agent\\nhello")
    assert "The broken ranker cannot be built here." in str(result.error_in_exec), result
    """
)


def test_a_setting_the_agent_refuses_is_said_where_it_is_first_used() -> None:
    """A setting the agent cannot take does not stop the start-up work (the thread ends
    normally, nothing is printed by it); the first ``%%agent`` cell says what is wrong."""
    completed = subprocess.run(
        [sys.executable, "-c", REFUSED_SETTING], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr
