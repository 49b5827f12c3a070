"""Bash's bubblewrap sandbox, with the real ``bwrap``: what a command can write, read, reach.

Without a working bubblewrap the tests that run it skip, saying how to install it; under
``CI=true`` they fail (``.ci/run`` installs Debian's ``bubblewrap``).
"""

from __future__ import annotations

import _thread
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets import TraitError

import nbagent
from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, ToolResult
from nbagent.jupyter.config import NbAgent
from nbagent.jupyter.session import Session
from nbagent.tools.shell import sandbox
from nbagent.tools.shell.bash import run_command
from nbagent.tools.shell.sandbox import Sandbox
from tests.components import require
from tests.shells import run
from tests.tools.helpers import call


@pytest.fixture
def bwrap() -> None:
    """Bubblewrap must run here (else skip, or fail under CI=true)."""
    why = sandbox.problem()
    require(why is None, f"a bubblewrap that runs here ({why})", "apt-get install bubblewrap")


@pytest.fixture
def sandboxed(bwrap: None) -> Iterator[None]:
    """Bash's sandbox on, network off, for the test; off again after."""
    sandbox.use(Sandbox(enabled=True))
    yield
    sandbox.use(Sandbox())


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder the host may write, outside the working folder and outside ``/tmp``."""
    folder = Path(tempfile.mkdtemp(prefix="nbagent-sandbox-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def bash(tools: dict[str, Tool], command: str, **more: float) -> ToolResult:
    """Run a command with the Bash tool."""
    return call(tools["Bash"], command=command, **more)


@pytest.mark.usefixtures("sandboxed")
def test_only_the_working_folder_is_written(
    root: Path, tmp_path: Path, outside: Path, tools: dict[str, Tool]
) -> None:
    result = bash(tools, f"echo made > made.txt; touch {outside}/x; touch {tmp_path}/x")
    assert (root / "made.txt").read_text() == "made\n"
    assert f"touch: cannot touch '{outside}/x': Read-only file system" in result.content
    assert not (outside / "x").exists() and not (tmp_path / "x").exists()  # /tmp is its own


@pytest.mark.usefixtures("bwrap")
def test_extra_writable_folders(root: Path, outside: Path) -> None:
    result = run_command(
        f"echo more > {outside}/x", str(root), 30, 1000, Sandbox(True, write_paths=(outside,))
    )
    assert not result.is_error, result.content
    assert (outside / "x").read_text() == "more\n"


@pytest.mark.usefixtures("sandboxed")
def test_credentials_are_hidden_even_in_the_working_folder(
    root: Path, tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(root))  # the notebooks are in the home folder
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    (root / ".netrc").write_text("machine x password NETRC")
    (root / "runtime").mkdir()
    (root / "runtime" / "kernel-1.json").write_text('{"key": "HMAC"}')
    result = bash(
        tools,
        "echo home=$HOME; cat ~/.ssh/id_rsa ~/.netrc runtime/kernel-1.json; ls -A ~/.ssh; "
        "echo stolen > ~/.ssh/id_rsa; rm -rf ~/.ssh ~/.netrc",
    )
    assert f"home={root}" in result.content
    assert "cat: /" in result.content  # id_rsa and kernel-1.json are not there
    for secret in ("PRIVATE KEY", "NETRC", "HMAC"):
        assert secret not in result.content
    assert (root / ".ssh" / "id_rsa").read_text() == "PRIVATE KEY"
    assert (root / ".netrc").read_text() == "machine x password NETRC"


@pytest.mark.usefixtures("sandboxed")
def test_the_kernels_environment_and_processes_are_not_visible(
    tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "GITHUB_TOKEN": "ghp_secret",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "DATABASE_URL": "postgres://user:db-secret@host/db",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_TIME", "C")
    result = bash(tools, f"env; cat /proc/{os.getpid()}/environ; ps -e -o pid=,comm=")
    for name, value in secrets.items():
        assert name not in result.content and value not in result.content
    assert f"PATH={os.environ['PATH']}" in result.content
    assert "LC_TIME=C" in result.content
    pids = [line.split()[0] for line in result.content.splitlines() if line[:1] == " "]
    assert pids and all(int(pid) < 10 for pid in pids)  # its own pid namespace


def test_the_network_is_off_unless_allowed(bwrap: None, root: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected || echo refused"
        off = run_command(connect, str(root), 30, 1000, Sandbox(True))
        on = run_command(connect, str(root), 30, 1000, Sandbox(True, network=True))
        host = run_command(connect, str(root), 30, 1000)
    assert "refused" in off.content and "connected" not in off.content
    assert "connected" in on.content and "connected" in host.content


@pytest.mark.usefixtures("sandboxed")
def test_protected_files_in_the_working_folder_stay_read_only(
    root: Path, tools: dict[str, Tool]
) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".mcp.json").write_text("{}")
    result = bash(
        tools,
        "echo '[alias]' >> .git/config; echo 'curl evil' > .git/hooks/pre-commit; "
        "rm -f .mcp.json; echo '{\"mcpServers\": 1}' > .mcp.json; echo ok > mine.txt",
    )
    assert ".git/config: Read-only file system" in result.content
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (root / ".mcp.json").read_text() == "{}"
    assert (root / "mine.txt").read_text() == "ok\n"


def host_processes(marker: str) -> list[int]:
    """The host's processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile
                pass
    return found


def wait_gone(marker: str, seconds: float = 5.0) -> bool:
    """Whether every process whose command line holds ``marker`` is gone within ``seconds``."""
    deadline = time.monotonic() + seconds
    while host_processes(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.usefixtures("sandboxed")
def test_a_timeout_kills_the_sandboxed_command(tools: dict[str, Tool]) -> None:
    sleep = f"sleep 600.{uuid.uuid4().int % 10**9}"
    result = bash(tools, f"{sleep} & echo started; wait", timeout=1)
    assert result.is_error and result.metadata["summary"] == "timed out after 1 s"
    assert result.content.startswith("started\n")
    assert wait_gone(sleep)


@pytest.mark.usefixtures("bwrap")
def test_an_interrupt_kills_the_sandboxed_command(root: Path) -> None:
    sleep = f"sleep 600.{uuid.uuid4().int % 10**9}"
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        run_command(f"{sleep} & wait", str(root), 30, 1000, Sandbox(True))
    timer.cancel()
    assert wait_gone(sleep)


def test_a_sandbox_that_cannot_run_refuses_the_command(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "_works", False)
    monkeypatch.setenv("PATH", str(root))  # no bwrap on it
    with pytest.raises(ToolError) as caught:
        run_command("/bin/touch ran", str(root), 30, 1000, Sandbox(True))
    assert "`bwrap` is not on the PATH: install bubblewrap (`apt-get install bubblewrap`" in str(
        caught.value
    )
    assert "`%config NbAgent.sandbox = False`" in str(caught.value)
    assert not (root / "ran").exists()


def test_the_argument_vector(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(root / "run"))
    for folder in ("home/.aws", ".git/hooks", "runtime"):
        (root / folder).mkdir(parents=True)
    (root / "home" / ".pgpass").write_text("")
    for name in set(os.environ) - {"HOME", "JUPYTER_RUNTIME_DIR", "XDG_RUNTIME_DIR"}:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", "/bin")
    argv = Sandbox(True).argv("ls", root)
    start = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    start += ["--tmpfs", "/tmp", "--bind", str(root), str(root)]
    start += ["--ro-bind", f"{root}/.git/hooks", f"{root}/.git/hooks"]
    start += ["--ro-bind", "/dev/null", f"{root}/.git/config"]  # .git exists: a placeholder
    start += ["--ro-bind", "/dev/null", f"{root}/.gitmodules", "--ro-bind", "/dev/null"]
    start += [f"{root}/.mcp.json", "--tmpfs", f"{root}/.vscode", "--remount-ro", f"{root}/.vscode"]
    for name in sandbox.PROTECTED[5:]:
        path = f"{root}/{name}"
        if name in sandbox.FOLDERS:
            start += ["--tmpfs", path, "--remount-ro", path]
        else:
            start += ["--ro-bind", "/dev/null", path]
    start += ["--tmpfs", f"{root}/home/.aws", "--ro-bind", "/dev/null", f"{root}/home/.pgpass"]
    start += ["--tmpfs", f"{root}/runtime"]
    assert argv[: len(start)] == start
    end = ["--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    end += ["--setenv", "HOME", f"{root}/home", "--setenv", "PATH", "/bin"]
    end += ["--chdir", str(root), "--", "bash", "-c", "ls"]
    assert argv[len(argv) - len(end) :] == end
    assert "--share-net" in Sandbox(True, network=True).argv("ls", root)


@pytest.mark.usefixtures("bwrap")
def test_the_settings_apply_to_bash_and_the_policy_when_changed(root: Path) -> None:
    session = Session(NbAgent(sandbox=True), ToolRegistry(), root=root)
    try:
        assert sandbox.current() == Sandbox(True)
        policy = session.agent.runner.policy
        assert policy.sandboxed  # type: ignore[union-attr]
        assert sandbox.status().startswith("on (bubblewrap): Bash writes only to the working")
        assert "network **off**" in sandbox.status()
        session.settings.sandbox_network = True
        session.settings.sandbox_write_paths = [str(root)]
        assert sandbox.current() == Sandbox(True, True, (root,))
        session.settings.sandbox = False
        assert not policy.sandboxed  # type: ignore[union-attr]
        assert sandbox.status().startswith("off")
    finally:
        session.close()
    assert sandbox.current() == Sandbox()


def test_an_unusable_sandbox_is_said_when_set(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sandbox, "_works", False)
    monkeypatch.setenv("PATH", str(root))
    session = Session(NbAgent(), ToolRegistry(), root=root)
    try:
        session.settings.sandbox = True
        said = capsys.readouterr().err
        assert "c.NbAgent.sandbox is on but cannot run here; Bash refuses every command" in said
        assert "apt-get install bubblewrap" in said
        assert not session.agent.runner.policy.sandboxed  # type: ignore[union-attr]
        assert sandbox.status().startswith("**on but not working**: Bash refuses every command.")
    finally:
        session.close()


def test_a_writable_path_must_be_an_existing_absolute_folder(root: Path) -> None:
    settings = NbAgent()
    with pytest.raises(TraitError, match="is not an existing folder"):
        settings.sandbox_write_paths = ["relative"]
    with pytest.raises(TraitError, match="is not an existing folder"):
        settings.sandbox_write_paths = [str(root / "missing")]
    settings.sandbox_write_paths = [str(root)]


@pytest.mark.usefixtures("bwrap")
def test_the_setting_reaches_the_kernels_bash_and_the_status(
    ip: InteractiveShell, root: Path, outside: Path
) -> None:
    _, status = run(ip, "%agent status")
    assert "**Bash sandbox**: off (`c.NbAgent.sandbox = True` runs Bash in bubblewrap)" in status
    ip.run_line_magic("config", "NbAgent.sandbox = True")
    try:
        _, status = run(ip, "%agent status")
        assert "**Bash sandbox**: on (bubblewrap): Bash writes only to the working" in status
        assert "Not sandboxed: RunCode and NotebookRun" in status
        written = call(nbagent.registry.get("Bash"), command=f"touch {outside}/x")
        assert "Read-only file system" in written.content
    finally:
        ip.run_line_magic("config", "NbAgent.sandbox = False")
    assert not call(nbagent.registry.get("Bash"), command=f"touch {outside}/x").is_error
