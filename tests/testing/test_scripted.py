"""The offline demo model: what it changes in the process is said, held and undone."""

from __future__ import annotations

import os

import pytest

from nbagent.api.anthropic import default_client
from nbagent.testing import Reply
from nbagent.testing.scripted import OFFLINE_KEY, offline_unless_api_key

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_key")
def test_without_a_key_the_sdk_reaches_the_model_until_it_is_closed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = offline_unless_api_key([Reply.text("Offline hello.")])
    assert model is not None
    try:
        assert os.environ["ANTHROPIC_BASE_URL"] == model.server.url
        assert "ANTHROPIC_BASE_URL now points at it" in capsys.readouterr().out
        answer = default_client().messages.create(
            model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert answer.content[0].text == "Offline hello."
    finally:
        model.close()
    assert not any(name in os.environ for name in KEYS)


@pytest.mark.usefixtures("no_key")
def test_a_second_model_closed_gives_the_first_ones_environment_back() -> None:
    with offline_unless_api_key([]) as first:
        assert first is not None
        with offline_unless_api_key([]) as second:
            assert second is not None and second.server.url != first.server.url
            assert os.environ["ANTHROPIC_BASE_URL"] == second.server.url
        assert os.environ["ANTHROPIC_BASE_URL"] == first.server.url
        assert os.environ["ANTHROPIC_API_KEY"] == OFFLINE_KEY
    assert not any(name in os.environ for name in KEYS)


def test_a_real_key_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert offline_unless_api_key([Reply.text("unused")]) is None
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-real" and "ANTHROPIC_BASE_URL" not in os.environ
