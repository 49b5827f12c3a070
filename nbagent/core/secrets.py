r"""Keeping secrets out of everything nbagent shows, saves and logs.

What is a secret:

- by name: the value of an environment variable named like ``*KEY*``, ``*TOKEN*``,
  ``*SECRET*``, ``*PASSWORD*``, ``*PASSWD*``, ``*CREDENTIAL*``, ``*_PAT`` or ``*_DSN``
  (``ANTHROPIC_API_KEY``, ``GH_PAT``, ``SENTRY_DSN``), and any variable's value that is a URL
  with a password (``DATABASE_URL=postgres://u:pw@host/db``), whose password is a secret of its
  own;
- by shape, with no variable: the tokens that `detect-secrets <https://github.com/Yelp/
  detect-secrets>`_ recognises by their format (AWS key ids, GitHub, GitLab, Slack, Stripe,
  npm, PyPI, SendGrid, Twilio, Discord, Telegram, Mailchimp, Square, OpenAI and Azure storage
  keys, JSON Web Tokens, passwords in URLs) and the private key blocks whose header it
  recognises (PEM, OpenSSH, PGP, PuTTY).

Each is replaced by ``[redacted NAME]`` (``[redacted GitHub_Token]`` for a shape) in every form
it takes on the way out: as written; JSON-escaped (once or twice); as Python's ``repr``;
URL-encoded; base64 (standard or URL-safe, alone or inside a longer encoding, such as a Basic
authorization header); HTML- and Markdown-escaped; its newlines written ``\n``, replaced by
spaces or dropped; split over lines (indented, or line-numbered as the Read tool shows a file);
and cut: a secret's first or last 16 characters are redacted too. A value of 8 characters or
more is redacted wherever it appears; a shorter one (3 to 7 characters, neither a number nor a
word like ``true``) only where it stands alone as a value (``PASSWORD=abc12``, not ``xabc12``),
and the password of a URL, however short, where it stands between ``:`` and ``@``.

Every way out calls :func:`redact`: the cell's outputs (:mod:`nbagent.core.markup` redacts every
outside text before escaping it), the transcript, permission questions, error messages, saved
conversations, the tool results the model is sent, and every nbagent logger (:func:`get_logger`).

The forms of the environment's secrets are worked out once, and again only when the secret
values in ``os.environ`` change; recent results are remembered, so a view drawn again costs
little. The shape scan runs a pattern only on a text holding the literal that pattern needs.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from functools import cache, lru_cache
from typing import Any, Literal, NamedTuple
from urllib.parse import quote, quote_plus, unquote

from nbagent.core.secret_shapes import may_hold_shape

ONE_LINE = "one line"
"""Redact tokens found by their shape only within one line (see :func:`redact`)."""

Shapes = bool | Literal["one line"]
"""Which tokens found by their shape are redacted: all, none, or those within one line."""

SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(?:^|_)(?:PAT|DSN)$", re.IGNORECASE
)
"""Environment variable names whose values are secrets."""

MIN_SECRET_LENGTH = 8
"""Values this long are redacted wherever they appear; shorter ones only standing alone."""

MIN_SHORT_LENGTH = 3
"""Shorter values of secret-named variables are not redacted at all."""

NOT_SECRETS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "auto", "default"}
)
"""Short values that are settings, not secrets (``TOKENIZERS_PARALLELISM=false``)."""

FRAGMENT_CHARS = 16
"""A secret's start or end this long is redacted on its own (a secret cut short)."""

_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
"""A URL with a password (the group), as in ``postgres://user:password@host/db``."""

_LINE_NUMBER = re.compile(r"^[ \t]*\d+\t", re.MULTILINE)
"""The line number the Read tool puts before each line."""

_LABEL = re.compile(r"\W+")
"""What a detector's name has between the words of its label (``AWS Access Key``)."""


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Find the secret values in an environment.

    Args:
        environ: The environment; ``os.environ`` by default.

    Returns:
        Each secret value (stripped) and the name of its variable, longest value first.
    """
    # the first variable names it
    found = {value: name for name, value in reversed(_secret_pairs(environ))}
    return {value: found[value] for value in sorted(found, key=lambda value: -len(value))}


def redact(text: str, environ: Mapping[str, str] | None = None, *, shapes: Shapes = True) -> str:
    """Replace every secret in a text, in each of the forms it takes.

    Args:
        text: Any text.
        environ: The environment the secrets come from; ``os.environ`` by default.
        shapes: Also redact tokens recognised by their shape (a text already escaped for
            HTML or Markdown, whose outside parts were redacted before, needs only the
            environment's secrets). :data:`ONE_LINE`: only those within one line, for a
            question: a block over several lines (a private key) stays shown, so that no line
            of what the person approves is hidden.

    Returns:
        The text with each secret replaced by ``[redacted NAME]``.
    """
    if not text:
        return text
    return _redactor(environ).redact(text, shapes)


def redaction_spans(
    text: str, environ: Mapping[str, str] | None = None
) -> list[tuple[int, int, str]]:
    """Where the secrets of a text are (for a caller that keeps offsets into it).

    Args:
        text: Any text.
        environ: The environment the secrets come from; ``os.environ`` by default.

    Returns:
        The start, end and label (``ANTHROPIC_API_KEY``) of each, in order, none overlapping.
    """
    return _redactor(environ).spans(text, True) if text else []


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


def redact_value(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A copy of a JSON-like value (a tool's input) with every string in it redacted.

    Args:
        value: A dict, list, tuple, string or anything else (kept as it is).
        environ: The environment the secrets come from.

    Returns:
        The copy (dict keys are redacted too).
    """
    if isinstance(value, str):
        return redact(value, environ)
    if isinstance(value, Mapping):
        return {redact_value(k, environ): redact_value(v, environ) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, environ) for item in value]
    return value


_UNFINISHED_WORD = re.compile(r"\S+\Z")


def streamable(text: str, environ: Mapping[str, str] | None = None) -> str:
    """The part of a text still streaming in that can be shown now.

    The last word waits for what follows it (a token is recognised by its shape only once it is
    whole), and so does an ending that could be the start of a secret of the environment.

    Args:
        text: The text so far.
        environ: The environment the secrets come from; ``os.environ`` by default.

    Returns:
        The text without its unfinished end.
    """
    word = _UNFINISHED_WORD.search(text)
    end = word.start() if word else len(text)
    return text[: min(end, _redactor(environ).unfinished(text))]


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


# Which variables hold secrets.


def _is_secret(name: str, value: str) -> bool:
    """Whether a variable's (stripped) value is a secret."""
    if _URL_PASSWORD.search(value):
        return True
    return SECRET_NAME.search(name) is not None and (
        len(value) >= MIN_SECRET_LENGTH or _short_secret(value)
    )


def _short_secret(value: str) -> bool:
    """Whether a value shorter than MIN_SECRET_LENGTH can be a secret: not too short, neither
    a number nor a word that is a setting."""
    return len(value) >= MIN_SHORT_LENGTH and not (value.isdigit() or value.lower() in NOT_SECRETS)


def _pairs(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The secret variables of an environment: name and stripped value, in its order."""
    return tuple(
        (name, value.strip())
        for name, value in environ.items()
        if isinstance(value, str) and _is_secret(name, value.strip())
    )


class _Environment:
    """The secret variables of ``os.environ``, worked out again only when it changes.

    ``os.environ`` decodes every variable each time it is read (some 50 µs); its raw mapping
    compares in a microsecond, so a change is seen at once and costs nothing otherwise.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._raw: Any = None
        self._pairs: tuple[tuple[str, str], ...] = ()

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The secret variables now: name and stripped value."""
        raw = getattr(os.environ, "_data", None)
        with self._lock:
            if raw is None or raw != self._raw:
                self._pairs = _pairs(os.environ)
                self._raw = dict(raw) if raw is not None else None
            return self._pairs


_ENVIRONMENT = _Environment()


def _secret_pairs(environ: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """The secret variables of an environment (``os.environ`` when None)."""
    return _ENVIRONMENT.pairs() if environ is None else _pairs(environ)


def _redactor(environ: Mapping[str, str] | None) -> _Redactor:
    """The redactor of an environment (``os.environ`` when None), made once per secrets."""
    return _redactor_of(_secret_pairs(environ))


@lru_cache(maxsize=8)
def _redactor_of(pairs: tuple[tuple[str, str], ...]) -> _Redactor:
    """The redactor of some secret variables (kept while they are in use)."""
    return _Redactor(pairs)


# The forms a secret takes.


def _forms(secret: str) -> set[str]:
    """The ways a text writes a secret: escaped, encoded, its newlines written otherwise."""
    lines = secret.replace("\r\n", "\n")
    forms = {secret, lines.replace("\n", "\\n"), secret.replace("\r", "\\r").replace("\n", "\\n")}
    once = json.dumps(secret)[1:-1]
    forms |= {once, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(once)[1:-1]}
    forms |= {repr(secret)[1:-1], ascii(secret)[1:-1], repr(_bytes(secret))[2:-1]}
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret, safe="")):
        forms |= {encoded, re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)}
    for escaped in (html.escape(secret), html.escape(secret, quote=False)):
        forms |= {escaped, escaped.replace("$", "&#36;").replace("\\", "&#92;")}
    forms.add(html.escape(secret, quote=False).replace('"', "&quot;"))  # markdown-it's
    forms.add(re.sub(r"([\\`*_\[\]<>&$|~#!])", r"\\\1", secret))  # Markdown's
    return {form for form in forms if form.strip()}


def _base64_forms(secret: str) -> set[str]:
    """The base64 of a secret, alone or at any place in a longer encoding.

    Inside a longer text (``user:password``), the secret's bytes fall at one of three places
    of a 3-byte group; each gives other characters, of which those that depend on the secret
    alone are kept.
    """
    data, forms = _bytes(secret), set()
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * shift + data).decode("ascii")
            start, end = -(-8 * shift // 6), 8 * (shift + len(data)) // 6
            forms.add(encoded[start:end])
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def _bytes(text: str) -> bytes:
    """A text's UTF-8 (a lone surrogate too)."""
    return text.encode("utf-8", "surrogatepass")


def _squeezed(text: str) -> str:
    """A text without its whitespace and line numbers: a secret split over lines (indented,
    line-numbered as Read shows a file), or whose newlines became spaces, is whole in it."""
    if "\t" in text:
        text = _LINE_NUMBER.sub("", text)
    return "".join(text.split())


_NOT_SPACE = re.compile(r"\S")


def _kept(text: str) -> list[int]:
    """Where each character of :func:`_squeezed`'s text is in the text."""
    dropped = bytearray(len(text))
    if "\t" in text:
        for number in _LINE_NUMBER.finditer(text):
            dropped[number.start() : number.end()] = b"\1" * (number.end() - number.start())
    return [kept.start() for kept in _NOT_SPACE.finditer(text) if not dropped[kept.start()]]


class _Form(NamedTuple):
    """One form of a secret of 8 characters or more, found wherever it is (in the text
    squeezed, then mapped back)."""

    label: str
    squeezed: str


class _Fragment(NamedTuple):
    """The start (or end) of a form, found when the rest of it was cut off."""

    label: str
    piece: str
    form: str
    start: bool


class _Short(NamedTuple):
    """A short secret, or a URL's password, found only where it stands alone."""

    label: str
    literal: str
    pattern: re.Pattern[str]


class _Redactor:
    """Finds the secrets of one environment in texts (each form prepared once).

    Args:
        pairs: The secret variables: name and value.
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.forms: list[_Form] = []
        self.fragments: list[_Fragment] = []
        self.shorts: list[_Short] = []
        self.starts: list[tuple[str, int]] = []
        """The forms whose start is held back while a text streams in, and how much of the
        form is left to come before it is found whole (or as a fragment)."""
        for name, value in pairs:
            self._add(name, value)
            for password in _URL_PASSWORD.findall(value):
                for secret in {password, unquote(password)}:
                    self._add(name, secret, url_password=True)
        self._memo = _Memo()

    def _add(self, label: str, secret: str, url_password: bool = False) -> None:
        if len(secret) >= MIN_SECRET_LENGTH:
            squeezed = {_squeezed(form) for form in _forms(secret) | _base64_forms(secret)}
            self.forms += [
                _Form(label, form) for form in squeezed if len(form) >= MIN_SECRET_LENGTH
            ]
            for form in {secret, json.dumps(secret)[1:-1]}:
                self.starts.append((form, min(len(form), FRAGMENT_CHARS)))
                if len(form) > FRAGMENT_CHARS:
                    self.fragments.append(_Fragment(label, form[:FRAGMENT_CHARS], form, True))
                    self.fragments.append(_Fragment(label, form[-FRAGMENT_CHARS:], form, False))
            return
        forms = _forms(secret)
        if url_password:
            for form in forms:
                pattern = re.compile(rf"(?<=:){re.escape(form)}(?=@)")
                self.shorts.append(_Short(label, form, pattern))
        if _short_secret(secret):
            for form in forms:
                pattern = re.compile(rf"(?<!\w){re.escape(form)}(?!\w)")
                self.shorts.append(_Short(label, form, pattern))
            self.starts += [(form, len(form)) for form in forms]

    def redact(self, text: str, shapes: Shapes) -> str:
        """The text with its secrets replaced (see :func:`redact`)."""
        remembered = self._memo.get(text, shapes)
        if remembered is not None:
            return remembered
        out, at = [], 0
        for start, end, label in self.spans(text, shapes):
            out += [text[at:start], f"[redacted {label}]"]
            at = end
        redacted = "".join([*out, text[at:]]) if out else text
        self._memo.put(text, shapes, redacted)
        if redacted is not text:
            self._memo.put(redacted, shapes, redacted)
        return redacted

    def spans(self, text: str, shapes: Shapes) -> list[tuple[int, int, str]]:
        """Where the secrets of a text are: start, end and label, merged, in order."""
        found: list[tuple[int, int, str]] = []
        if self.forms:
            squeezed, kept = _squeezed(text), []
            for form in self.forms:
                at = squeezed.find(form.squeezed)
                if at != -1 and not kept:
                    kept = _kept(text)
                while at != -1:
                    found.append((kept[at], kept[at + len(form.squeezed) - 1] + 1, form.label))
                    at = squeezed.find(form.squeezed, at + 1)
            for fragment in self.fragments:
                if fragment.piece in text:
                    found += _fragment_spans(text, fragment)
        for short in self.shorts:
            if short.literal in text:
                found += [(m.start(), m.end(), short.label) for m in short.pattern.finditer(text)]
        if shapes:
            found += [
                span
                for span in _shape_spans(text)
                if shapes is True or "\n" not in text[span[0] : span[1]]
            ]
        return _merged(found)

    def unfinished(self, text: str) -> int:
        """Where an ending of a text that could be the start of a secret begins."""
        end = len(text)
        for form, needed in self.starts:
            at = text.find(form[0], max(0, len(text) - needed + 1))
            while at != -1 and at < end:
                if form.startswith(text[at:]):
                    end = at
                    break
                at = text.find(form[0], at + 1)
        return end


def _fragment_spans(text: str, fragment: _Fragment) -> Iterator[tuple[int, int, str]]:
    """Where a fragment of a form is, stretched over as much more of the form as is there."""
    form, piece = fragment.form, fragment.piece
    at = text.find(piece)
    while at != -1:
        if fragment.start:
            end = at + len(piece)
            while end - at < len(form) and end < len(text) and text[end] == form[end - at]:
                end += 1
            yield at, end, fragment.label
        else:
            end, start = at + len(piece), at
            while (
                end - start < len(form) and start > 0 and text[start - 1] == form[start - end - 1]
            ):
                start -= 1
            yield start, end, fragment.label
        at = text.find(piece, at + 1)


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans as one, named by the longest of them (the first of equals)."""
    merged: list[tuple[int, int, str]] = []
    longest = 0
    for start, end, label in sorted(spans, key=lambda span: span[0]):  # the environment's first
        if merged and start < merged[-1][1]:
            last_start, last_end, last_label = merged[-1]
            if end - start > longest:
                last_label, longest = label, end - start
            merged[-1] = (last_start, max(last_end, end), last_label)
        elif end > start:
            merged.append((start, end, label))
            longest = end - start
    return merged


class _Memo:
    """Recent texts and their redaction (a view drawn again costs a look-up)."""

    MAX_CHARS = 2_000_000
    """Characters kept at most, texts and redactions together."""
    MAX_TEXT = 200_000
    """Longer texts are not kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, bool], str] = OrderedDict()
        self._chars = 0

    def get(self, text: str, shapes: Shapes) -> str | None:
        """A text's redaction, if it was made lately."""
        with self._lock:
            found = self._kept.get((text, shapes))
            if found is not None:
                self._kept.move_to_end((text, shapes))
            return found

    def put(self, text: str, shapes: Shapes, redacted: str) -> None:
        """Keep a text's redaction (the oldest go beyond MAX_CHARS)."""
        if len(text) > self.MAX_TEXT:
            return
        with self._lock:
            if (text, shapes) in self._kept:
                return
            self._kept[(text, shapes)] = redacted
            self._chars += len(text) + len(redacted)
            while self._chars > self.MAX_CHARS:
                (old, _), kept = self._kept.popitem(last=False)
                self._chars -= len(old) + len(kept)


# Secrets by shape: detect-secrets' detectors.

LEFT_OUT_DETECTORS = frozenset(
    {
        "ArtifactoryDetector",  # its password pattern matches words (APE…); matches take spaces
        "Base64HighEntropyString",  # entropy alone: hashes, ids and data
        "HexHighEntropyString",
        "IPPublicDetector",  # an address is no secret
        "KeywordDetector",  # any `password = …` in code
        "CloudantDetector",  # keyword-and-context detectors of IBM services, slow (70 ms per
        "IbmCloudIamDetector",  # 100 kB together) for what they find
        "IbmCosHmacDetector",
        "SoftlayerDetector",
    }
)
"""detect-secrets' detectors not used, and why."""

NEEDED_LITERALS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "aws", "AWS", "Aws"),
    "AzureStorageKeyDetector": ("AccountKey=",),
    "BasicAuthDetector": ("://",),
    "DiscordBotTokenDetector": (".",),
    "GitHubTokenDetector": ("_",),
    "GitLabTokenDetector": ("gl", "GR1348941"),
    "JwtTokenDetector": ("eyJ",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authToken",),
    "OpenAIDetector": ("T3BlbkFJ",),
    "PrivateKeyDetector": ("PRIVATE KEY", "PuTTY-User-Key-File"),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("SG.",),
    "SlackDetector": ("xox", "XOX", "Xox", "hooks.slack.com"),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",),
    "TwilioKeyDetector": ("AC", "SK"),
}
"""A literal every match of a detector holds (one of them): without one in a text, the
detector's patterns are not run on it. A detector not listed always runs."""

NEEDED_PATTERNS = {"TelegramBotTokenDetector": re.compile(r":[0-9A-Za-z_-]{35}")}
"""What every match of a detector holds, where a literal would not say much: the pattern
starts with a literal, so it is found 20 times faster than the detector's own."""

_INERT = re.compile(r"[A-Za-z0-9_.~%+/=:-]+")
"""What a token found by its shape is made of. A match holding anything else is left as it is:
a permission question must not hide a command behind ``[redacted …]``."""

_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_=-]")
"""The characters a token found by its shape is widened over (a key longer than its pattern,
the signature of a JSON Web Token after a dot)."""

_WIDEST = 4096
"""Characters a token is widened over, at most, each side."""


class _Detector(NamedTuple):
    """A detect-secrets detector, with what nbagent needs to run it on a text."""

    plugin: Any
    label: str
    literals: tuple[str, ...]
    needed: re.Pattern[str] | None

    def may_find(self, text: str) -> bool:
        """Whether the text holds what every match of the detector holds."""
        if self.literals and not any(literal in text for literal in self.literals):
            return False
        return self.needed is None or self.needed.search(text) is not None


@cache
def _detectors() -> tuple[_Detector, ...]:
    """detect-secrets' regex detectors, imported on first use (0.2 s, mostly requests)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    return tuple(
        _Detector(
            kind(),
            _LABEL.sub("_", secret_type).strip("_"),
            NEEDED_LITERALS.get(name, ()),
            NEEDED_PATTERNS.get(name),
        )
        for secret_type, kind in sorted(get_mapping_from_secret_type_to_class().items())
        if (name := kind.__name__) not in LEFT_OUT_DETECTORS
        and issubclass(kind, RegexBasedDetector)
    )


def _shape_spans(text: str) -> list[tuple[int, int, str]]:
    """Where the tokens that detect-secrets recognises by their shape are in a text."""
    if len(text) < MIN_SHORT_LENGTH:
        return []
    if _detectors.cache_info().currsize == 0 and not may_hold_shape(text):
        return []  # detect-secrets is imported for the first text that may hold a token
    spans: list[tuple[int, int, str]] = []
    for detector in _detectors():
        if not detector.may_find(text):
            continue
        if type(detector.plugin).__name__ == "PrivateKeyDetector":
            spans += [(s, e, detector.label) for s, e in _key_blocks(text)]
            continue
        valid: Callable[[str], bool] = getattr(detector.plugin, "is_formally_valid", _any)
        for regex in detector.plugin.denylist:
            for match in regex.finditer(text):
                for group in range(1, regex.groups + 1) if regex.groups else (0,):
                    start, end = match.span(group)
                    inert = _inert(text[start:end])
                    if inert and valid(text[start:end]):
                        spans.append((*_widened(text, start, start + len(inert)), detector.label))
    return spans


def _any(value: str) -> bool:
    """Take any match (a detector with no check of its own)."""
    return True


def _inert(value: str) -> str:
    """A match made of token characters only, or its start when that is a token of its own
    (an npm token up to the end of its line); else empty."""
    start = _INERT.match(value)
    if start is None or (start.end() < len(value) and start.end() < MIN_SECRET_LENGTH):
        return ""
    return start.group()


def _widened(text: str, start: int, end: int) -> tuple[int, int]:
    """A token's span stretched over the token characters around it (a dot between two)."""
    low = max(0, start - _WIDEST)
    while start > low and (
        _TOKEN_CHAR.match(text, start - 1)
        or (text[start - 1] == "." and start > 1 and _TOKEN_CHAR.match(text, start - 2))
    ):
        start -= 1
    high = min(len(text), end + _WIDEST)
    while end < high and (
        _TOKEN_CHAR.match(text, end)
        or (text[end] == "." and end + 1 < len(text) and _TOKEN_CHAR.match(text, end + 1))
    ):
        end += 1
    return start, end


_KEY_LINE_START = r"(?:(?:\\r)?(?:\\n|\r?\n)(?:[ \t]*\d+\t)?[ \t]*)+[\"']?"
"""How a line of a key starts: a line break (real, or ``\\n`` in a JSON or Python string), a
Read line number, indentation, a quote."""
_KEY_LINE_END = r"(?:\\n)?[\"']?[ \t]*"
_KEY_LINE_ENDS = r"(?=[ \t]*(?:\\[nr]|[\"',)]|\r|\n|$))"
"""What follows the base64 of a line: its end (a line number or anything else is no key)."""
_KEY_BLOCK = (
    r"-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    rf"(?:{_KEY_LINE_END}{_KEY_LINE_START}[A-Za-z][A-Za-z-]*: ?[A-Za-z0-9 ,._:\"-]*)*"
    rf"{_KEY_LINE_END}{_KEY_LINE_START}[A-Za-z0-9+/=]{{16,}}{_KEY_LINE_ENDS}"
    rf"(?:{_KEY_LINE_END}{_KEY_LINE_START}[A-Za-z0-9+/=]+{_KEY_LINE_ENDS})*"
    rf"(?:{_KEY_LINE_END}{_KEY_LINE_START}-{{4,5}} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
    r" ?-{4,5})?"
)
"""A private key block (PEM, OpenSSH, PGP, SSH2): its header, header fields and base64 lines,
and its end if it is there. detect-secrets recognises the header only."""
_PUTTY_KEY = (
    rf"Private-Lines: *\d+(?:{_KEY_LINE_END}{_KEY_LINE_START}[A-Za-z0-9+/=]+{_KEY_LINE_ENDS})+"
    r"|Private-MAC: *[0-9a-fA-F]+"
)
"""The private part of a PuTTY key file."""


@cache
def _key_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """:data:`_KEY_BLOCK` and :data:`_PUTTY_KEY`, compiled at the first text holding a key's
    header (about 1 ms, which ``%load_ext`` need not pay)."""
    return re.compile(_KEY_BLOCK), re.compile(_PUTTY_KEY)


def _key_blocks(text: str) -> Iterator[tuple[int, int]]:
    """Where the private keys of a text are."""
    key_block, putty_key = _key_patterns()
    for match in key_block.finditer(text):
        yield match.span()
    if "PuTTY-User-Key-File" in text:
        for match in putty_key.finditer(text):
            yield match.span()
