"""run_source: a cell's code run through a real InteractiveShell, its outputs in order."""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

from nbagent.tools.python.cellrun import run_source, running_count


@pytest.fixture
def shell() -> InteractiveShell:
    return InteractiveShell.instance()


def test_outputs_come_in_order_as_nbformat_outputs(shell: InteractiveShell) -> None:
    code = (
        "import sys\n"
        "print('one')\n"
        "from IPython.display import display, Markdown\n"
        "display(Markdown('**two**'))\n"
        "print('three', file=sys.stderr)\n"
        "40 + 2"
    )
    run = run_source(shell, code, execution_count=7)
    assert run.error is None and not run.timed_out
    assert [o["output_type"] for o in run.outputs] == [
        "stream",
        "display_data",
        "stream",
        "execute_result",
    ]
    assert run.outputs[0] == {"output_type": "stream", "name": "stdout", "text": "one\n"}
    assert run.outputs[1]["data"]["text/markdown"] == "**two**"
    assert run.outputs[2]["name"] == "stderr"
    assert run.outputs[3]["data"]["text/plain"] == "42"
    assert run.outputs[3]["execution_count"] == 7


def test_a_run_uses_the_users_namespace_and_magics_and_leaves_the_count(
    shell: InteractiveShell,
) -> None:
    before = shell.execution_count
    shell.user_ns["data"] = [1, 2, 3]
    run = run_source(shell, "%time total = sum(data)\ntotal;", execution_count=1)
    assert run.error is None
    assert shell.user_ns["total"] == 6
    assert not any(o["output_type"] == "execute_result" for o in run.outputs)  # ';' hides it
    assert shell.execution_count == before


def test_an_error_is_an_output_with_its_traceback_and_not_shown_elsewhere(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_source(shell, "print('before')\n1 / 0", execution_count=3)
    assert isinstance(run.error, ZeroDivisionError)
    assert [o["output_type"] for o in run.outputs] == ["stream", "error"]
    error = run.outputs[1]
    assert error["ename"] == "ZeroDivisionError" and error["evalue"] == "division by zero"
    assert any("1 / 0" in re.sub(r"\x1b\[[0-9;]*m", "", line) for line in error["traceback"])
    assert "ZeroDivisionError" not in capsys.readouterr().out


def test_a_syntax_error_is_reported_before_running(shell: InteractiveShell) -> None:
    run = run_source(shell, "def broken(:\n    pass", execution_count=1)
    assert isinstance(run.error, SyntaxError)
    assert run.outputs[-1]["ename"] == "SyntaxError"


def test_clear_output_and_display_updates_are_kept_as_the_cell_would_show_them(
    shell: InteractiveShell,
) -> None:
    code = (
        "from IPython.display import display, clear_output\n"
        "print('gone')\n"
        "clear_output()\n"
        "handle = display('first', display_id=True)\n"
        "handle.update('second')\n"
    )
    run = run_source(shell, code, execution_count=1)
    assert len(run.outputs) == 1
    assert run.outputs[0]["data"]["text/plain"] == "'second'"
    assert "_display_id" not in run.outputs[0]


def test_a_flood_of_output_is_cut_for_the_notebook(shell: InteractiveShell) -> None:
    run = run_source(
        shell, "for _ in range(600):\n    print('x' * 100_000)", 1, stream_chars=1_000_000
    )
    text = run.outputs[0]["text"]
    assert len(text) < 1_000_100 and "[output cut: more than 1,000,000 characters]" in text


def test_the_time_limit_stops_an_endless_loop(shell: InteractiveShell) -> None:
    run = run_source(shell, "while True:\n    pass", execution_count=1, timeout=0.3)
    assert run.timed_out and not run.interrupted
    assert run.outputs[-1]["ename"] == "TimeoutError"
    assert "KeyboardInterrupt" not in str(run.outputs)


def test_ctrl_c_ends_the_run_as_an_interrupt(shell: InteractiveShell) -> None:
    started = threading.Event()
    shell.user_ns["started"] = started
    timer = threading.Thread(target=lambda: started.wait(10) and _interrupt_main())
    timer.start()
    run = run_source(shell, "started.set()\nwhile True:\n    pass", execution_count=1)
    timer.join()
    assert run.interrupted and not run.timed_out
    assert run.outputs[-1]["ename"] == "KeyboardInterrupt"


def _interrupt_main() -> None:
    import _thread

    _thread.interrupt_main()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["stdout", "stderr"]), st.text(max_size=20)), max_size=8))
def test_streams_keep_every_character_in_order(writes: list[tuple[str, str]]) -> None:
    shell = InteractiveShell.instance()
    shell.user_ns["writes"] = writes
    run = run_source(
        shell, "import sys\nfor name, text in writes:\n    getattr(sys, name).write(text)", 1
    )
    assert run.error is None
    for name in ("stdout", "stderr"):
        kept = "".join(o["text"] for o in run.outputs if o.get("name") == name)
        assert kept == "".join(text for stream, text in writes if stream == name)


def test_the_kernel_may_set_a_parent_while_the_cell_runs(shell: InteractiveShell) -> None:
    """ipykernel sets the shell's parent for every message it handles, a front end's answer on a
    subshell included, while a captured cell runs: that must not fail."""
    run = run_source(shell, "get_ipython().display_pub.set_parent({})\nprint('handled')", 1)
    assert run.error is None and run.outputs[0]["text"] == "handled\n"


def test_the_time_limit_stops_a_blocking_call(shell: InteractiveShell) -> None:
    run = run_source(shell, "import time\ntime.sleep(30)", execution_count=1, timeout=0.3)
    assert run.timed_out and run.outputs[-1]["ename"] == "TimeoutError"


def test_clear_output_gives_the_cut_its_room_again(shell: InteractiveShell) -> None:
    code = (
        "from IPython.display import clear_output\n"
        "for epoch in range(30):\n"
        "    clear_output(wait=True)\n"
        "    print('epoch', epoch, 'loss', 1 / (epoch + 1))\n"
    )
    run = run_source(shell, code, execution_count=1, stream_chars=100)
    assert run.outputs == [
        {"output_type": "stream", "name": "stdout", "text": "epoch 29 loss 0.03333333333333333\n"}
    ]


def test_everything_is_put_back_after_a_run(shell: InteractiveShell) -> None:
    import sys

    before = (sys.stdout, sys.stderr, sys.displayhook, shell.display_pub, shell.display_trap.hook)
    run_source(shell, "print('x')\n1/0", execution_count=1)
    run_source(shell, "while True:\n    pass", execution_count=1, timeout=0.2)
    after = (sys.stdout, sys.stderr, sys.displayhook, shell.display_pub, shell.display_trap.hook)
    assert after == before and "_showtraceback" not in vars(shell)


def test_the_running_cells_count_survives_a_cleared_result() -> None:
    shell = InteractiveShell.instance()
    seen: list[tuple[int | None, int | None]] = []

    def look() -> None:
        own = running_count(shell)
        shell.displayhook.exec_result = None  # as a subshell's cell does when it ends
        seen.append((own, running_count(shell)))

    shell.user_ns["look"] = look
    shell.run_cell("look()", store_history=True)
    [(own, after)] = seen
    assert own == after and isinstance(own, int)
