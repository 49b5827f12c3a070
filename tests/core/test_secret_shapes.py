"""The check that lets a text skip detect-secrets' import: it must never miss a token."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hypothesis import given
from hypothesis import strategies as st

from nbagent.core import secrets
from nbagent.core.secret_shapes import SHAPE_PATTERNS, may_hold_shape

TOKENS = (
    "ghp_" + "a1B2" * 9,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "xoxb-123456789012-abcdefghij",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "https://user:hunter2secret@example.com/path",
    "sk_live_" + "a" * 24,
    "SG." + "a" * 22 + "." + "b" * 43,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n",
    "123456789:" + "A" * 35,
    "glpat-" + "x" * 20,
    "AC" + "0" * 32,
)
"""Tokens of several shapes the detectors find."""


def test_the_patterns_are_the_ones_detect_secrets_runs() -> None:
    running = {
        type(detector.plugin).__name__: tuple(
            (regex.pattern, regex.flags) for regex in detector.plugin.denylist
        )
        for detector in secrets._detectors()
        if type(detector.plugin).__name__ != "PrivateKeyDetector"
    }
    assert running == SHAPE_PATTERNS


@given(
    st.lists(
        st.sampled_from(TOKENS) | st.text(max_size=40),
        max_size=4,
    ).map(" ".join)
)
def test_a_text_the_check_lets_through_holds_no_token(text: str) -> None:
    found = secrets._shape_spans(text)  # detect-secrets loaded: the full scan
    if not may_hold_shape(text):
        assert found == []
    if found:
        assert may_hold_shape(text)


def test_tokens_are_seen_by_the_check() -> None:
    for token in TOKENS:
        assert may_hold_shape(f"before {token} after"), token


def test_a_plain_text_is_redacted_without_importing_detect_secrets() -> None:
    script = textwrap.dedent(
        """
        import sys
        from nbagent.core.secrets import redact
        plain = "| `NotebookEdit` | built-in | loaded | no | Edit a cell. See https://x.org |"
        assert redact(plain) == plain
        assert "detect_secrets" not in sys.modules
        token = "ghp_" + "a1B2" * 9
        assert token not in redact(f"key {token} here")
        assert "detect_secrets" in sys.modules
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
