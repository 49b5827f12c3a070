"""The kernel's end of the comm: what front ends say of themselves (hello, path, bye), which
one serves a request, and what nbagent says when none can.

The comm is a stand-in that records what the kernel sends; the messages are those nbagent's
JupyterLab extension sends. The same protocol over a real kernel is in
``test_kernel_front_end.py``.
"""

from __future__ import annotations

import threading

import pytest

from nbagent.frontend.channel import MINIMUM_VERSIONS, FrontEndChannel
from tests.frontend_peer import RecordingComm, hello


@pytest.fixture
def channel(monkeypatch: pytest.MonkeyPatch) -> FrontEndChannel:
    monkeypatch.setattr(
        "nbagent.frontend.comm.open_comm", lambda target, on_message: RecordingComm()
    )
    channel = FrontEndChannel(greeting_wait=0)
    channel.open()
    return channel


def test_a_hello_names_the_application_its_version_and_the_extension(
    channel: FrontEndChannel,
) -> None:
    channel._on_message(hello())
    front = channel.front_end()
    assert front is not None
    assert (front.application, front.version, front.extension) == ("JupyterLab", "4.6.6", "0.2.0")
    assert front.app == "JupyterLab 4.6.6" and front.problem is None


def test_a_hello_without_versions_is_read_from_the_app_it_names(
    channel: FrontEndChannel,
) -> None:
    channel._on_message(
        {**hello(app="Jupyter Notebook 7.4.2"), "versions": None, "version": "0.1.0"}
    )
    front = channel.front_end()
    assert front is not None
    assert (front.application, front.version, front.extension) == ("Notebook", "7.4.2", "0.1.0")


@pytest.mark.parametrize(
    ("application", "version", "subshell"),
    [("JupyterLab", "4.2.5", False), ("JupyterLab", "4.3.8", True), ("Notebook", "7.3.0", True)],
)
def test_a_front_end_older_than_the_minimum_is_not_used_and_told_what_it_needs(
    channel: FrontEndChannel, application: str, version: str, subshell: bool
) -> None:
    versions = {"app": application, "version": version, "extension": "0.2.0"}
    channel._on_message(hello(versions=versions, subshell=subshell))
    assert channel.front_end() is None
    stated = channel.stated()
    assert stated is not None and stated.problem is not None
    assert f"{application} {version} is older than nbagent supports" in stated.problem
    assert "JupyterLab 4.4 or Notebook 7.4 (or newer)" in stated.problem
    assert "install nbagent in the environment" not in stated.problem
    assert channel.why_unseen(None) == stated.problem


def test_the_minimums_are_those_of_kernel_subshells() -> None:
    assert MINIMUM_VERSIONS == {"JupyterLab": (4, 4), "Notebook": (7, 4)}


def test_a_supported_front_end_without_a_subshell_is_told_to_reload(
    channel: FrontEndChannel,
) -> None:
    channel._on_message(hello(subshell=False))
    assert channel.front_end() is None
    problem = channel.why_unseen(None)
    assert problem.startswith("JupyterLab 4.6.6 opened no kernel subshell for nbagent")
    assert "Reload the page" in problem


def test_what_a_front_end_said_outlives_the_comm_and_is_said_once_in_a_cell(
    channel: FrontEndChannel,
) -> None:
    old = {"app": "JupyterLab", "version": "4.2.5", "extension": "0.2.0"}
    channel._on_message(hello(versions=old, subshell=False))
    channel.open()  # the next %%agent cell: an old front end answers only after it
    stated = channel.stated()
    assert stated is not None and stated.version == "4.2.5"
    notices = channel.notices()
    assert len(notices) == 1 and "JupyterLab 4.4" in notices[0]
    assert channel.notices() == []  # said once per front end
    channel._on_message({"op": "bye", "client": "tab"})
    assert channel.stated() is None


def test_a_rename_moves_the_front_end_to_its_new_path(channel: FrontEndChannel) -> None:
    channel._on_message(hello(path="Untitled.ipynb"))
    channel._on_message({"op": "path", "client": "tab", "path": "sales.ipynb"})
    front, stated = channel.front_end(), channel.stated()
    assert front is not None and front.path == "sales.ipynb"
    assert stated is not None and stated.path == "sales.ipynb"
    channel.open()  # said before this comm: still known
    stated = channel.stated()
    assert stated is not None and stated.path == "sales.ipynb"


def test_a_path_from_a_front_end_that_never_said_hello_is_ignored(
    channel: FrontEndChannel,
) -> None:
    channel._on_message({"op": "path", "client": "stranger", "path": "other.ipynb"})
    assert channel.stated() is None and channel.front_end() is None


def test_the_front_end_that_runs_the_cell_serves_it(channel: FrontEndChannel) -> None:
    channel._on_message(hello(client="runs-it", path="a.ipynb"))
    channel._on_message(hello(client="other-tab", path="b.ipynb"))
    assert channel.front_end().client == "other-tab"  # type: ignore[union-attr]
    assert channel.front_end(client="runs-it").path == "a.ipynb"  # type: ignore[union-attr]
    assert channel.stated("runs-it").path == "a.ipynb"  # type: ignore[union-attr]
    assert channel.front_end(client="unknown").client == "other-tab"  # type: ignore[union-attr]


def test_without_any_front_end_the_fix_names_the_extension(channel: FrontEndChannel) -> None:
    why = channel.why_unseen(None)
    assert "No front end with nbagent's extension answered" in why
    assert "`jupyter labextension enable nbagent-frontend`" in why
    assert "JupyterLab 4.4 or Notebook 7.4 (or newer)" in why and "reload the page" in why
    in_vscode = channel.why_unseen(None, vscode=True)
    assert in_vscode.startswith("VS Code runs no nbagent extension")


def test_a_front_end_that_answered_before_and_not_now_is_named(
    channel: FrontEndChannel,
) -> None:
    channel._on_message(hello())
    channel.open()
    assert channel.front_end() is None
    why = channel.why_unseen(None)
    assert why.startswith("JupyterLab 4.6.6 showed this notebook before but did not answer now")


def test_a_kernel_no_front_end_ever_greeted_waits_for_one_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """VS Code, nbclient, a page without the extension: once a greeting wait has ended with
    no hello, the next %%agent cells do not wait for one, until a front end says hello."""
    monkeypatch.setattr(
        "nbagent.frontend.comm.open_comm", lambda target, on_message: RecordingComm()
    )
    now = [0.0]
    channel = FrontEndChannel(greeting_wait=3600, clock=lambda: now[0])
    channel.open()
    now[0] = 5000.0  # the wait is over, no hello came
    assert channel.front_end() is None
    channel.open()  # the next %%agent cell
    asked = threading.Thread(target=channel.front_end, daemon=True)
    asked.start()
    asked.join(timeout=30)  # it would wait an hour (of a clock that does not move)
    assert not asked.is_alive()
    channel._on_message(hello())
    channel.open()  # once a front end said hello, each comm waits for its greeting again
    asked = threading.Thread(target=channel.front_end, daemon=True)
    asked.start()
    asked.join(timeout=0.5)
    assert asked.is_alive()
    channel._on_message(hello())
    asked.join(timeout=30)
    assert not asked.is_alive()


def answer_requests(channel: FrontEndChannel, **fields: object) -> threading.Thread:
    """Answer the channel's requests with ``fields``, as a front end does on its subshell."""
    comm = channel._comm
    assert isinstance(comm, RecordingComm)

    def serve() -> None:
        while not comm.sent:
            threading.Event().wait(0.01)
        channel._on_message({"id": comm.sent[0]["id"], **fields})

    answering = threading.Thread(target=serve, daemon=True)
    answering.start()
    return answering


def test_a_withdrawn_question_is_shown_by_the_front_end_it_was_asked_on(
    channel: FrontEndChannel,
) -> None:
    channel._on_message(hello(client="runs-it"))
    channel._on_message(hello(client="other-tab"))
    answer_requests(channel, ok=True, shown=True)
    reason = "its call reached its time limit"
    assert channel.show_withdrawn("request-1", "runs-it", reason)
    [sent] = channel._comm.sent  # type: ignore[union-attr]
    assert {k: v for k, v in sent.items() if k != "id"} == {
        "op": "withdrawn",
        "to": "runs-it",
        "request": "request-1",
        "reason": reason,
    }


@pytest.mark.parametrize(
    ("client", "answer"),
    [
        ("a-console", None),  # the question went to a front end without the extension
        ("runs-it", {"ok": True, "shown": False}),  # the page has not seen the request
        ("runs-it", {"ok": False, "error": "unknown request withdrawn"}),  # an older extension
    ],
)
def test_a_withdrawn_question_no_front_end_shows_is_said_so(
    channel: FrontEndChannel, client: str, answer: dict[str, object] | None
) -> None:
    channel._on_message(hello(client="runs-it"))
    if answer is not None:
        answer_requests(channel, **answer)
    assert not channel.show_withdrawn("request-1", client, "the run was stopped")
    assert len(channel._comm.sent) == (answer is not None)  # type: ignore[union-attr]
