"""Secrets stay out of every way out of a real cell: an InteractiveShell against
FakeAnthropicServer.

A secret of the environment (holding ``& < > $ \\ "``, which escaping changes) and tokens
known only by their shape reach the model's text, a tool's input and a tool's result; each
test looks where they could come out: the live view (every state of it), the static
transcript the cell keeps (quiet and verbose), the terminal text, the permission question,
``%agent history``, an error line, the log, the saved conversation and what the model is sent.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import nbagent
from nbagent.core.markup import Markdown
from nbagent.core.tool import Tool
from nbagent.jupyter.widgets import TranscriptView
from nbagent.testing import FakeAnthropicServer, Fault, Reply
from tests.shells import error_of
from tests.shells import shown as read_back

SECRET = "Zq9x7Wv-" + "&<b>$x\\\"y'" + "-Secret-0123456789"
"""The environment's secret (SERVICE_API_KEY); it starts with ``Zq9x7W``, found in no form
of anything else."""

START = "Zq9x7W"

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "R2d2C3po" * 4 + "BB8x"
KEY_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1Z1wYhGQpZzl8y7Vd1u3jVXbK"
PRIVATE_KEY = (
    f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\nq0xKHVkzTQfaC3sl9tRpfWlKqjYK==\n"
    "-----END RSA PRIVATE KEY-----"
)
SHAPES = (AWS_KEY_ID, GITHUB_TOKEN, KEY_BODY)
"""Tokens no variable holds, found by their shape."""

DB_PASSWORD = "s3cr3t-pw"
PAT = "ghp_" + "Pat0Pat1" * 4 + "Pat2"


def forms(secret: str) -> set[str]:
    """The forms a secret takes on its way to an output."""
    escaped = html.escape(secret)
    return {
        secret,
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        escaped,
        escaped.replace("$", "&#36;").replace("\\", "&#92;"),
        quote(secret, safe=""),
    }


def assert_clean(text: str, *others: str) -> None:
    """No form of the secret (nor its start), no shape, no other secret given is in a text."""
    for form in forms(SECRET):
        assert form not in text
    assert START not in text
    assert base64.b64encode(SECRET.encode()).decode()[:12] not in text
    for secret in (*SHAPES, *others):
        assert secret not in text


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    """The secret in the environment, with a database URL and a personal access token."""
    monkeypatch.setenv("SERVICE_API_KEY", SECRET)
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{DB_PASSWORD}@db.internal/sales")
    monkeypatch.setenv("GH_PAT", PAT)
    return SECRET


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cell shows its live view as in a kernel; every state of every widget of it, and
    of the output that shows an answer before any widget, is collected (each text is
    streamed, refresh after refresh)."""
    sent: list[str] = []
    monkeypatch.setattr("nbagent.jupyter.display.in_kernel", lambda: True)
    monkeypatch.setattr("nbagent.jupyter.display.STREAM_INTERVAL", 0.0)
    show = TranscriptView.show

    class Shown(Markdown):
        def __init__(self, text: str, plain: str | None = None) -> None:
            super().__init__(text, plain)
            sent.extend([self.text, self.plain])

    monkeypatch.setattr("nbagent.jupyter.display.Markdown", Shown)

    def collecting(view: TranscriptView, item: object, **options: bool) -> None:
        show(view, item, **options)  # type: ignore[arg-type]
        sent.append(view._meter.value)
        for child in (*view._items.children, *view._asking.children):
            sent.append(getattr(child, "value", ""))
            for output in getattr(child, "outputs", ()):
                sent.extend(output["data"].values())

    monkeypatch.setattr(TranscriptView, "show", collecting)
    return sent


@pytest.fixture
def leak(ip: InteractiveShell) -> Iterator[Tool]:
    """A tool whose result holds the secrets in many forms, and tokens known by their shape."""
    encoded = base64.b64encode(f"user:{SECRET}".encode()).decode()
    result = "\n".join(
        [
            json.dumps({"env": {"SERVICE_API_KEY": SECRET}}),
            f"Authorization: Basic {encoded}",
            f"wrapped: {SECRET[:12]}\n    {SECRET[12:]}",
            f"url: https://api.example/?key={quote(SECRET, safe='')}",
            f"db: postgres://app:{DB_PASSWORD}@replica.internal/sales",
            f"pat: {PAT}",
            f"aws: {AWS_KEY_ID} github: {GITHUB_TOKEN}",
            PRIVATE_KEY,
        ]
    )
    tool = Tool(name="Leak", read_only=True, handler=lambda: result)
    nbagent.registry.register(tool, replace=True)
    yield tool
    nbagent.registry.unregister("Leak")


def run_cell(ip: InteractiveShell, cell: str) -> tuple[object, str]:
    """Run a cell; return its result and everything it showed (every type of every output,
    printed text and errors)."""
    with capture_output() as captured:
        result = ip.run_cell(cell)
    texts = [str(value) for o in captured.outputs for value in o.data.values()]
    return result, "\n".join([*texts, captured.stdout, captured.stderr])


def saved(folder: Path) -> str:
    """Every conversation saved in a folder, as written."""
    return "\n".join(path.read_text() for path in sorted(folder.rglob("*.jsonl")))


def test_the_models_text_is_redacted_live_in_the_cell_in_history_and_when_saved(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    secret: str,
    live: list[str],
    conversations_folder: Path,
) -> None:
    fake_api.enqueue(Reply.text(f"Your key is {SECRET} (as JSON: {json.dumps(SECRET)})."))
    result, out = run_cell(ip, "%%agent --new\nWhat is my key?")
    assert error_of(result) is None
    assert "Your key is [redacted SERVICE_API_KEY] (as JSON:" in out
    assert_clean(out)
    assert any("Your key is" in state for state in live)
    for state in live:
        assert_clean(state)
    _, history = run_cell(ip, "%agent history")
    assert "Your key is [redacted SERVICE_API_KEY]" in read_back(history)
    assert_clean(history)
    assert_clean(saved(conversations_folder))


def test_the_answer_alone_and_the_terminal_are_redacted(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, secret: str
) -> None:
    text = f"Key: {SECRET}, token {GITHUB_TOKEN}."
    fake_api.enqueue(Reply.text(text), Reply.text(text))
    for cell in ("%%agent --new --quiet\nkey?", "%%agent --new\nkey?"):
        result, out = run_cell(ip, cell)
        assert error_of(result) is None and "Key: [redacted SERVICE_API_KEY]" in out
        assert_clean(out)


def test_a_tool_input_is_redacted_in_the_question_and_the_verbose_cell(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    secret: str,
    asked: list[str],
    live: list[str],
    conversations_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    command = f"curl -H 'Authorization: Bearer {SECRET}' -u x:{GITHUB_TOKEN} https://api.example"
    for _ in range(2):
        fake_api.enqueue(Reply.tool_use("Bash", {"command": command}), Reply.text("Refused."))
    result, out = run_cell(ip, "%%agent --new --verbose\ncall the API")
    assert error_of(result) is None and "refused by you" in out
    assert "Bearer [redacted SERVICE_API_KEY]" in out
    assert_clean(out)
    for state in live:
        assert_clean(state)
    assert asked and all("Bearer [redacted SERVICE_API_KEY]" in prompt for prompt in asked)
    for prompt in asked:
        assert_clean(prompt)
    ip.run_line_magic("config", "NbAgent.verbose = True")
    try:
        monkeypatch.setattr("nbagent.jupyter.display.in_kernel", lambda: False)
        result, printed = run_cell(ip, "%%agent --new\nagain, in a terminal")
    finally:
        ip.run_line_magic("config", "NbAgent.verbose = False")
    assert error_of(result) is None and "[redacted SERVICE_API_KEY]" in printed
    assert_clean(printed)
    assert_clean(saved(conversations_folder))


def test_a_tool_result_is_redacted_for_the_model_the_cell_and_the_saved_conversation(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    secret: str,
    leak: Tool,
    live: list[str],
    conversations_folder: Path,
) -> None:
    fake_api.enqueue(Reply.tool_use("Leak"), Reply.text("Done."))
    result, out = run_cell(ip, "%%agent --new --verbose\nread the configuration")
    assert error_of(result) is None
    [sent] = [
        block
        for message in fake_api.requests[-1].body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    to_model = json.dumps(sent)
    for text in (to_model, out, *live, saved(conversations_folder)):
        assert_clean(text, f":{DB_PASSWORD}@", PAT)
    assert "[redacted AWS_Access_Key]" in to_model and "[redacted GitHub_Token]" in to_model
    assert "[redacted Private_Key]" in to_model and "replica.internal/sales" in to_model
    assert "[redacted GH_PAT]" in to_model
    encoded = re.search(r"Basic (\S+)", to_model)
    assert encoded is not None and SECRET.encode() not in base64.b64decode(encoded.group(1) + "==")


def test_an_error_line_is_redacted(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, secret: str
) -> None:
    fake_api.enqueue(Fault.http(400, message=f"invalid header x-api-key: {SECRET}"))
    result, out = run_cell(ip, "%%agent --new\nhello")
    error = error_of(result)
    assert error is not None and "[redacted SERVICE_API_KEY]" in str(error)
    assert_clean(str(error))
    assert_clean(out)


def test_a_failing_tool_is_redacted_on_its_card_and_in_the_log(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    secret: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def connect() -> str:
        raise ConnectionError(f"cannot reach postgres://app:{DB_PASSWORD}@db with {SECRET}")

    nbagent.registry.register(Tool(name="Connect", read_only=True, handler=connect), replace=True)
    try:
        fake_api.enqueue(Reply.tool_use("Connect"), Reply.text("It failed."))
        with caplog.at_level(logging.DEBUG, logger="nbagent"):
            result, out = run_cell(ip, "%%agent --new --verbose\nconnect")
    finally:
        nbagent.registry.unregister("Connect")
    assert error_of(result) is None and "ConnectionError" in out
    assert_clean(out, f":{DB_PASSWORD}@")
    assert "ConnectionError" in caplog.text
    assert_clean(caplog.text, f":{DB_PASSWORD}@")


def test_the_models_question_on_stdin_is_redacted(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, secret: str, asked: list[str]
) -> None:
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:AskUserQuestion"}),
        Reply.tool_use(
            "AskUserQuestion",
            {"question": f"Is {SECRET} your key?", "options": [f"yes, {GITHUB_TOKEN}", "no"]},
        ),
        Reply.text("Noted."),
    )
    result, out = run_cell(ip, "%%agent --new\nask me")
    assert error_of(result) is None and asked
    assert "Is [redacted SERVICE_API_KEY] your key?" in asked[0]
    for text in (*asked, out):
        assert_clean(text)


def test_a_secret_streaming_in_never_shows_in_part(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, secret: str, live: list[str]
) -> None:
    """One word streams in three pieces: the live view waits for its end."""
    fake_api.enqueue(Reply.text(f"Key={SECRET}; then done."), Reply.text(f"Key:{SECRET}"))
    for cell in ("%%agent --new\nkey?", "%%agent\nagain"):
        result, out = run_cell(ip, cell)
        assert error_of(result) is None and "[redacted SERVICE_API_KEY]" in out
        assert_clean(out)
    assert live
    for state in live:
        assert_clean(state)


def test_a_question_never_hides_a_line_of_what_runs_behind_a_key_shaped_block(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    secret: str,
    asked: list[str],
) -> None:
    """A block shaped like a private key, with a command among its lines, is shown whole in
    the question; a one-line token is still redacted there."""
    block = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\nreboot\n-----END RSA PRIVATE KEY-----"
    command = f"{block}\necho {GITHUB_TOKEN}"
    fake_api.enqueue(Reply.tool_use("Bash", {"command": command}), Reply.text("Refused."))
    result, out = run_cell(ip, "%%agent --new\nrun it")
    assert error_of(result) is None and "refused by you" in out
    assert asked and all("reboot" in prompt and GITHUB_TOKEN not in prompt for prompt in asked)


def test_a_token_found_by_its_shape_is_redacted_when_saved_without_secret_variables(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    conversations_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Even with no secret in the environment, a token known by its shape is not saved."""
    for name in ("SERVICE_API_KEY", "GH_PAT", "DATABASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")  # too short to be looked for
    fake_api.enqueue(Reply.text(f"Your token is {GITHUB_TOKEN}."))
    result, _ = run_cell(ip, "%%agent --new\nwhat is my token?")
    assert error_of(result) is None
    text = saved(conversations_folder)
    assert "Your token is" in text and GITHUB_TOKEN not in text
