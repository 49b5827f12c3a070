"""Tests of nbagent.secrets: redaction in texts, tool results and logs."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.secrets import RedactingFilter, redact, redact_content, secret_values

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-0123456789",
    "GITHUB_TOKEN": "ghp_abcdefgh",
    "DB_PASSWORD": "hunter2hunter2",
    "HOME": "/root",
    "SHORT_KEY": "abc",
}


def test_secret_values_by_name_and_length() -> None:
    assert secret_values(ENV) == {
        "sk-ant-0123456789": "ANTHROPIC_API_KEY",
        "hunter2hunter2": "DB_PASSWORD",
        "ghp_abcdefgh": "GITHUB_TOKEN",
    }


def test_redact_replaces_every_occurrence() -> None:
    text = "key sk-ant-0123456789 and again sk-ant-0123456789, pw hunter2hunter2, home /root"
    assert redact(text, ENV) == (
        "key [redacted ANTHROPIC_API_KEY] and again "
        "[redacted ANTHROPIC_API_KEY], pw [redacted DB_PASSWORD], "
        "home /root"
    )


@given(st.text(max_size=50), st.text(max_size=50))
def test_no_secret_survives_redaction(before: str, after: str) -> None:
    assert "sk-ant-0123456789" not in redact(before + "sk-ant-0123456789" + after, ENV)


def test_tool_result_blocks_are_redacted_without_changing_the_original() -> None:
    blocks = [{"type": "text", "text": "token ghp_abcdefgh"}, {"type": "image", "source": {}}]
    redacted = redact_content(blocks, ENV)
    assert redacted[0]["text"] == "token [redacted GITHUB_TOKEN]" and redacted[1] == blocks[1]
    assert blocks[0]["text"] == "token ghp_abcdefgh"


def test_logs_are_redacted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SERVICE_SECRET", "s3cr3t-value-42")
    logger = logging.getLogger("nbagent.test-secrets")
    logger.addFilter(RedactingFilter())
    try:
        raise ValueError("failed with s3cr3t-value-42")
    except ValueError:
        logger.exception("call %s", "s3cr3t-value-42")
    assert "s3cr3t-value-42" not in caplog.text
    assert "[redacted SERVICE_SECRET]" in caplog.text


def test_records_of_every_nbagent_logger_are_redacted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Filters on a logger do not see its children's records: each logger has its own."""
    import importlib
    import pkgutil

    import nbagent

    for module in pkgutil.walk_packages(nbagent.__path__, "nbagent."):
        if not module.name.endswith("__main__"):  # that one runs the command line
            importlib.import_module(module.name)
    loggers = {
        name: logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if name.split(".")[0] == "nbagent" and isinstance(logger, logging.Logger)
    }
    assert {"nbagent", "nbagent.mcp", "nbagent.frontend.channel"} <= set(loggers)
    unfiltered = [
        name
        for name, logger in loggers.items()
        if not any(isinstance(f, RedactingFilter) for f in logger.filters)
        and name != "nbagent.test-secrets"
    ]
    assert unfiltered == []
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-0123456789abcdef")
    with caplog.at_level(logging.INFO, logger="nbagent"):
        logging.getLogger("nbagent.mcp").info("server stderr: token glpat-0123456789abcdef")
    assert "glpat-0123456789abcdef" not in caplog.text
    assert "token [redacted GITLAB_TOKEN]" in caplog.text
