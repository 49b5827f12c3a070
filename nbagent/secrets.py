"""Keeping secrets out of what nbagent writes: the notebook, the transcript, logs.

Every nbagent logger comes from :func:`get_logger`, which redacts its records. The values of
environment variables named like ``*KEY*``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*`` (``ANTHROPIC_API_KEY`` among them) are replaced by ``[redacted NAME]``
wherever they appear. Values shorter than 8 characters are left alone: they are not secrets
anyone can recognise, and replacing them would garble ordinary text.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
"""Environment variable names whose values are secrets."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted."""


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Find the secret values in an environment.

    Args:
        environ: The environment; ``os.environ`` by default.

    Returns:
        Each secret value and the name of its variable, longest value first.
    """
    environ = os.environ if environ is None else environ
    found = {
        value: name
        for name, value in environ.items()
        if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH
    }
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace every secret value in a text.

    Args:
        text: Any text.
        environ: The environment the secrets come from; ``os.environ`` by default.

    Returns:
        The text with each secret replaced by ``[redacted NAME]``.
    """
    for value, name in secret_values(environ).items():
        if value in text:
            text = text.replace(value, f"[redacted {name}]")
    return text


def redact_content(content: str | list, environ: Mapping[str, str] | None = None) -> str | list:
    """Redact a tool result's content: a text, or the text of its blocks.

    Args:
        content: A string or a list of API content blocks.
        environ: The environment the secrets come from.

    Returns:
        The content, redacted (blocks are copied, not changed in place).
    """
    if isinstance(content, str):
        return redact(content, environ)
    return [
        {**block, "text": redact(block["text"], environ)}
        if isinstance(block, dict) and isinstance(block.get("text"), str)
        else block
        for block in content
    ]


def get_logger(name: str) -> logging.Logger:
    """Return the logger of an nbagent module, secrets redacted from what it logs.

    A logger's filters apply only to records logged on that very logger, not to those its
    children pass up, so every nbagent logger gets a :class:`RedactingFilter` of its own.

    Args:
        name: The logger's name (``nbagent`` or below).
    """
    logger = logging.getLogger(name)
    if not any(isinstance(f, RedactingFilter) for f in logger.filters):
        logger.addFilter(RedactingFilter())
    return logger


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from records (message and traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; never drops it."""
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
