"""nbagent's log file: a handled error's traceback goes there, never into the notebook."""

from __future__ import annotations

import errno
import json
import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.core.secrets import get_logger
from nbagent.jupyter.session import Session
from nbagent.store.logfile import LOG_ENV, LogFile, last_lines, stop_writing, write_to_file
from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute, kernel
from tests.shells import error_of, run, shown

EXPLODE = (
    "import nbagent\n"
    "from nbagent.core.tool import tool\n"
    "@tool(read_only=True)\n"
    "def explode() -> str:\n"
    '    """Always fails."""\n'
    "    raise RuntimeError('the tool broke')\n"
    "nbagent.registry.register(explode)"
)
ONE_LINE = "Tool explode failed: RuntimeError: the tool broke"


@pytest.mark.slow
def test_a_tool_error_in_a_kernel_shows_one_line_and_logs_its_traceback(
    fake_api: FakeAnthropicServer, log_file: Path
) -> None:
    fake_api.enqueue(Reply.tool_use("explode", {}), Reply.text("It failed."))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (_, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, EXPLODE).status == "ok"
        run_ = execute(client, "%%agent\nUse explode.")
        shown_log = execute(client, "%agent log -n 200")
        status = execute(client, "%agent status")
    assert run_.status == "ok", run_.error
    assert not [o for o in run_.outputs if o.get("name") == "stderr"], run_.outputs
    everything = json.dumps(run_.outputs)
    assert "Traceback" not in everything and "execution.py" not in everything
    plain = [o["data"]["text/plain"] for o in run_.outputs if "✗" in str(o.get("data"))][-1]
    assert [line for line in plain.splitlines() if "explode" in line] == [f"✗ explode → {ONE_LINE}"]
    assert "It failed." in plain
    logged = log_file.read_text()
    assert "ERROR nbagent: Tool explode failed\nTraceback (most recent call last):" in logged
    assert 'nbagent/loop/execution.py", line' in logged and "RuntimeError: the tool broke" in logged
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(log_file.parent.stat().st_mode) == 0o700
    assert shown_log.status == "ok" and f"of {log_file} (" in shown_log.text
    assert "Traceback (most recent call last):" in shown_log.text
    assert "RuntimeError: the tool broke" in shown_log.text
    assert "**log**: " in status.text and str(log_file) in status.text


@pytest.fixture
def ip_log(ip: InteractiveShell, log_file: Path) -> Iterator[LogFile]:
    """The shell's session writing to the test's log file, as in a kernel."""
    handler = write_to_file(log_file)
    Session.of(ip).log_file = handler  # type: ignore[union-attr]
    yield handler
    stop_writing(handler)


def test_agent_log_shows_the_last_lines(ip: InteractiveShell, ip_log: LogFile) -> None:
    logger = get_logger("nbagent.test-log")
    for i in range(50):
        logger.warning("record %d", i)
    result, text = run(ip, "%agent log")
    assert error_of(result) is None
    assert f"The last 40 lines of {ip_log.path} (" in text
    assert _records(text) == list(range(10, 50))
    _, text = run(ip, "%agent log -n 2")
    assert "The last 2 lines" in text and _records(text) == [48, 49]


def _records(text: str) -> list[int]:
    """The numbers of the ``record N`` lines shown."""
    return [int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if " record " in line]


def test_agent_log_says_where_the_log_is_when_nothing_was_logged(
    ip: InteractiveShell, ip_log: LogFile
) -> None:
    result, text = run(ip, "%agent log")
    assert error_of(result) is None
    assert f"Nothing logged: {ip_log.path} does not exist yet." in text
    assert LOG_ENV in text and "setLevel(logging.DEBUG)" in text


def test_agent_log_outside_a_kernel_reads_the_file_kernels_write(
    ip: InteractiveShell, log_file: Path
) -> None:
    log_file.parent.mkdir(parents=True)
    log_file.write_text("")
    _, text = run(ip, "%agent log")
    assert f"Nothing logged: {log_file} is empty." in text
    log_file.write_text("a kernel's record\n")
    _, text = run(ip, "%agent log")
    assert "The last 1 line of" in text and "a kernel's record" in text
    _, status = run(ip, "%agent status")
    assert "**log**: written to a file in a kernel only" in status


@pytest.mark.parametrize(
    ("line", "message"),
    [("%agent log -n 0", "1 or more"), ("%agent status -n 5", "-n goes with %agent log only")],
)
def test_agent_log_refuses_a_bad_count(ip: InteractiveShell, line: str, message: str) -> None:
    result, _ = run(ip, line)
    assert message in str(error_of(result))


def test_a_log_that_cannot_be_written_breaks_nothing_and_status_says_so(
    ip: InteractiveShell, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    handler = write_to_file(blocker / "nbagent.log")  # its folder cannot be made
    Session.of(ip).log_file = handler  # type: ignore[union-attr]
    try:
        get_logger("nbagent.test-log").error("lost")
        get_logger("nbagent.test-log").error("lost too")
        assert handler.failure is not None and "FileExistsError" in handler.failure
        assert capfd.readouterr().err == ""
        _, status = run(ip, "%agent status")
        _, text = run(ip, "%agent log")
    finally:
        stop_writing(handler)
    assert "**log**: not written (FileExistsError" in shown(status)
    assert "records are dropped" in status and LOG_ENV in status
    assert "nbagent's log is not written any more (FileExistsError" in text


def test_a_full_disk_stops_the_log_quietly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    handler = write_to_file(tmp_path / "nbagent.log")
    logger = get_logger("nbagent.test-log")
    try:
        logger.error("written")

        class Full:
            def write(self, text: str) -> None:
                raise OSError(errno.ENOSPC, "No space left on device")

            def flush(self) -> None: ...

            def seek(self, offset: int, whence: int) -> int:
                return 0

            def tell(self) -> int:
                return 0

            def close(self) -> None: ...

        handler.stream = Full()  # type: ignore[assignment]
        logger.error("lost")
        logger.error("lost too")
    finally:
        stop_writing(handler)
    assert handler.failure == "OSError: [Errno 28] No space left on device"
    assert capfd.readouterr().err == ""
    assert last_lines(tmp_path / "nbagent.log")[-1].endswith("ERROR nbagent.test-log: written")


def test_the_log_rotates_and_redacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "s3cr3t-value-123")
    path = tmp_path / "nbagent.log"
    handler = write_to_file(path)
    handler.maxBytes = 300
    try:
        for i in range(20):
            logging.getLogger("mcp.client").warning("stream %d dropped, s3cr3t-value-123", i)
    finally:
        stop_writing(handler)
    rotated = [path, path.with_name("nbagent.log.1"), path.with_name("nbagent.log.2")]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in rotated)
    assert not path.with_name("nbagent.log.3").exists()
    text = "".join(p.read_text() for p in rotated)
    assert "s3cr3t" not in text and "[redacted SOME_SERVICE_TOKEN]" in text
    lines = last_lines(path, 100)
    assert lines[-1].endswith("stream 19 dropped, [redacted SOME_SERVICE_TOKEN]")
    assert len(lines) > len(path.read_text().splitlines())  # the rotated file fills it up


def test_taking_the_log_down_restores_the_loggers(tmp_path: Path) -> None:
    handler = write_to_file(tmp_path / "nbagent.log")
    assert not logging.getLogger("nbagent").propagate
    stop_writing(handler)
    for name in ("nbagent", "mcp"):
        assert logging.getLogger(name).propagate
        assert handler not in logging.getLogger(name).handlers
