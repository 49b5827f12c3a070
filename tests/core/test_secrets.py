"""Tests of nbagent.core.secrets: which values are secrets, the forms they are found in, tokens
found by their shape, streaming, tool results and logs."""

from __future__ import annotations

import base64
import html
import json
import logging
import re
import string
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nbagent.core.secrets import (
    RedactingFilter,
    redact,
    redact_content,
    redact_value,
    redaction_spans,
    secret_values,
    streamable,
)

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-0123456789",
    "GITHUB_TOKEN": "ghp_abcdefgh",
    "DB_PASSWORD": "hunter2hunter2",
    "HOME": "/root",
    "SHORT_KEY": "ab",
}

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "R2d2C3po" * 4 + "BB8x"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1Z1wYhGQpZzl8y7Vd1u3jVXbK\n"
    "q0xKHVkzTQfaC3sl9tRpfWlKqjYKZ6sFOaWxYqM3mY0T2Jk1fDBe8S1Yy0yqBQ==\n"
    "-----END RSA PRIVATE KEY-----"
)
KEY_BODY = PRIVATE_KEY.splitlines()[1]


def test_secret_values_by_name_and_length() -> None:
    assert secret_values(ENV) == {
        "sk-ant-0123456789": "ANTHROPIC_API_KEY",
        "hunter2hunter2": "DB_PASSWORD",
        "ghp_abcdefgh": "GITHUB_TOKEN",
    }


def test_secret_names_and_values_that_are_settings() -> None:
    env = {
        "GH_PAT": "ghp_x1",
        "SENTRY_DSN": "https://abc123@o1.ingest.sentry.io/1",
        "GCP_CREDENTIALS_JSON": "{}-not-empty",
        "DATABASE_URL": "postgres://u:pw@db/sales",
        "HTTPS_PROXY": "http://proxy:3128",
        "PASSWORD": "abc12",
        "TOKENIZERS_PARALLELISM": "false",
        "MAX_TOKENS": "4096",
        "PATH_TO_PAT_FILE": "/tmp/x/y/z",
        "SPARK": "not a secret at all",
    }
    assert set(secret_values(env).values()) == {
        "GH_PAT",
        "SENTRY_DSN",
        "GCP_CREDENTIALS_JSON",
        "DATABASE_URL",
        "PASSWORD",
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


ALPHABETS = st.sampled_from(
    [
        string.ascii_letters + string.digits,
        string.ascii_letters + string.digits + "-_.~+/=",
        "ab&<>$\\\"'\n\t %#|*`[]",
        string.printable,
    ]
)


@st.composite
def secrets(draw: st.DrawFn) -> str:
    """A secret of 8 to 60 characters, of one of several alphabets, or any text."""
    alphabet = draw(ALPHABETS)
    secret = draw(
        st.one_of(
            st.text(alphabet, min_size=8, max_size=60),
            st.text(st.characters(exclude_categories=("Cs",)), min_size=8, max_size=40),
        )
    )
    squeezed = "".join(secret.split())
    assume(secret == secret.strip() and len(squeezed) >= 8)
    assume(squeezed not in "[redacted TEST_SECRET]")
    return secret


def base64_carries(text: str, secret: str) -> bool:
    """Whether any run of base64 in a text decodes to bytes holding the secret's middle."""
    middle = secret.encode("utf-8", "surrogatepass")[2:-2]
    for run in re.findall(r"[A-Za-z0-9+/_-]{4,}", text):
        for start in range(4):
            piece = run[start:]
            piece = piece[: len(piece) - len(piece) % 4]
            decoded = base64.b64decode(piece.replace("-", "+").replace("_", "/") + "==")
            if middle in decoded:
                return True
    return False


ENCODINGS = {
    "json": lambda s: json.dumps({"result": f"says {s} twice {s}"}),
    "json, unicode": lambda s: json.dumps([s], ensure_ascii=False),
    "json in json": lambda s: json.dumps({"stdout": json.dumps({"token": s})}),
    "repr": lambda s: repr({"token": s}),
    "repr of bytes": lambda s: repr(s.encode("utf-8", "surrogatepass")),
    "url": lambda s: "https://example.org/?q=" + quote(s, safe=""),
    "url, plus": lambda s: "q=" + quote_plus(s),
    "html": lambda s: f"<td>{html.escape(s)}</td>",
    "base64": lambda s: base64.b64encode(s.encode("utf-8", "surrogatepass")).decode(),
    "base64, url-safe": lambda s: base64.urlsafe_b64encode(
        s.encode("utf-8", "surrogatepass")
    ).decode(),
    "newlines written \\n": lambda s: s.replace("\n", "\\n"),
    "newlines as spaces": lambda s: s.replace("\n", " "),
    "newlines dropped": lambda s: s.replace("\n", ""),
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secrets(), st.sampled_from(sorted(ENCODINGS)), st.text(max_size=20), st.text(max_size=20))
def test_a_secret_is_redacted_in_every_encoding(
    secret: str, encoding: str, before: str, after: str
) -> None:
    encoded = ENCODINGS[encoding](secret)
    out = redact(before + encoded + after, {"TEST_SECRET": secret})
    assert secret not in out and encoded not in out
    assert "".join(secret.split()) not in "".join(out.split())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secrets(), st.binary(max_size=5), st.binary(max_size=5))
def test_a_secret_inside_a_longer_base64_is_redacted(
    secret: str, before: bytes, after: bytes
) -> None:
    """As in a Basic authorization header: ``base64(user:password)``."""
    data = before + secret.encode("utf-8", "surrogatepass") + after
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        out = redact("Authorization: Basic " + encode(data).decode(), {"TEST_SECRET": secret})
        assert not base64_carries(out, secret)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secrets(), st.lists(st.integers(1, 59), max_size=4), st.sampled_from(["\n", "\r\n", "\n  "]))
def test_a_secret_split_over_lines_is_redacted(secret: str, cuts: list[int], newline: str) -> None:
    pieces, at = [], 0
    for cut in sorted({c for c in cuts if c < len(secret)}):
        pieces.append(secret[at:cut])
        at = cut
    split = newline.join([*pieces, secret[at:]])
    out = redact(f"wrapped:\n{split}\nend", {"TEST_SECRET": secret})
    assert "".join(secret.split()) not in "".join(out.split())


def test_a_secret_split_over_numbered_lines_is_redacted() -> None:
    """As the Read tool shows a file: each line after its number and a tab."""
    secret = "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz"
    shown = f"     1\tkey: {secret[:20]}\n     2\t{secret[20:]}\n     3\tdone"
    assert redact(shown, {"SERVICE_KEY": secret}) == (
        "     1\tkey: [redacted SERVICE_KEY]\n     3\tdone"
    )


def test_a_cut_secret_is_redacted_from_its_start_or_its_end() -> None:
    secret = "sk-ant-api03-" + "Q7w" * 20
    env = {"ANTHROPIC_API_KEY": secret}
    assert redact(f"head {secret[:20]}…", env) == "head [redacted ANTHROPIC_API_KEY]…"
    assert redact(f"…{secret[-17:]} tail", env) == "…[redacted ANTHROPIC_API_KEY] tail"
    assert redact(f"{secret[:15]}…", env) == f"{secret[:15]}…"  # too little to tell


def test_a_url_password_is_redacted_however_short() -> None:
    env = {"DATABASE_URL": "postgres://u:pw@db.internal/sales"}
    assert redact("connecting to postgres://u:pw@db.internal/sales", env) == (
        "connecting to [redacted DATABASE_URL]"
    )
    elsewhere = redact("psql postgresql://u:pw@replica/sales", env)
    assert elsewhere == "psql postgresql://u:[redacted DATABASE_URL]@replica/sales"
    long = {"DATABASE_URL": "postgres://app:Very%2FLong-pass@db/sales"}
    assert redact("password is Very/Long-pass", long) == "password is [redacted DATABASE_URL]"


def test_a_personal_access_token_and_a_dsn_are_secrets() -> None:
    env = {"GH_PAT": GITHUB_TOKEN, "SENTRY_DSN": "https://k3y@o1.ingest.sentry.io/5"}
    assert redact(f"git push https://x:{GITHUB_TOKEN}@github.com", env) == (
        "git push https://x:[redacted GH_PAT]@github.com"
    )
    assert "k3y" not in redact("dsn=https://k3y@o1.ingest.sentry.io/5", env)


def test_a_short_secret_is_redacted_only_where_it_stands_alone() -> None:
    env = {"PASSWORD": "abc12", "TOKENIZERS_PARALLELISM": "false"}
    text = 'PASSWORD=abc12 login("abc12") xabc12 abc12x abc123 false'
    assert redact(text, env) == (
        'PASSWORD=[redacted PASSWORD] login("[redacted PASSWORD]") xabc12 abc12x abc123 false'
    )


@pytest.mark.parametrize(
    ("token", "label"),
    [
        (AWS_KEY_ID, "AWS_Access_Key"),
        (GITHUB_TOKEN, "GitHub_Token"),
        ("glpat-" + "x1Y2z3" * 4, "GitLab_Token"),
        ("xoxb-123456789012-1234567890123-" + "a1b2c3" * 4, "Slack_Token"),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe_Access_Key"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "JSON_Web_Token",
        ),
    ],
)
def test_a_token_is_redacted_by_its_shape(token: str, label: str) -> None:
    text = f"found {token} in the config\n"
    assert redact(text, {}) == f"found [redacted {label}] in the config\n"
    assert redact(json.dumps({"value": token}), {}) == json.dumps({"value": f"[redacted {label}]"})


def test_a_private_key_block_is_redacted_whole() -> None:
    assert redact(f"key:\n{PRIVATE_KEY}\ndone", {}) == "key:\n[redacted Private_Key]\ndone"
    as_json = json.dumps({"private_key": PRIVATE_KEY + "\n"})
    assert KEY_BODY not in redact(as_json, {}) and "END RSA" not in redact(as_json, {})
    numbered = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(PRIVATE_KEY.splitlines(), 1))
    assert redact(numbered, {}) == "     1\t[redacted Private_Key]\n"
    cut = PRIVATE_KEY[:120]
    assert redact(cut, {}) == "[redacted Private_Key]"


def test_what_only_looks_like_a_secret_is_left_alone() -> None:
    text = (
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n'
        "commit 3f786850e387550fdab836ed7e6dc881de23001b\n"
        "uuid 123e4567-e89b-12d3-a456-426614174000\n"
        "https://docs.python.org/3/library/base64.html and user@example.org\n"
        "df.groupby('region')['total'].sum() / AKIA alone"
    )
    assert redact(text, {}) == text


def test_a_shape_that_holds_anything_but_token_characters_is_left_alone() -> None:
    """A permission question must not hide a command behind a redaction."""
    command = "curl https://u:`reboot`@example.org"
    assert redact(command, {}) == command


def test_spans_say_where_the_secrets_are() -> None:
    text = f"a {AWS_KEY_ID} b sk-ant-0123456789"
    assert redaction_spans(text, ENV) == [
        (2, 22, "AWS_Access_Key"),
        (25, 42, "ANTHROPIC_API_KEY"),
    ]


def test_streaming_text_waits_for_its_last_word_and_a_secret_begun() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghij"}
    assert streamable("Here is the key: sk-ant-api03-abc", env) == "Here is the key: "
    assert streamable("Hello wor", env) == "Hello "
    assert streamable("Hello world. ", env) == "Hello world. "
    assert streamable("a key: sk-ant-api03-abcdefghij and s", env) == (
        "a key: sk-ant-api03-abcdefghij and "
    )


def test_tool_result_blocks_are_redacted_without_changing_the_original() -> None:
    blocks = [{"type": "text", "text": "token ghp_abcdefgh"}, {"type": "image", "source": {}}]
    redacted = redact_content(blocks, ENV)
    assert redacted[0]["text"] == "token [redacted GITHUB_TOKEN]" and redacted[1] == blocks[1]
    assert blocks[0]["text"] == "token ghp_abcdefgh"


def test_a_tool_input_is_redacted_everywhere_in_it() -> None:
    value = {"command": "echo sk-ant-0123456789", "env": [{"KEY": "hunter2hunter2"}], "n": 3}
    assert redact_value(value, ENV) == {
        "command": "echo [redacted ANTHROPIC_API_KEY]",
        "env": [{"KEY": "[redacted DB_PASSWORD]"}],
        "n": 3,
    }


def test_the_environment_is_read_again_when_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LATE_TOKEN", raising=False)
    assert redact("late-token-value-1") == "late-token-value-1"
    monkeypatch.setenv("LATE_TOKEN", "late-token-value-1")
    assert redact("late-token-value-1") == "[redacted LATE_TOKEN]"
    monkeypatch.setenv("LATE_TOKEN", "another-value-2")
    assert redact("late-token-value-1") == "late-token-value-1"


def test_logs_are_redacted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SERVICE_SECRET", "s3cr3t-value-42")
    logger = logging.getLogger("nbagent.test-secrets")
    logger.addFilter(RedactingFilter())
    try:
        raise ValueError(f"failed with s3cr3t-value-42 and {AWS_KEY_ID}")
    except ValueError:
        logger.exception("call %s", json.dumps({"k": "s3cr3t-value-42"}))
    assert "s3cr3t-value-42" not in caplog.text and AWS_KEY_ID not in caplog.text
    assert "[redacted SERVICE_SECRET]" in caplog.text
    assert "[redacted AWS_Access_Key]" in caplog.text


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
