"""Whether a text may hold a token that detect-secrets recognises by its shape, without it.

Importing detect-secrets takes 0.2 s (mostly ``requests``), and the first text nbagent shows
(``%tools``'s table, the first cell's transcript) would pay for it. Until it is imported, a
text is first searched with the patterns of the detectors :mod:`nbagent.core.secrets` runs, as
detect-secrets 1.5.0 has them (:data:`SHAPE_PATTERNS`; a test checks they are still the ones
it runs) and the literals of the private keys: a text that matches none holds no such token,
and the scan ends there. Once detect-secrets is imported, the scan is as before.
"""

from __future__ import annotations

import functools
import re

SHAPE_PATTERNS: dict[str, tuple[tuple[str, int], ...]] = {
    "AWSKeyDetector": (
        ("(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", re.UNICODE),
        (
            "aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\\'\\\"]([0-9a-zA-Z/+]{40})[\\'\\\"]",
            re.IGNORECASE | re.UNICODE,
        ),
    ),
    "AzureStorageKeyDetector": (("AccountKey=[a-zA-Z0-9+\\/=]{88}", re.UNICODE),),
    "BasicAuthDetector": (
        (
            "://[^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+:([^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+)@",
            re.UNICODE,
        ),
    ),
    "DiscordBotTokenDetector": (
        ("[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}", re.UNICODE),
    ),
    "GitHubTokenDetector": (("(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", re.UNICODE),),
    "GitLabTokenDetector": (
        ("(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)", re.UNICODE),
        ("GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)", re.UNICODE),
        ("glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)", re.UNICODE),
        ("glimt-[A-Za-z0-9_\\-]{25}(?!\\w)", re.UNICODE),
        ("glptt-[A-Za-z0-9_\\-]{40}(?!\\w)", re.UNICODE),
        ("glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)", re.UNICODE),
        ("gloas-[A-Za-z0-9_\\-]{64}(?!\\w)", re.UNICODE),
    ),
    "JwtTokenDetector": (
        ("eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?", re.UNICODE),
    ),
    "MailchimpDetector": (("[0-9a-z]{32}-us[0-9]{1,2}", re.UNICODE),),
    "NpmDetector": (("\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", re.UNICODE),),
    "OpenAIDetector": (("sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", re.UNICODE),),
    "PypiTokenDetector": (
        ("pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", re.UNICODE),
        ("pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", re.UNICODE),
    ),
    "SendGridDetector": (("SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}", re.UNICODE),),
    "SlackDetector": (
        ("xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+", re.IGNORECASE | re.UNICODE),
        (
            "https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
            re.IGNORECASE | re.UNICODE | re.VERBOSE,
        ),
    ),
    "SquareOAuthDetector": (("sq0csp-[0-9A-Za-z\\\\\\-_]{43}", re.UNICODE),),
    "StripeDetector": (("(?:r|s)k_live_[0-9a-zA-Z]{24}", re.UNICODE),),
    "TelegramBotTokenDetector": (("\\d{8,10}:[0-9A-Za-z_-]{35}", re.UNICODE),),
    "TwilioKeyDetector": (
        ("AC[a-z0-9]{32}", re.UNICODE),
        ("SK[a-z0-9]{32}", re.UNICODE),
    ),
}
"""Each detector's patterns and flags, but the private keys' (found by their literals below)."""

KEY_LITERALS = ("PRIVATE KEY", "PuTTY-User-Key-File")
"""What a private key block nbagent redacts holds (one of them)."""


@functools.cache
def _compiled() -> tuple[re.Pattern[str], ...]:
    """:data:`SHAPE_PATTERNS`, compiled."""
    return tuple(
        re.compile(pattern, flags)
        for patterns in SHAPE_PATTERNS.values()
        for pattern, flags in patterns
    )


def may_hold_shape(text: str) -> bool:
    """Whether a detector could find a token in a text (False: it holds none).

    Args:
        text: The text.

    Returns:
        Whether a private key literal or a match of a detector's pattern is in it.
    """
    if any(literal in text for literal in KEY_LITERALS):
        return True
    return any(pattern.search(text) for pattern in _compiled())
