"""nbagent in real IPython kernels (jupyter_client): interrupts, autoload."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nbagent.jupyter.autoload import set_enabled
from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute, kernel

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def test_interrupt_stops_the_agent_and_the_kernel_stays_usable(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.text("A slow answer, streamed word by word. " * 20, delay=0.4))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        interrupted: list[bool] = []

        def interrupt_at_the_first_words(content: dict) -> None:
            if not interrupted and "A slow answer" in str(content):
                # the answer has started streaming; the rest takes seconds
                interrupted.append(True)
                manager.interrupt_kernel()

        running = execute(
            client, "%%agent -o result\nTell me slowly.", on_output=interrupt_at_the_first_words
        )
        assert running.status == "ok", running.error
        assert "interrupted" in running.text and "A slow answer" in running.text
        assert fake_api.requests[0].interrupted
        check = execute(client, "print(result.stop_reason, result.messages[-1]['role'])")
        assert check.text.strip() == "interrupted assistant"
        fake_api.wait_idle()
        fake_api.enqueue(Reply.text("Still here."))
        again = execute(client, "%%agent\nAre you there?")
        assert again.status == "ok" and "Still here." in again.text


def test_enable_loads_nbagent_in_every_new_kernel(tmp_path: Path) -> None:
    env = {"IPYTHONDIR": str(tmp_path / "ipython")}
    enabled = subprocess.run(
        [sys.executable, "-m", "nbagent", "enable", "--user"],
        env={**_environ(), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Every new IPython kernel loads nbagent" in enabled.stdout
    code = "print('agent' in get_ipython().magics_manager.magics['cell'])"
    with kernel(env) as (_, client):
        assert execute(client, code).text.strip() == "True"
    subprocess.run(
        [sys.executable, "-m", "nbagent", "disable", "--user"],
        env={**_environ(), **env},
        check=True,
        capture_output=True,
    )
    with kernel(env) as (_, client):
        assert execute(client, code).text.strip() == "False"


def test_enable_writes_the_shipped_snippet_and_keeps_other_settings(tmp_path: Path) -> None:
    shipped = json.loads((REPO / "jupyter-config/ipython/ipython_kernel_config.json").read_text())
    assert json.loads(set_enabled(tmp_path / "a", True).read_text()) == shipped
    other = tmp_path / "b"
    other.mkdir()
    (other / "ipython_kernel_config.json").write_text(
        json.dumps({"IPKernelApp": {"extensions": ["other"]}, "InlineBackend": {"x": 1}})
    )
    set_enabled(other, True)
    set_enabled(other, True)
    assert json.loads((other / "ipython_kernel_config.json").read_text()) == {
        "IPKernelApp": {"extensions": ["other", "nbagent"]},
        "InlineBackend": {"x": 1},
    }
    set_enabled(other, False)
    assert json.loads((other / "ipython_kernel_config.json").read_text()) == {
        "IPKernelApp": {"extensions": ["other"]},
        "InlineBackend": {"x": 1},
    }


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_a_tool_that_fails_prints_no_traceback_into_the_cell(
    fake_api: FakeAnthropicServer,
) -> None:
    """The model is told, the card shows the error; the traceback goes to the kernel's log."""
    fake_api.enqueue(Reply.tool_use("explode", {}), Reply.text("It failed."))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    define = (
        "import nbagent\n"
        "from nbagent.core.tool import tool\n"
        "@tool(read_only=True)\n"
        "def explode() -> str:\n"
        '    """Always fails."""\n'
        "    raise RuntimeError('the tool broke')\n"
        "nbagent.registry.register(explode)"
    )
    with kernel(env) as (_, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, define).status == "ok"
        run = execute(client, "%%agent\nUse explode.")
    assert run.status == "ok", run.error
    said = fake_api.requests[1].body["messages"][-1]["content"][-1]
    assert said["is_error"] and "RuntimeError: the tool broke" in said["content"]
    streams = [o for o in run.outputs if o.get("name") == "stderr"]
    assert not any("Traceback" in o["text"] for o in streams), streams
    assert "It failed." in run.text


SHELL_TOOL = (
    "import nbagent\n"
    "from nbagent.core.tool import tool\n"
    "@tool(name='Bash')\n"
    "def bash(command: str) -> str:\n"
    '    """Runs a command (here: says it did)."""\n'
    "    return f'ran {command}'\n"
    "nbagent.registry.register(bash, replace=True)\n"
    "%config NbAgent.call_timeout = 0.5"
)


def test_a_permission_question_waits_for_the_answer_and_always_adds_the_rule(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(
        Reply.tool_use("Bash", {"command": "git status -s"}),
        Reply.tool_use("Bash", {"command": "git status"}),
        Reply.text("Clean."),
    )
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    prompts: list[str] = []

    def answer_slowly(prompt: str) -> str:
        prompts.append(prompt)
        time.sleep(1)  # longer than the call's time limit: a person reads the command
        return "a"

    with kernel(env) as (_, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, SHELL_TOOL).status == "ok"
        run = execute(client, "%%agent -o result\nstatus?", stdin=answer_slowly)
        assert run.status == "ok", run.error
        assert prompts == [
            "Allow Bash: git status -s?  y = yes, n = no, a = always (allow Bash(git status:*)) "
        ]
        check = execute(
            client, "print([(c.status, c.input['command']) for c in result.tool_calls])"
        )
        assert check.text.strip() == "[('ok', 'git status -s'), ('ok', 'git status')]"
        status = execute(client, "%agent status")
        assert "allow `Bash(git status:*)`" in status.text


def test_stop_while_a_question_waits_ends_the_cell_and_a_late_answer_changes_nothing(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Reply.tool_use("Bash", {"command": "rm -r data"}), Reply.text("next"))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, SHELL_TOOL).status == "ok"

        def press_stop(prompt: str) -> None:
            manager.interrupt_kernel()

        run = execute(client, "%%agent -o result\nclean up", stdin=press_stop)
        assert run.status == "ok", run.error
        client.input("y")  # the answer comes after the cell ended
        check = execute(client, "print([(c.status, c.name) for c in result.tool_calls])")
        assert check.text.strip() == "[('interrupted', 'Bash')]"
        assert "y" not in [o.get("text", "").strip() for o in check.outputs]
        assert "ran rm" not in run.text + check.text


def test_without_an_api_key_the_cell_says_so_at_once_and_shows_nothing_else() -> None:
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "ANTHROPIC_BASE_URL": ""}
    with kernel(env) as (_, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        run = execute(client, "%%agent\nhi")
    assert run.status == "error" and "No Anthropic API key" in run.error["evalue"]
    assert [o for o in run.outputs if "data" in o] == []  # no empty widget left behind


PAGE = "https://docs.python.org/3/whatsnew/3.14.html"


def test_a_web_search_shows_its_card_and_linked_citations_in_the_notebook_and_nbconvert(
    fake_api: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A notebook run by nbclient keeps the card and citations; nbconvert renders the links."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    from nbagent.testing import Cite, Text, WebResult

    page = WebResult(PAGE, "What's New In Python 3.14 <beta>", "3 days")
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "search the web"}),
        Reply.web_search(
            "python 3.14",
            [page],
            then=[Text("Python 3.14 is out.", citations=(Cite(PAGE, "3.14 was released"),))],
        ),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext nbagent\n%config NbAgent.server_tools = ['web_search']"
        ),
        nbformat.v4.new_code_cell("%%agent\nWhat is new in Python 3.14?"),
    ]
    NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    [output] = [o for o in notebook.cells[1].outputs if "text/markdown" in o.get("data", {})]
    markdown = output["data"]["text/markdown"]
    assert "→ 1 result: docs.python.org" in markdown
    cited = '(?=[^>]*title="3.14 was released")'  # nbconvert orders the attributes
    marker = rf'<sup><a href="{re.escape(PAGE)}"{cited}[^>]*>\[1\]</a></sup>'
    assert re.search(marker, markdown)
    assert "1 web search" in markdown
    references = fake_api.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert references[0] == {"type": "tool_reference", "tool_name": "web_search"}
    nbformat.write(notebook, tmp_path / "searched.ipynb")
    body, _ = HTMLExporter().from_notebook_node(nbformat.read(tmp_path / "searched.ipynb", 4))
    title = "What(&#x27;|')s New In Python 3.14 &lt;beta&gt;"
    card = rf'<a href="{re.escape(PAGE)}"[^>]*target="_blank"[^>]*>{title}</a>'
    assert re.search(card, body)
    assert re.search(marker, body)
    assert re.search(rf'\[1\] <a href="{re.escape(PAGE)}"[^>]*>{title}</a> · docs.python.org', body)
