"""RunCode in a real IPython shell's namespace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from nbagent.core.tool import Tool
from nbagent.tools import Limits, ToolContext
from nbagent.tools.python.runcode import execute
from tests.tools.helpers import LazyTools, call, error


@pytest.fixture
def run(root: Path, shell: Any) -> Tool:
    return LazyTools(ToolContext(root=root, shell=shell))["RunCode"]


def test_output_result_and_namespace(run: Tool, shell: Any) -> None:
    result = call(
        run,
        code="import sys\nrc_total = sum(range(5))\nprint('hi')\n"
        "print('warn', file=sys.stderr)\nrc_total * 2",
    )
    assert not result.is_error
    assert result.content == "stdout:\nhi\n\nstderr:\nwarn\n\nresult: 20"
    assert result.metadata["summary"] == "printed 2 lines, returned int"
    assert shell.user_ns["rc_total"] == 10
    assert call(run, code="rc_total + 1").content == "result: 11"
    quiet = call(run, code="rc_x = 1")
    assert quiet.content == "(The code ran without output or result.)"
    assert quiet.metadata["summary"] == "no output"
    said = call(run, code="print('a', end='')\nprint('b\\nc', end='')").metadata["summary"]
    assert said == "printed 2 lines"


def test_errors_come_back_with_the_traceback(run: Tool) -> None:
    result = call(run, code="print('before')\ndef f():\n    return 1 / 0\nf()")
    assert result.is_error
    assert re.sub(r"<nbagent-run-\d+>", "<nbagent-run-N>", result.content) == (
        "stdout:\nbefore\n\nerror:\nTraceback (most recent call last):\n"
        '  File "<nbagent-run-N>", line 4, in <module>\n    f()\n'
        '  File "<nbagent-run-N>", line 3, in f\n    return 1 / 0\n           ~~^~~\n'
        "ZeroDivisionError: division by zero"
    )
    assert result.metadata["summary"] == "raised ZeroDivisionError, printed 1 line"
    result = call(run, code="x = (")
    assert result.is_error and result.content.startswith('error:\n  File "<nbagent-run-')
    assert result.content.endswith("SyntaxError: '(' was never closed")
    assert result.metadata["summary"] == "raised SyntaxError"


def test_ipython_syntax_works(run: Tool, shell: Any) -> None:
    result = call(run, code="rc_where = %pwd\nrc_where")
    assert not result.is_error and result.content.startswith("result: '")


def test_output_is_capped(root: Path, shell: Any) -> None:
    result = execute(shell, "print('x' * 1000)", Limits(output_chars=20))
    assert result.content == (
        "stdout:\nxxxxxxxxxx\n[... 981 characters cut from the middle ...]\nxxxxxxxxx"
    )


def test_it_asks_permission_and_needs_a_kernel(run: Tool, tools: dict[str, Tool]) -> None:
    assert run.check_permission is not None
    decision = run.check_permission({"code": "delete_everything()"})
    assert decision.behavior == "ask" and decision.rule == "RunCode asks by default"
    assert decision.message == "```python\ndelete_everything()\n```"
    assert decision.request == "run this code in the kernel"
    assert run.should_defer and not run.read_only and not run.concurrency_safe
    assert error(tools["RunCode"], code="1") == (
        "RunCode needs an IPython kernel, and none is running here."
    )


def test_displayed_images_are_counted_in_the_summary(run: Tool) -> None:
    code = (
        "import io\nfrom PIL import Image as _Pil\nfrom IPython.display import Image, display\n"
        "_buffer = io.BytesIO()\n_Pil.new('RGB', (8, 8)).save(_buffer, 'PNG')\n"
        "display(Image(data=_buffer.getvalue()))\n'done'"
    )
    result = call(run, code=code)
    assert [block["type"] for block in result.content] == ["text", "image"]
    # The terminal shell's display publisher also prints the image's text/plain to stdout.
    assert result.metadata["summary"] == "printed 1 line, returned str, 1 image"
