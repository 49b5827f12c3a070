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
